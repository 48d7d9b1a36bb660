// Package regfile opens the files a user names as inputs (a scenario, a
// policy, an alerts file) or outputs (--junit, -o) only when they are
// regular files (an output may not exist yet), and never blocks doing so:
// a FIFO would block the open until a writer (or a reader) appears, a
// device such as /dev/zero never ends, and a folder is not a file. Each of
// those is a *NotRegularError, returned at once, naming the file and what
// it is.
//
// Symbolic links are followed: a link to a regular file is that file, a
// link to a FIFO is refused as one (and the error says it is a link).
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError is a path that names something other than a regular
// file. It was not opened (or, when it was swapped in after the check,
// opened without blocking and closed unread).
type NotRegularError struct {
	Path  string
	Mode  fs.FileMode // the type of what Path leads to
	Link  bool        // Path is a symbolic link to it
	Write bool        // Path was to be written (Create, CheckOut), not read
}

func (e *NotRegularError) Error() string { return e.Path + " " + e.Problem() }

// Problem is the error without the path: "is a FIFO (named pipe), not a
// regular file: not read".
func (e *NotRegularError) Problem() string {
	what := Kind(e.Mode)
	if e.Link {
		what = "a symbolic link to " + what
	}
	if e.Write {
		return "is " + what + ", not a regular file: not written"
	}
	return "is " + what + ", not a regular file: not read"
}

// Kind names a file type for a person: "a FIFO (named pipe)", "a folder".
func Kind(m fs.FileMode) string { return TypeOf(m).Kind }

// Type names a file type for a person, in each of the ways retrylab's
// messages do; which one a message uses is pinned by its tests.
type Type struct {
	Kind  string // with its article: "a FIFO (named pipe)" (NotRegularError)
	Noun  string // bare: "named pipe" (trace's skipped files)
	Brief string // with its article, short: "a FIFO" (chaos's run files)
}

// types are the file types a mode may say, in the order TypeOf tests them
// (a character device is a device too); the last is any other.
var types = [...]struct {
	is func(fs.FileMode) bool
	Type
}{
	{func(m fs.FileMode) bool { return m&fs.ModeNamedPipe != 0 }, Type{"a FIFO (named pipe)", "named pipe", "a FIFO"}},
	{func(m fs.FileMode) bool { return m&fs.ModeSocket != 0 }, Type{"a socket", "socket", "a socket"}},
	{func(m fs.FileMode) bool { return m&fs.ModeCharDevice != 0 }, Type{"a character device", "character device", "a device"}},
	{func(m fs.FileMode) bool { return m&fs.ModeDevice != 0 }, Type{"a device", "device", "a device"}},
	{fs.FileMode.IsDir, Type{"a folder", "folder", "a folder"}},
	{func(m fs.FileMode) bool { return m&fs.ModeSymlink != 0 }, Type{"a symbolic link", "symbolic link", "a symbolic link"}},
	{fs.FileMode.IsRegular, Type{"a regular file", "regular file", "a regular file"}},
	{func(fs.FileMode) bool { return true }, Type{"not a regular file", "special file", "not a regular file"}},
}

// TypeOf is the Type of the file type of m.
func TypeOf(m fs.FileMode) Type {
	for _, t := range types {
		if t.is(m) {
			return t.Type
		}
	}
	panic("unreachable: the last type is any")
}

// Open opens path for reading if it is a regular file, else returns a
// *NotRegularError (or the error of Stat, such as fs.ErrNotExist). It
// checks before opening (Stat) and after (Fstat), and opens with
// O_NONBLOCK where there is one, so a FIFO swapped in between does not
// block either.
func Open(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi.Mode(), false)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, notRegular(path, fi.Mode(), false)
	}
	return f, nil
}

// Create is os.Create for an output path that is a regular file or does
// not exist yet: anything else is a *NotRegularError (Write set), returned
// at once, unopened, for opening a FIFO for writing waits until a reader
// comes, a device takes anything (or, as /dev/full, nothing) and a folder
// is not a file. As Open, it checks before (Stat) and after (Fstat), and
// opens with O_NONBLOCK where there is one. Links are followed.
func Create(path string) (*os.File, error) {
	if err := CheckOut(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|openNonBlock, 0o644)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, notRegular(path, fi.Mode(), true)
	}
	return f, nil
}

// CheckOut returns a *NotRegularError (Write set) when path exists and is
// not a regular file (a link is followed), else nil: for an output that
// is written by renaming a new file over path, which must neither replace
// a FIFO or a device (as root, /dev/null) nor pass for written.
func CheckOut(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // none yet (or unreadable): the write says why it fails
	}
	return notRegular(path, fi.Mode(), true)
}

// ReadFile is os.ReadFile for a regular file (see Open) of at most limit
// bytes: a larger one is an *TooLargeError, read no further than limit+1.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return data, nil
}

// TooLargeError is a file over ReadFile's limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes: not read", e.Path, e.Limit)
}

// notRegular is the *NotRegularError of path, whose target has mode m,
// to be written or read.
func notRegular(path string, m fs.FileMode, write bool) error {
	li, err := os.Lstat(path)
	return &NotRegularError{Path: path, Mode: m.Type(), Link: err == nil && li.Mode()&fs.ModeSymlink != 0, Write: write}
}

// ErrNoWriter is a FIFO that nothing has open for writing and that holds
// no data: reading it would wait for a writer that may never come.
var ErrNoWriter = errors.New("a FIFO (named pipe) that nothing writes to")
