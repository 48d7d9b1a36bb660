package provider

import (
	"bytes"
	"io"
	"strings"
)

// SSEEvent is one dispatched server-sent event.
type SSEEvent struct {
	// Event is the event type; "message" when the event had no event field,
	// as the WHATWG spec says.
	Event string
	// Data is the event's data lines joined with "\n" (no trailing newline).
	Data string
	// ID is the last event ID seen on the stream so far (it persists across
	// events, as the spec says).
	ID string
}

// SSEReader parses a text/event-stream following the WHATWG HTML "event
// stream interpretation" rules: lines end with CRLF, LF or CR (a CRLF split
// across reads counts once); a leading UTF-8 BOM is skipped; lines starting
// with ':' are comments; "field: value" loses at most one space after the
// colon; data lines are joined with "\n"; an empty line dispatches the event,
// unless no data field was seen; an id containing NUL is ignored; retry and
// unknown fields are ignored; an event not ended by an empty line when the
// stream ends is discarded. Lines may be of any length.
//
// The reader does not interpret event types: callers skip "ping" and types
// they do not know.
type SSEReader struct {
	r   io.Reader
	buf []byte // unread bytes
	err error  // sticky read error, returned once buf is drained

	started bool // the BOM check has been done
	skipLF  bool // the last line ended with CR: a following LF belongs to it
	line    []byte
	event   string
	data    bytes.Buffer
	hasData bool
	lastID  string
	chunk   []byte
}

// NewSSEReader returns a reader of the event stream r. It reads r in chunks
// and never needs more than one line in memory besides the pending event.
func NewSSEReader(r io.Reader) *SSEReader {
	return &SSEReader{r: r}
}

// Next returns the next dispatched event. At the end of the stream it
// returns io.EOF (a pending, unterminated event is discarded); any other
// error of the underlying reader is returned as is.
func (s *SSEReader) Next() (SSEEvent, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return SSEEvent{}, err
		}
		if ev, ok := s.processLine(line); ok {
			return ev, nil
		}
	}
}

// readLine returns the next complete line without its terminator. The
// returned slice is valid until the next call.
func (s *SSEReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		if len(s.buf) == 0 {
			if err := s.fill(); err != nil {
				return nil, err
			}
			continue
		}
		if !s.started {
			// A BOM may arrive split across reads: look at 3 bytes or the end.
			for len(s.buf) < 3 && s.err == nil {
				s.fillMore()
			}
			s.started = true
			s.buf = bytes.TrimPrefix(s.buf, []byte("\xEF\xBB\xBF"))
			continue
		}
		if s.skipLF {
			s.skipLF = false
			if s.buf[0] == '\n' {
				s.buf = s.buf[1:]
				continue
			}
		}
		i := bytes.IndexAny(s.buf, "\r\n")
		if i < 0 {
			s.line = append(s.line, s.buf...)
			s.buf = s.buf[:0]
			continue
		}
		s.line = append(s.line, s.buf[:i]...)
		if s.buf[i] == '\r' {
			s.skipLF = true
		}
		s.buf = s.buf[i+1:]
		return s.line, nil
	}
}

// fill reads more bytes into an empty buf. It returns the sticky error once
// nothing is left to read.
func (s *SSEReader) fill() error {
	if s.err != nil {
		return s.err
	}
	return s.fillMore()
}

// fillMore appends one read's worth of bytes to buf. When buf is empty it
// reads straight into the reusable chunk, so steady-state parsing does not
// allocate per read.
func (s *SSEReader) fillMore() error {
	if s.err != nil {
		return s.err
	}
	if s.chunk == nil {
		s.chunk = make([]byte, 4096)
	}
	dst := s.chunk
	if len(s.buf) > 0 {
		dst = make([]byte, len(s.chunk))
	}
	for range 100 {
		n, err := s.r.Read(dst)
		if len(s.buf) == 0 {
			s.buf = dst[:n]
		} else {
			s.buf = append(s.buf, dst[:n]...)
		}
		if err != nil {
			s.err = err
			if n == 0 {
				return err
			}
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	s.err = io.ErrNoProgress
	return s.err
}

// processLine applies one line to the pending event and reports whether it
// dispatched one.
func (s *SSEReader) processLine(line []byte) (SSEEvent, bool) {
	if len(line) == 0 {
		return s.dispatch()
	}
	if line[0] == ':' {
		return SSEEvent{}, false
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "event":
		s.event = string(value)
	case "data":
		s.data.Write(value)
		s.data.WriteByte('\n')
		s.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.lastID = string(value)
		}
	}
	return SSEEvent{}, false
}

func (s *SSEReader) dispatch() (SSEEvent, bool) {
	event := s.event
	s.event = ""
	if !s.hasData {
		s.data.Reset()
		return SSEEvent{}, false
	}
	data := strings.TrimSuffix(s.data.String(), "\n")
	s.data.Reset()
	s.hasData = false
	if event == "" {
		event = "message"
	}
	return SSEEvent{Event: event, Data: data, ID: s.lastID}, true
}
