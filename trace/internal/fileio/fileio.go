// Package fileio holds what the readers of user-named files (traces,
// alerts files) share: an AsyncReader that a cancel can abandon while its
// goroutine is blocked on a FIFO or a terminal, and Cause, the short reason
// of an I/O error that their messages quote.
package fileio

import (
	"context"
	"errors"
	"io"
)

// Cause returns the innermost message of err ("permission denied").
func Cause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// AsyncReader reads what open returns in a goroutine of its own and hands
// the bytes over through a channel, so that Read returns as soon as ctx is
// done even while the goroutine is blocked in open or Read. The goroutine
// owns its two buffers: nothing it writes can reach a caller's buffer after
// Read has returned.
type AsyncReader struct {
	ctx    context.Context
	done   chan struct{} // closed by Close
	filled chan asyncChunk
	free   chan []byte
	buf    []byte // the buffer cur is in, given back once read
	cur    []byte
	err    error
}

type asyncChunk struct {
	b   []byte
	err error
}

const asyncBufSize = 64 << 10

// NewAsyncReader starts the goroutine that calls open and reads what it
// returns until ctx is done, Close is called or the read ends.
func NewAsyncReader(ctx context.Context, open func() (io.Reader, error)) *AsyncReader {
	a := &AsyncReader{
		ctx:    ctx,
		done:   make(chan struct{}),
		filled: make(chan asyncChunk),
		free:   make(chan []byte, 2),
	}
	a.free <- make([]byte, asyncBufSize)
	a.free <- make([]byte, asyncBufSize)
	go a.run(open)
	return a
}

func (a *AsyncReader) run(open func() (io.Reader, error)) {
	src, err := open()
	if c, ok := src.(io.Closer); ok && err == nil {
		defer c.Close() // a file the goroutine opened; never os.Stdin
	}
	if err != nil {
		select {
		case a.filled <- asyncChunk{err: err}:
		case <-a.ctx.Done():
		case <-a.done:
		}
		return
	}
	for {
		var buf []byte
		select {
		case buf = <-a.free:
		case <-a.ctx.Done():
			return
		case <-a.done:
			return
		}
		n, err := src.Read(buf)
		select {
		case a.filled <- asyncChunk{b: buf[:n], err: err}:
		case <-a.ctx.Done():
			return
		case <-a.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (a *AsyncReader) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		if a.buf != nil {
			a.free <- a.buf[:cap(a.buf)] // never blocks: two buffers, room for two
			a.buf = nil
		}
		if err := a.ctx.Err(); err != nil {
			a.err = err
			return 0, err
		}
		select {
		case c := <-a.filled:
			a.buf, a.cur, a.err = c.b, c.b, c.err
			if len(c.b) == 0 && c.err == nil {
				return 0, nil
			}
		case <-a.ctx.Done():
			a.err = a.ctx.Err()
			return 0, a.err
		}
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// Close lets the goroutine end (at once, or when its blocked call returns)
// and close what it opened.
func (a *AsyncReader) Close() error {
	select {
	case <-a.done:
	default:
		close(a.done)
	}
	return nil
}
