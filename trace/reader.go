package trace

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/retrylab/retrylab/internal/regfile"
)

// StdinName is the path that names standard input, and the name a Reader of
// standard input reports in its errors.
const StdinName = "-"

// MaxLineBytes is the longest line a Reader buffers whole, its newline
// aside. A longer line is read as a stream, without being buffered, so
// memory stays bounded whatever the input (one 100 MB line, a gzip bomb of
// zeros, /dev/zero): it is checked as any line is, and when well formed
// its event holds the last "type", "runId", "ts" and "payload" with every
// string over 64 KiB as its label (see MaxLabelBytes: the first bytes and
// the hash of the whole), every number over 64 bytes as a short one of the
// same value, and a payload cut at about 1 MiB but for the members of the
// payload types.
const MaxLineBytes = 1 << 20

// Reader reads a trace as a stream of lines, one at a time, in constant memory
// (a 256 KiB buffer, plus about 2 MiB once a line is longer than that
// buffer). It reads plain JSONL and gzip-compressed JSONL (detected from the
// magic bytes, whatever the file is called; decompressed as a stream),
// accepts CRLF line ends, skips blank lines and reads a last line without a
// newline. Lines of any length are read (see MaxLineBytes).
//
// Next returns a *LineError for a malformed line; the caller may report it
// and call Next again.
type Reader struct {
	name   string
	br     *bufio.Reader
	closer []io.Closer
	line   int
	long   []byte
	ev     RawEvent
	eof    bool
	// ctx, if set, is checked once per MiB read, so that a huge line or an
	// endless input (/dev/zero) cannot keep Next from noticing a cancel.
	ctx       context.Context
	unchecked int
	// members, if set, is called with each payload member of an event (see
	// ReadMembers); one whose type precedes its payload on the line has
	// them during the one scan of the line (RawEvent.membersSeen).
	members func(typ string) func(key, val []byte)
	bufs    []*bufio.Reader // given back to bufPool by Close
	ll      *longLine       // reads lines longer than MaxLineBytes
	// maxLine and limits, when set (by tests), replace MaxLineBytes and
	// the bounds of longLine.
	maxLine int
	limits  longLimits
}

// bufPool recycles read buffers: analysing thousands of small files
// should not allocate a fresh 256 KiB buffer for each.
var bufPool sync.Pool

func getBuf(r io.Reader) *bufio.Reader {
	if br, ok := bufPool.Get().(*bufio.Reader); ok {
		br.Reset(r)
		return br
	}
	return bufio.NewReaderSize(r, 256<<10)
}

// NewReader returns a Reader of r; name is used in errors. If r starts with
// the gzip magic bytes it is decompressed.
func NewReader(r io.Reader, name string) (*Reader, error) {
	br := getBuf(r)
	rd := &Reader{name: name, br: br}
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		zr.Multistream(false)
		rd.bufs = append(rd.bufs, br)
		rd.br = getBuf(&gzipMembers{src: br, zr: zr, members: 1, ctx: &rd.ctx})
		rd.closer = append(rd.closer, zr)
	}
	return rd, nil
}

// newPlainReader returns a Reader of uncompressed r.
func newPlainReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, br: getBuf(r)}
}

// Open opens the trace at path for reading; "-" is standard input.
// The caller should call Close when finished.
//
// Open never blocks: a regular file is opened as such; a FIFO (bash's
// <(...)) is read only when something has it open for writing or it holds
// data, else the error wraps regfile.ErrNoWriter at once (a plain open
// waited for ever for a writer); a device, a socket or a folder is a
// *regfile.NotRegularError. OpenContext reads those that are named as
// well, in a goroutine an interrupt abandons.
func Open(path string) (*Reader, error) {
	if path == StdinName {
		return NewReader(os.Stdin, StdinName)
	}
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path)
	if err == nil && strings.HasSuffix(path, ".gz") && len(r.closer) == 0 {
		err = fmt.Errorf("%s: not gzip data although the name ends in .gz", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = append(r.closer, f)
	return r, nil
}

// openFile opens path for Open: a regular file, or a FIFO with a writer.
func openFile(path string) (io.ReadCloser, error) {
	f, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) && nr.Mode&fs.ModeNamedPipe != 0 {
		return regfile.OpenPipe(path)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Name returns the name the Reader reports in errors.
func (r *Reader) Name() string { return r.name }

// Close closes what Open opened.
func (r *Reader) Close() error {
	if r.br != nil {
		for _, br := range append(r.bufs, r.br) {
			br.Reset(nil)
			bufPool.Put(br)
		}
		r.br, r.bufs = nil, nil
	}
	var errs []error
	for i := len(r.closer) - 1; i >= 0; i-- {
		errs = append(errs, r.closer[i].Close())
	}
	r.closer = nil
	return errors.Join(errs...)
}

// Next returns the next well-formed event, a *LineError for a malformed
// line, io.EOF at the end, or the error that stopped reading (one wrapping
// the context's error once the Reader's context is done).
func (r *Reader) Next() (*RawEvent, error) {
	for {
		line, last, err := r.readLine()
		if err != nil {
			return nil, err
		}
		line = trimSpace(line)
		if len(line) == 0 {
			continue
		}
		if reason := parseTop(line, &r.ev, r.members); reason != "" {
			if last {
				reason = "truncated last line (no newline at end of file): " + reason
			}
			return nil, &LineError{File: r.name, Line: r.line, Reason: reason}
		}
		r.ev.Line = r.line
		if r.members != nil && !r.ev.membersSeen && len(r.ev.Payload) > 0 && r.ev.Payload[0] == '{' {
			if fn := r.members(r.ev.Type); fn != nil {
				scanObject(r.ev.Payload, 0, 0, fn) // the type came after the payload
			}
		}
		return &r.ev, nil
	}
}

// ReadMembers has Next hand each member of an event's object payload to
// the function members returns for the event's type (nil: none of that
// type's are wanted), as the raw contents of its key and its raw JSON
// value, valid until the next call to Next. They are read during the one
// scan of the line when the type precedes the payload (as a Writer writes
// it), in a second scan of the payload otherwise. members is called once
// per event, not once per member. A line may turn out malformed after some
// of its members were handed over: Next then returns its *LineError, and
// what they gave should be dropped.
func (r *Reader) ReadMembers(members func(typ string) func(key, val []byte)) { r.members = members }

// Lines returns the number of the last line read (blank and malformed
// lines count): once Next has returned io.EOF, the lines of the input.
func (r *Reader) Lines() int { return r.line }

// readLine returns the next line without its '\n'. last is true for a final
// line that had no '\n'. A line longer than MaxLineBytes is read as a
// stream and its bounded form returned (see longLine), or a *LineError.
func (r *Reader) readLine() (line []byte, last bool, err error) {
	if r.eof || r.br == nil {
		return nil, false, io.EOF
	}
	r.long = r.long[:0]
	r.skipEmptyLines()
	maxLine := MaxLineBytes
	if r.maxLine > 0 {
		maxLine = r.maxLine
	}
	for {
		b, err := r.br.ReadSlice('\n')
		if cerr := r.checkCtx(len(b)); cerr != nil {
			return nil, false, cerr
		}
		switch {
		case err == nil:
			if len(r.long)+len(b)-1 > maxLine {
				r.long = append(r.long, b[:len(b)-1]...)
				return r.longLine(true, false)
			}
			r.line++
			if len(r.long) > 0 {
				r.long = append(r.long, b...)
				b = r.long
			}
			return b[:len(b)-1], false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if cap(r.long) == 0 { // growing it 256 KiB at a time cost three times its size
				r.long = make([]byte, 0, MaxLineBytes+len(b)+1)
			}
			r.long = append(r.long, b...)
			if len(r.long) > maxLine {
				return r.longLine(false, false)
			}
		case errors.Is(err, io.EOF):
			r.eof = true
			r.long = append(r.long, b...)
			if len(r.long) > maxLine {
				return r.longLine(true, true)
			}
			if len(r.long) == 0 {
				return nil, false, io.EOF
			}
			r.line++
			return r.long, true, nil
		default:
			return nil, false, fmt.Errorf("%s: %w", r.name, err)
		}
	}
}

// longLine reads the line longer than MaxLineBytes that r.long begins
// (holds, when whole).
func (r *Reader) longLine(whole, last bool) ([]byte, bool, error) {
	line, reason, blank, last, err := r.readLong(r.long, whole, last)
	switch {
	case err != nil:
		return nil, false, err
	case reason != "":
		return nil, false, &LineError{File: r.name, Line: r.line, Reason: reason}
	case blank:
		return nil, false, nil
	}
	return line, last, nil
}

// skipEmptyLines skips the empty lines at the start of the buffered data
// in one go, counting them: a gigabyte of newlines took a call of
// ReadSlice per byte (15 s).
func (r *Reader) skipEmptyLines() {
	buf, _ := r.br.Peek(r.br.Buffered())
	n := 0
	for n < len(buf) && buf[n] == '\n' {
		n++
	}
	if n > 1 { // one is as fast through ReadSlice
		r.br.Discard(n)
		r.line += n
		r.unchecked += n
	}
}

// checkCtx counts n more bytes read and, once per MiB, returns the error of
// the Reader's context if it is done.
func (r *Reader) checkCtx(n int) error {
	r.unchecked += n
	if r.unchecked < 1<<20 || r.ctx == nil {
		return nil
	}
	r.unchecked = 0
	if err := r.ctx.Err(); err != nil {
		return fmt.Errorf("%s: stopped reading: %w", r.name, context.Cause(r.ctx))
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}
