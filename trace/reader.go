package trace

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/retrylab/retrylab/internal/regfile"
)

// StdinName is the path that names standard input, and the name a Reader of
// standard input reports in its errors.
const StdinName = "-"

// LineError is a malformed line: not a JSON object with a string "type".
// Readers report it and go on; Error reads "file:line: reason".
type LineError struct {
	File   string
	Line   int
	Reason string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// RawEvent is one well-formed line as a Reader saw it. Its byte slices point
// into the Reader's buffer: they are valid only until the next call to Next.
type RawEvent struct {
	Line    int    // 1-based line number in the file
	Type    string // the "type" field
	RunID   []byte // the "runId" string's raw contents, nil if absent
	TS      []byte // the "ts" string's raw contents, nil if absent
	Payload []byte // the raw JSON of "payload", nil if absent

	membersSeen bool
}

// Event copies r into an Event, parsing ts when it is RFC 3339.
func (r *RawEvent) Event() Event {
	ev := Event{V: Version, Type: r.Type, RunID: string(r.RunID)}
	if len(r.Payload) > 0 {
		ev.Payload = append(json.RawMessage(nil), r.Payload...)
	}
	if len(r.TS) > 0 {
		if t, err := time.Parse(time.RFC3339Nano, string(r.TS)); err == nil {
			ev.TS = t
		}
	}
	return ev
}

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
	// members, if set, is called with each payload member of an event whose
	// type precedes its payload on the line, during the one scan of the
	// line; such events have RawEvent.membersSeen set.
	members func(typ string) func(key, val []byte) bool
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

// gzipMembers decompresses a gzip file member after member, as gzip -d
// does (cat a.gz b.gz is one valid file), as a stream: memory stays bounded
// whatever the data expands to. What follows the last member must be
// nothing: other data is an ErrGzipTrailingData, not a "corrupt header".
type gzipMembers struct {
	src     *bufio.Reader // zr reads it byte by byte: nothing past a member is consumed
	zr      *gzip.Reader
	members int
	ctx     *context.Context // the Reader's, set after NewReader
}

func (g *gzipMembers) Read(p []byte) (int, error) {
	for {
		n, err := g.zr.Read(p)
		if err != io.EOF {
			return n, err
		}
		// The member ended: another one, the end of the file, or other data.
		next, perr := g.src.Peek(2)
		switch {
		case len(next) == 0 && perr == io.EOF:
			return n, io.EOF
		case len(next) < 2 || next[0] != 0x1f || next[1] != 0x8b:
			if perr != nil && perr != io.EOF {
				return n, perr
			}
			return n, &GzipTrailingDataError{Members: g.members}
		}
		if err := g.zr.Reset(g.src); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // a header cut short
			}
			return n, err
		}
		g.zr.Multistream(false)
		g.members++
		if n > 0 {
			return n, nil
		}
		// Empty members give no bytes: read on (bufio gives up after 100
		// empty reads), but let a cancel stop a file of millions of them.
		if g.members%1024 == 0 && g.ctx != nil && *g.ctx != nil {
			if err := (*g.ctx).Err(); err != nil {
				return 0, err
			}
		}
	}
}

// GzipTrailingDataError is data that is not gzip after the last complete
// member of a gzip file (something appended to it, or zeros after it).
type GzipTrailingDataError struct {
	Members int // complete members read before the data
}

func (e *GzipTrailingDataError) Error() string {
	return fmt.Sprintf("data that is not gzip after the end of the gzip stream (after %d complete member(s))", e.Members)
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

// readError describes an error that stopped reading the trace at path, with
// a hint that fits it. The only compressed input is gzip, so an unexpected
// EOF is a gzip stream cut short: a plain file's last line may lack its
// newline, which is a malformed line, not an error.
// ReadError describes an error a Reader of path returned (not a
// *LineError) the way trace analyze reports it: a truncated or corrupt gzip
// stream says so, with a hint.
func ReadError(path string, err error) *PathError { return readError(path, err) }

func readError(path string, err error) *PathError {
	pe := &PathError{Path: path, Reason: "cannot read: " + cause(err), Err: err,
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
		pe.Reason = "cannot read: corrupt gzip data (" + cause(err) + ")"
		pe.hint = "re-copy the file, or leave it out of the paths to analyze the rest"
	}
	return pe
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
		return &r.ev, nil
	}
}

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

// parseTop checks that line is one JSON object with a string "type" and
// picks out type, runId, ts and payload without allocating (known types are
// interned). It returns a reason when the line is malformed. When members is
// not nil and the type comes before an object payload, members sees each
// payload member as the payload is scanned.
func parseTop(line []byte, ev *RawEvent, members func(typ string) func(key, val []byte) bool) string {
	*ev = RawEvent{}
	b := line
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return "not a JSON object"
	}
	const invalid = "invalid JSON"
	haveType := false
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return invalid
			}
			kend, ok := scanString(b, i)
			if !ok {
				return invalid
			}
			key := b[i+1 : kend-1]
			i = skipWS(b, kend)
			if i >= len(b) || b[i] != ':' {
				return invalid
			}
			i = skipWS(b, i+1)
			var vend int
			if string(key) == "payload" && haveType && members != nil && i < len(b) && b[i] == '{' {
				// The reader of this type's members (nil: none wanted) is
				// chosen once per event, not once per member.
				vend, ok = scanObject(b, i, 1, members(ev.Type))
				ev.membersSeen = ok
			} else {
				vend, ok = scanValue(b, i, 1)
			}
			if !ok {
				return badValue(vend)
			}
			val := b[i:vend]
			switch string(key) {
			case "type":
				if val[0] != '"' {
					return `"type" is not a string`
				}
				ev.Type = internType(val)
				haveType = true
			case "runId":
				if val[0] == '"' {
					ev.RunID = val[1 : len(val)-1]
				}
			case "ts":
				if val[0] == '"' {
					ev.TS = val[1 : len(val)-1]
				}
			case "payload":
				ev.Payload = val
			}
			i = skipWS(b, vend)
			if i >= len(b) {
				return invalid
			}
			if b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if b[i] != '}' {
				return invalid
			}
			i++
			break
		}
	}
	return topEnd(b, i, ev, haveType)
}

// topEnd checks what parseTop found once the object is closed at b[i-1]:
// nothing after it, and a type.
func topEnd(b []byte, i int, ev *RawEvent, haveType bool) string {
	if skipWS(b, i) != len(b) {
		return "trailing data after the JSON object"
	}
	if !haveType {
		return `missing "type"`
	}
	if ev.Type == "" {
		return `empty "type"`
	}
	return ""
}

var internedTypes = func() map[string]string {
	m := make(map[string]string, len(KnownTypes))
	for _, t := range KnownTypes {
		m[t] = t
	}
	return m
}()

// typeSlots is a perfect-enough hash of the known types: a type is found
// by its length and first and last bytes, then one comparison, without
// hashing the whole name (the map stays for the ones that collide).
var typeSlots = func() (t [128]string) {
	for _, k := range KnownTypes {
		if h := typeSlot([]byte(k)); t[h] == "" {
			t[h] = k
		}
	}
	return t
}()

func typeSlot(raw []byte) int {
	if len(raw) == 0 {
		return 0
	}
	return (len(raw)*31 + int(raw[0])*7 + int(raw[len(raw)-1])) & 127
}

func internType(val []byte) string {
	raw := val[1 : len(val)-1]
	if s := typeSlots[typeSlot(raw)]; s == string(raw) && s != "" {
		return s
	}
	if s, ok := internedTypes[string(raw)]; ok {
		return s
	}
	return jsonString(val)
}

// jsonString returns the Go string of a JSON string token (quotes included).
func jsonString(val []byte) string {
	if len(val) < 2 || val[0] != '"' {
		return ""
	}
	return unescapeJSON(val[1 : len(val)-1])
}

// unescapeJSON decodes the escapes of the raw contents of a JSON string,
// leniently: every well-formed escape is decoded (a surrogate pair to its
// rune, a lone surrogate to U+FFFD, as encoding/json does), whatever else
// the string holds. Raw control characters and invalid UTF-8, which
// encoding/json refuses, are kept as they are (the printers make them
// visible), and a malformed escape ("\x", "\u12") is kept as written.
// Decoding all the escapes matters: a key written "\u0073k-ant-..." next
// to a raw control character must reach the redactor as "sk-ant-...".
func unescapeJSON(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return validString(raw)
	}
	return validString(appendUnescaped(make([]byte, 0, len(raw)), raw))
}

// appendUnescaped appends to out the bytes raw stands for, escapes decoded
// as unescapeJSON says (without its UTF-8 repair).
func appendUnescaped(out, raw []byte) []byte {
	for i := bytes.IndexByte(raw, '\\'); i >= 0; i = bytes.IndexByte(raw, '\\') {
		out = append(out, raw[:i]...)
		raw = raw[i:]
		r, n := escapeUnit(raw)
		if n == 0 {
			break
		}
		if r < 0 { // not an escape JSON knows: keep it as written
			out = append(out, raw[:n]...)
		} else {
			out = utf8.AppendRune(out, r)
		}
		raw = raw[n:]
	}
	return append(out, raw...)
}

// escapeUnit decodes the escape that raw starts with (raw[0] == '\\'): the
// rune it stands for (-1: none, keep its n bytes as written) and its length
// n, 0 for a lone backslash at the end. A \uXXXX that is a surrogate takes
// the \uXXXX after it when the two make a pair (n == 12); alone it is
// U+FFFD.
func escapeUnit(raw []byte) (rune, int) {
	if len(raw) < 2 {
		return -1, 0
	}
	if c, ok := simpleEscapes[raw[1]]; ok {
		return rune(c), 2
	}
	r, ok := rune(0), false
	if raw[1] == 'u' {
		r, ok = hex4(raw[2:])
	}
	if !ok {
		return -1, 2
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if len(raw) >= 12 && raw[6] == '\\' && raw[7] == 'u' {
		if r2, ok2 := hex4(raw[8:]); ok2 {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12
			}
		}
	}
	return utf8.RuneError, 6
}

// validString is b as a string with each byte of invalid UTF-8 replaced by
// U+FFFD, as encoding/json decodes it.
func validString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out)
}

// simpleEscapes are JSON's one-character escapes and what they stand for.
var simpleEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 returns the value of the 4 hex digits that b starts with.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// JSONInt returns the value of a JSON number, or of a numeric string,
// rounded to an int64 and clamped to its range: how trace analyze reads an
// integer member, for readers of trace events that must agree with it.
func JSONInt(val []byte) (int64, bool) { return jsonInt(val) }

// jsonInt returns the value of a JSON number token, or of a numeric
// string, rounded to an int64.
func jsonInt(val []byte) (int64, bool) {
	if len(val) >= 2 && val[0] == '"' {
		val = val[1 : len(val)-1]
	}
	if n, ok := smallInt(val); ok {
		return n, true
	}
	if n, err := strconv.ParseInt(string(val), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(val), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(f) {
		return 0, false
	}
	// Converting a float64 outside int64's range is implementation-defined
	// (1e20 became math.MinInt64 on amd64), so clamp first.
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64, true
	case f <= math.MinInt64:
		return math.MinInt64, true
	}
	if f < 0 {
		return int64(f - 0.5), true
	}
	return int64(f + 0.5), true
}

// smallInt parses an optional '-' and 1 to 18 decimal digits (no overflow
// possible), the form of nearly every number in a trace; anything else is
// left to strconv.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func jsonBool(val []byte) bool { return len(val) == 4 && string(val) == "true" }

// maxDepth bounds how deep the arrays and objects of a line's members
// nest: deeper, the line is malformed (tooDeep), so that no line can
// exhaust the stack of its reader.
const maxDepth = 512

// tooDeep is the reason of a line nested deeper than maxDepth: valid JSON
// perhaps, but not read.
var tooDeep = fmt.Sprintf("nested deeper than %d levels (retrylab's bound on the arrays and objects of a line)", maxDepth)

// deepEnd is what scanValue and its kin return as the end of a value
// nested deeper than maxDepth (otherwise 0 when it is not JSON).
const deepEnd = -1

// failEnd is the end a scan gives back when a value inside it failed
// with end.
func failEnd(end int) (int, bool) {
	if end == deepEnd {
		return deepEnd, false
	}
	return 0, false
}

// badValue is the reason of a member whose value failed to scan with end.
func badValue(end int) string {
	if end == deepEnd {
		return tooDeep
	}
	return "invalid JSON"
}

func skipWS(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scanObject scans the object starting at b[i] == '{', calling fn (if not
// nil) with each member's raw key contents and raw value. It returns the
// index after the closing brace.
func scanObject(b []byte, i, depth int, fn func(key, val []byte) bool) (int, bool) {
	if depth > maxDepth {
		return deepEnd, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		kend, ok := scanString(b, i)
		if !ok {
			return 0, false
		}
		key := b[i+1 : kend-1]
		i = skipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipWS(b, i+1)
		vend, ok := scanValue(b, i, depth+1)
		if !ok {
			return failEnd(vend)
		}
		if fn != nil && !fn(key, b[i:vend]) {
			return 0, false
		}
		i = skipWS(b, vend)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

func scanArray(b []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return deepEnd, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		end, ok := scanValue(b, i, depth+1)
		if !ok {
			return failEnd(end)
		}
		i = skipWS(b, end)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// scanValue returns the index just after the JSON value starting at b[i].
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{':
		return scanObject(b, i, depth, nil)
	case c == '[':
		return scanArray(b, i, depth)
	case c == 't':
		return scanLit(b, i, "true")
	case c == 'f':
		return scanLit(b, i, "false")
	case c == 'n':
		return scanLit(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	}
	return 0, false
}

func scanLit(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return 0, false
}

func scanNumber(b []byte, i int) (int, bool) {
	start := i
	if b[i] == '-' {
		i++
	}
	digits := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
		digits++
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			d++
		}
		if d == 0 {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			d++
		}
		if d == 0 {
			return 0, false
		}
	}
	return i, i > start
}

// scanString returns the index after the closing quote of the string at b[i].
func scanString(b []byte, i int) (int, bool) {
	i++
	// Eight bytes at a time (SWAR): a word holds a quote or a backslash when
	// one of its bytes XORed with it is zero.
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		m := hasZero(x^quotes) | hasZero(x^backslashes)
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) / 8
		if b[i] == '"' {
			return i + 1, true
		}
		i += 2 // a backslash: skip the escaped character
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			i++
		}
	}
	return 0, false
}

const (
	quotes      = 0x2222222222222222 // '"' in every byte
	backslashes = 0x5C5C5C5C5C5C5C5C // '\\' in every byte
	lows        = 0x0101010101010101
	highs       = 0x8080808080808080
)

// hasZero has the high bit set in the lowest zero byte of x (and possibly
// in higher bytes after it, which callers ignore: they take the lowest).
func hasZero(x uint64) uint64 { return (x - lows) &^ x & highs }
