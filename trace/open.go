package trace

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/retrylab/retrylab/internal/regfile"
	"github.com/retrylab/retrylab/trace/internal/fileio"
)

// OpenContext is Open for a reader that gives up when ctx is done: every
// Next then returns an error wrapping ctx.Err(). Standard input and files
// that are not regular (a FIFO, a character device, bash's <(...)) are
// opened and read in a goroutine of their own, so that a read or an open
// that blocks for ever (a pipe nobody writes to) cannot keep Next from
// returning; that goroutine ends with the read, or with the process.
// Regular files are read directly, and ctx is checked once per MiB.
func OpenContext(ctx context.Context, path string) (*Reader, error) {
	if path == StdinName {
		return OpenStream(ctx, StdinName, os.Stdin)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode().IsRegular() {
		r, err := Open(path)
		if err == nil {
			r.ctx = ctx
		}
		return r, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: is a folder", path)
	}
	return openAsync(ctx, path, func() (io.Reader, error) { return os.Open(path) }, strings.HasSuffix(path, ".gz"))
}

// OpenStream is OpenContext for src, named name: a pipe, or standard input
// (read for "-" instead of os.Stdin), read in a goroutine of its own.
func OpenStream(ctx context.Context, name string, src io.Reader) (*Reader, error) {
	return openAsync(ctx, name, func() (io.Reader, error) { return src, nil }, false)
}

// OpenChunk opens the bytes from start to end of the plain (uncompressed)
// trace file at path, a piece cut just after a newline, so that several
// Readers read one large file at once. Its lines are numbered from the
// piece's start; it is read as plain JSONL whatever its first bytes, and
// gives up when ctx is done (checked once per MiB).
func OpenChunk(ctx context.Context, path string, start, end int64) (*Reader, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	r := newPlainReader(io.NewSectionReader(f, start, end-start), path)
	r.closer = append(r.closer, f)
	r.ctx = ctx
	return r, nil
}

// openAsync reads what open returns, named name, through a fileio.AsyncReader;
// wantGzip refuses data that is not gzip.
func openAsync(ctx context.Context, name string, open func() (io.Reader, error), wantGzip bool) (*Reader, error) {
	ar := fileio.NewAsyncReader(ctx, open)
	r, err := NewReader(ar, name)
	if err == nil && wantGzip && len(r.closer) == 0 {
		err = fmt.Errorf("%s: not gzip data although the name ends in .gz", name)
	}
	if err != nil {
		ar.Close()
		return nil, err
	}
	r.ctx = ctx
	r.closer = append(r.closer, ar)
	return r, nil
}
