// The errors of reading traces: a malformed line (LineError), and a path
// that names nothing readable or a file that could not be read to its end
// (PathError, with the next step as its Hint).

package trace

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/retrylab/retrylab/trace/internal/fileio"
)

// LineError is a malformed line: not a JSON object with a string "type".
// Readers report it and go on; Error reads "file:line: reason".
type LineError struct {
	File   string
	Line   int
	Reason string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// ReadError describes an error a Reader of path returned (not a
// *LineError) the way trace analyze reports it, with a hint that fits it: a
// truncated or corrupt gzip stream says so. The only compressed input is
// gzip, so an unexpected EOF is a gzip stream cut short: a plain file's
// last line may lack its newline, which is a malformed line, not an error.
func ReadError(path string, err error) *PathError {
	pe := &PathError{Path: path, Reason: "cannot read: " + fileio.Cause(err), Err: err,
		hint: "check that the file exists and is readable"}
	var corrupt flate.CorruptInputError
	var trailing *GzipTrailingDataError
	switch {
	case errors.As(err, &trailing):
		pe.Reason = "cannot read: " + trailing.Error()
		pe.hint = "re-copy the file, or leave it out of the paths (gzip -dc FILE > FILE.jsonl keeps what precedes that data)"
	case errors.Is(err, io.ErrUnexpectedEOF):
		pe.Reason = "cannot read: the gzip stream is cut short (unexpected EOF): the file is truncated"
		pe.hint = "re-copy the file (or let the run that writes it finish), or leave it out of the paths to analyze the rest"
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.As(err, &corrupt):
		pe.Reason = "cannot read: corrupt gzip data (" + fileio.Cause(err) + ")"
		pe.hint = "re-copy the file, or leave it out of the paths to analyze the rest"
	}
	return pe
}

// PathError is a path given to Discover that names nothing readable as a
// trace, or a trace file that analyze.Run could not read to its end.
type PathError struct {
	Path   string
	Reason string
	Err    error
	hint   string // what to do next, when the default does not fit
}

func (e *PathError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Reason) }

func (e *PathError) Unwrap() error { return e.Err }

// Hint tells the user what to do next.
func (e *PathError) Hint() string {
	if e.hint != "" {
		return e.hint
	}
	return "give run folders, trace files (*.jsonl, *.jsonl.gz), globs, or - for stdin; e.g. retrylab trace analyze runs/"
}
