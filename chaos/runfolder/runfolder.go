package runfolder

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/retrylab/retrylab/internal/regfile"
	"github.com/retrylab/retrylab/trace"
)

// A run folder is the clients' sandbox: what a client leaves there (a
// symbolic link, a FIFO) must not make the runner write outside it. The
// runner's own files are written to a fresh temporary file and renamed into
// place (a rename replaces a link; it never writes through one), and the
// folders it makes are checked to be folders, not links to elsewhere.

// WriteFileAtomic writes data to path through a temporary file in the same
// folder and a rename, so that a link or FIFO a client put at path is
// replaced, never followed, and a reader never sees half a file.
//
// A device at path is an error, never replaced: no client makes one, and a
// path such as /dev/full belongs to the system.
func WriteFileAtomic(path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeDevice != 0 {
		return fmt.Errorf("%s is a device, not a file: not replaced", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// MakeRunSubdir makes the folder dir, whose parent the runner made. A
// symbolic link or any other non-folder a client left at dir is removed
// first (the link itself, not its target): a scenario's files are written
// and scrubbed inside dir, which must not lead out of the run folder.
func MakeRunSubdir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	for range 3 { // a client may race the check; give up after a few tries
		err := os.Mkdir(dir, 0o755)
		if err == nil || !errors.Is(err, fs.ErrExist) {
			return err
		}
		fi, lerr := os.Lstat(dir)
		if lerr != nil {
			continue
		}
		if fi.IsDir() {
			return nil
		}
		if rerr := os.Remove(dir); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return fmt.Errorf("%s is not a folder (mode %v) and cannot be removed: %w", dir, fi.Mode(), rerr)
		}
	}
	return fmt.Errorf("%s: something keeps replacing the folder", dir)
}

// NotRegularError is a run file that is not a regular file: a client left
// a symbolic link, a FIFO, a socket or a device where a file was expected.
// It is not opened.
type NotRegularError struct {
	path string
	kind string // "a symbolic link", "a FIFO", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s: not read", filepath.Base(e.path), e.kind)
}

// OpenRunFile opens a file of a run folder for reading, if it is a regular
// file: a symbolic link is not followed (to a file outside the run folder,
// say) and a FIFO, socket or device is not opened (a FIFO would block for
// ever): each is a *NotRegularError naming it. The check is made both
// before (Lstat) and after the open (with O_NOFOLLOW and O_NONBLOCK, so a
// file swapped in between is caught too, without blocking).
func OpenRunFile(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{path: path, kind: regfile.TypeOf(fi.Mode()).Brief}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		if isLinkErr(err) {
			return nil, &NotRegularError{path: path, kind: regfile.TypeOf(fs.ModeSymlink).Brief}
		}
		return nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, &NotRegularError{path: path, kind: regfile.TypeOf(fi.Mode()).Brief}
	}
	return f, nil
}

// runTrace is a trace.Reader of a file opened by OpenRunFile.
type runTrace struct {
	*trace.Reader
	f *os.File
}

func (r *runTrace) Close() error { return errors.Join(r.Reader.Close(), r.f.Close()) }

// openTrace is trace.Open for a client's trace in a run folder: regular
// files only (see OpenRunFile).
func openTrace(path string) (*runTrace, error) {
	f, err := OpenRunFile(path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".gz") {
		var magic [2]byte
		if n, _ := f.ReadAt(magic[:], 0); n < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
			f.Close()
			return nil, fmt.Errorf("%s: not gzip data although the name ends in .gz", path)
		}
	}
	r, err := trace.NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &runTrace{Reader: r, f: f}, nil
}

// CreateRunFile opens path for appending, creating it: if a client put a
// link, a FIFO or anything but a regular file there, it is removed (a link
// itself, not its target) and the file created anew.
func CreateRunFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|openNoFollow, 0o644)
	if err == nil {
		fi, serr := f.Stat()
		if serr == nil && fi.Mode().IsRegular() {
			return f, nil
		}
		f.Close()
	} else if !isLinkErr(err) && !errors.Is(err, errWouldBlock) {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|openNoFollow, 0o644)
}

// ReadTrace reads the client's trace with trace.Reader (plain or gzip JSONL;
// tracePath+".gz" if tracePath is absent). Malformed lines are skipped and
// returned as "file:line: reason" notes; a missing trace is no events.
func ReadTrace(path string) (evs []trace.Event, notes []string, err error) {
	if path == "" {
		return nil, nil, nil
	}
	r, err := openTrace(path)
	if errors.Is(err, os.ErrNotExist) {
		r, err = openTrace(path + ".gz")
	}
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	bad := 0
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var le *trace.LineError
		if errors.As(err, &le) {
			bad++
			if bad <= maxTraceNotes {
				notes = append(notes, fmt.Sprintf("%s:%d: %s", filepath.Base(le.File), le.Line, le.Reason))
			}
			continue
		}
		if err != nil {
			return evs, notes, err
		}
		evs = append(evs, ev.Event())
	}
	if bad > maxTraceNotes {
		notes = append(notes, fmt.Sprintf("... and %d more malformed lines", bad-maxTraceNotes))
	}
	return evs, notes, nil
}

// maxTraceNotes bounds how many malformed lines a result names.
const maxTraceNotes = 5
