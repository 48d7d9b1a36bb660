package trace

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// OpenContext is Open for a reader that gives up when ctx is done: every
// Next then returns an error wrapping ctx.Err(). Standard input and files
// that are not regular (a FIFO, a character device, bash's <(...)) are
// opened and read in a goroutine of their own, so that a read or an open
// that blocks for ever (a pipe nobody writes to) cannot keep Next from
// returning; that goroutine ends with the read, or with the process.
// Regular files are read directly, and ctx is checked once per MiB.
func OpenContext(ctx context.Context, path string) (*Reader, error) {
	return openContext(ctx, path, nil)
}

// openContext is OpenContext reading stdin (nil: os.Stdin) for "-".
func openContext(ctx context.Context, path string, stdin io.Reader) (*Reader, error) {
	if path == StdinName {
		if stdin == nil {
			stdin = os.Stdin
		}
		return openStream(ctx, StdinName, stdin)
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

// openStream reads src, named name, in a goroutine of its own (see
// OpenContext).
func openStream(ctx context.Context, name string, src io.Reader) (*Reader, error) {
	return openAsync(ctx, name, func() (io.Reader, error) { return src, nil }, false)
}

// openAsync reads what open returns, named name, through an asyncReader;
// wantGzip refuses data that is not gzip.
func openAsync(ctx context.Context, name string, open func() (io.Reader, error), wantGzip bool) (*Reader, error) {
	ar := newAsyncReader(ctx, open)
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

// asyncReader reads what open returns in a goroutine of its own and hands
// the bytes over through a channel, so that Read returns as soon as ctx is
// done even while the goroutine is blocked in open or Read. The goroutine
// owns its two buffers: nothing it writes can reach a caller's buffer after
// Read has returned.
type asyncReader struct {
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

func newAsyncReader(ctx context.Context, open func() (io.Reader, error)) *asyncReader {
	a := &asyncReader{
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

func (a *asyncReader) run(open func() (io.Reader, error)) {
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

func (a *asyncReader) Read(p []byte) (int, error) {
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
func (a *asyncReader) Close() error {
	select {
	case <-a.done:
	default:
		close(a.done)
	}
	return nil
}
