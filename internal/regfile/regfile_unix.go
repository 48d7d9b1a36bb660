//go:build unix

package regfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// openNonBlock keeps an open of a FIFO from waiting for a writer.
const openNonBlock = syscall.O_NONBLOCK

// OpenPipe opens the FIFO or pipe at path (bash's <(...), /dev/stdin
// when it is a pipe) for reading without waiting: when nothing has it
// open for writing and nothing is buffered in it, it returns an error
// wrapping ErrNoWriter at once. Otherwise reads wait for the writer as
// usual (through Go's poller, so Close ends a blocked Read).
func OpenPipe(path string) (io.ReadCloser, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		syscall.Close(fd)
		return nil, fmt.Errorf("%s: not a FIFO or pipe", path)
	}
	buf := make([]byte, 4096)
	var n int
	for {
		n, err = syscall.Read(fd, buf)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil && n == 0:
		// POSIX: an empty FIFO with no writer reads end-of-file; with a
		// writer, EAGAIN.
		syscall.Close(fd)
		return nil, fmt.Errorf("%s: %w", path, ErrNoWriter)
	case errors.Is(err, syscall.EAGAIN):
		n = 0
	case err != nil:
		syscall.Close(fd)
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	return &pipeReader{Reader: io.MultiReader(bytes.NewReader(buf[:n]), f), f: f}, nil
}

type pipeReader struct {
	io.Reader
	f *os.File
}

func (p *pipeReader) Close() error { return p.f.Close() }
