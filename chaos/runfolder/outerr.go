package runfolder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/retrylab/retrylab/internal/regfile"
)

// OutputError says that something retrylab must write could not be
// written: What names it for the user ("--out", "--junit", "summary.json"),
// Path is where. Hint says what to do, from the cause (a full disk, a
// read-only folder, a file where a folder should be...).
type OutputError struct {
	What string
	Path string
	Err  error
}

func (e *OutputError) Error() string {
	var err any = e.Err
	var pe *fs.PathError
	var nr *regfile.NotRegularError
	switch {
	case errors.As(e.Err, &nr):
		err = nr.Problem() // the path is said already
	case errors.As(e.Err, &pe):
		err = pe.Err
	}
	if e.What == e.Path || e.What == "" {
		return fmt.Sprintf("cannot write %s: %v", e.Path, err)
	}
	return fmt.Sprintf("cannot write %s (%s): %v", e.What, e.Path, err)
}

func (e *OutputError) Unwrap() error { return e.Err }

// Hint says how to fix the error.
func (e *OutputError) Hint() string {
	elsewhere := "write elsewhere"
	if e.What != "" && e.What[0] == '-' {
		elsewhere = "give " + e.What + " another path"
	}
	var nr *regfile.NotRegularError
	switch {
	case errors.As(e.Err, &nr) && !nr.Mode.IsDir():
		return e.Path + " is " + regfile.Kind(nr.Mode) + ", which would block or swallow the output: " + elsewhere +
			" (a regular file, or none yet)"
	case errors.As(e.Err, &nr), errors.Is(e.Err, syscall.EISDIR):
		return e.Path + " is a folder: give a file path"
	case errors.Is(e.Err, syscall.ENOSPC), errors.Is(e.Err, syscall.EDQUOT):
		return "the disk (or your quota) is full: free space on it, or " + elsewhere
	case errors.Is(e.Err, syscall.EMFILE), errors.Is(e.Err, syscall.ENFILE):
		return InfraHint
	case errors.Is(e.Err, syscall.EROFS), errors.Is(e.Err, fs.ErrPermission):
		return "that place is not writable for you: " + elsewhere
	case errors.Is(e.Err, syscall.ENOTDIR), errors.Is(e.Err, fs.ErrExist):
		return "a file stands where a folder is needed: " + elsewhere
	case errors.Is(e.Err, fs.ErrNotExist):
		return "create the folder it goes in first, or " + elsewhere
	}
	return elsewhere
}

// InfraHint is the hint of an infrastructure error of a run: a resource
// of this machine or the proxy failed, not the client under test.
const InfraHint = "lower --parallel, raise ulimit -n, or check the toxiproxy server"

// CheckOutDir makes sure that run folders can be written under dir (chaos
// run's --out), before anything runs: it creates dir and a file in it.
func CheckOutDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &OutputError{What: "--out", Path: dir, Err: err}
	}
	f, err := os.CreateTemp(dir, ".retrylab-probe-*")
	if err != nil {
		return &OutputError{What: "--out", Path: dir, Err: err}
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return &OutputError{What: "--out", Path: dir, Err: err}
	}
	return nil
}

// CreateOutFile creates (or truncates) the file path for what (a flag
// such as "--junit"), so that a bad path is reported before a run, not
// after it. Its folder must exist. A FIFO, a device, a socket or a folder
// at path is refused at once, never opened (see regfile.Create).
func CreateOutFile(what, path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, &OutputError{What: what, Path: path, Err: &fs.PathError{Op: "open", Path: path, Err: syscall.EISDIR}}
	}
	f, err := regfile.Create(path)
	if err != nil {
		return nil, &OutputError{What: what, Path: path, Err: err}
	}
	return f, nil
}

// CheckOutFile makes sure, before anything runs, that the file path can
// be written for what (a flag such as "--policy-out") by WriteFileAtomic
// at the end: nothing but a regular file stands there (a FIFO, a device,
// a socket, a folder, or a link to one, is refused: a rename would
// replace it), and its folder exists and takes a new file.
func CheckOutFile(what, path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return &OutputError{What: what, Path: path, Err: &fs.PathError{Op: "open", Path: path, Err: syscall.EISDIR}}
	}
	if err := regfile.CheckOut(path); err != nil {
		return &OutputError{What: what, Path: path, Err: err}
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".retrylab-probe-*")
	if err != nil {
		return &OutputError{What: what, Path: path, Err: err}
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return &OutputError{What: what, Path: path, Err: err}
	}
	return nil
}

// OutputErr wraps err, from writing path, as an *OutputError (nil stays nil).
func OutputErr(what, path string, err error) error {
	if err == nil {
		return nil
	}
	var oe *OutputError
	if errors.As(err, &oe) {
		return err
	}
	if what == "" {
		what = filepath.Base(path)
	}
	return &OutputError{What: what, Path: path, Err: err}
}

// InfraError is a failure of the run's infrastructure, not of the client
// under test: the file-descriptor limit reached (EMFILE, ENFILE), or the
// proxy failing.
type InfraError struct{ Err error }

func (e *InfraError) Error() string { return "infrastructure error: " + e.Err.Error() }

func (e *InfraError) Unwrap() error { return e.Err }

// Hint says how to fix the error.
func (e *InfraError) Hint() string { return InfraHint }

// IsInfraErr reports whether err comes from a resource limit of this
// machine rather than from what the client met.
func IsInfraErr(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
