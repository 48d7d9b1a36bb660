package otlp

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Signal is one of OTLP's signals, named as in its URL path (/v1/traces).
type Signal string

// The signals a Receiver accepts.
const (
	Traces  Signal = "traces"
	Logs    Signal = "logs"
	Metrics Signal = "metrics"
)

// Encoding is how an OTLP body is encoded.
type Encoding string

// The encodings of OTLP/HTTP.
const (
	JSON     Encoding = "json"
	Protobuf Encoding = "protobuf"
)

// ErrContentType is returned by EncodingOf for a content type OTLP/HTTP
// does not have.
var ErrContentType = errors.New("unsupported content type")

// EncodingOf returns the encoding a Content-Type header names:
// application/json or application/x-protobuf (parameters ignored).
func EncodingOf(contentType string) (Encoding, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.TrimSpace(strings.ToLower(contentType))
	}
	switch mt {
	case "application/json":
		return JSON, nil
	case "application/x-protobuf", "application/protobuf":
		return Protobuf, nil
	}
	return "", fmt.Errorf("%w %q: OTLP/HTTP sends application/json or application/x-protobuf", ErrContentType, contentType)
}

// Payload is one decoded export: exactly one of its fields is set, as
// Signal says.
type Payload struct {
	Signal  Signal
	Traces  ptrace.Traces
	Logs    plog.Logs
	Metrics pmetric.Metrics
}

// Decode decodes one export request body of signal sig in encoding enc.
// In OTLP/JSON, trace and span ids may be hex (as OTLP says) or base64
// (as the protobuf JSON mapping writes bytes).
func Decode(sig Signal, enc Encoding, body []byte) (Payload, error) {
	p, err := decode(sig, enc, body)
	if err != nil && enc == JSON {
		if hexed, ok := hexIDs(body); ok {
			if p2, err2 := decode(sig, enc, hexed); err2 == nil {
				return p2, nil
			}
		}
	}
	return p, err
}

func decode(sig Signal, enc Encoding, body []byte) (Payload, error) {
	p := Payload{Signal: sig}
	var err error
	switch sig {
	case Traces:
		r := ptraceotlp.NewExportRequest()
		err = unmarshal(enc, body, r.UnmarshalJSON, r.UnmarshalProto)
		p.Traces = r.Traces()
	case Logs:
		r := plogotlp.NewExportRequest()
		err = unmarshal(enc, body, r.UnmarshalJSON, r.UnmarshalProto)
		p.Logs = r.Logs()
	case Metrics:
		r := pmetricotlp.NewExportRequest()
		err = unmarshal(enc, body, r.UnmarshalJSON, r.UnmarshalProto)
		p.Metrics = r.Metrics()
	default:
		return p, fmt.Errorf("unknown signal %q", sig)
	}
	if err != nil {
		return p, fmt.Errorf("decoding OTLP %s as %s: %w", sig, enc, err)
	}
	return p, nil
}

func unmarshal(enc Encoding, body []byte, fromJSON, fromProto func([]byte) error) error {
	if enc == Protobuf {
		return fromProto(body)
	}
	return fromJSON(body)
}

// Items counts the spans, log records or data points of p.
func (p Payload) Items() int {
	switch p.Signal {
	case Traces:
		return p.Traces.SpanCount()
	case Logs:
		return p.Logs.LogRecordCount()
	case Metrics:
		return p.Metrics.DataPointCount()
	}
	return 0
}

// JSON encodes p as OTLP/JSON (the form a Collector's file exporter
// writes, one export per line).
func (p Payload) JSON() ([]byte, error) {
	switch p.Signal {
	case Traces:
		return (&ptrace.JSONMarshaler{}).MarshalTraces(p.Traces)
	case Logs:
		return (&plog.JSONMarshaler{}).MarshalLogs(p.Logs)
	case Metrics:
		return (&pmetric.JSONMarshaler{}).MarshalMetrics(p.Metrics)
	}
	return nil, fmt.Errorf("unknown signal %q", p.Signal)
}

// ParseJSON reads one OTLP/JSON export of any signal (traces, logs or
// metrics: told apart by its top-level key), as a Collector's file
// exporter writes them.
func ParseJSON(line []byte) (Payload, error) {
	s := string(line[:min(len(line), 64<<10)])
	for _, c := range []struct {
		key string
		sig Signal
	}{{`"resourceSpans"`, Traces}, {`"resourceLogs"`, Logs}, {`"resourceMetrics"`, Metrics}} {
		if strings.Contains(s, c.key) {
			return Decode(c.sig, JSON, line)
		}
	}
	return Payload{}, errors.New("not OTLP/JSON: no resourceSpans, resourceLogs or resourceMetrics")
}

// readBody reads at most limit bytes of r, gunzipping when gz; it reports
// tooBig when there were more.
func readBody(r io.Reader, gz bool, limit int64) (body []byte, tooBig bool, err error) {
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, false, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	body, err = io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > limit {
		return nil, true, nil
	}
	return body, false, nil
}

// The ids of spans and log records, and their length in bytes.
var idFields = map[string]int{
	"traceId": 16, "trace_id": 16,
	"spanId": 8, "span_id": 8, "parentSpanId": 8, "parent_span_id": 8,
}

// hexIDs rewrites the trace and span ids of an OTLP/JSON body that are
// base64 (as the protobuf JSON mapping writes bytes, and some exporters
// do) into the hex pdata reads; changed is false when there was none.
func hexIDs(body []byte) (out []byte, changed bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return body, false
	}
	if !rewriteIDs(v) {
		return body, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body, false
	}
	return out, true
}

func rewriteIDs(v any) (changed bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if n, ok := idFields[k]; ok {
				if s, ok := e.(string); ok {
					if h, ok := base64ID(s, n); ok {
						v[k], changed = h, true
						continue
					}
				}
			}
			changed = rewriteIDs(e) || changed
		}
	case []any:
		for _, e := range v {
			changed = rewriteIDs(e) || changed
		}
	}
	return changed
}

// base64ID returns s, an id of n bytes in base64 (standard or URL
// alphabet, padded or not), in hex; ok is false when s is hex already or
// not such an id.
func base64ID(s string, n int) (string, bool) {
	if len(s) == 2*n {
		if _, err := hex.DecodeString(s); err == nil {
			return "", false
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == n {
			return hex.EncodeToString(b), true
		}
	}
	return "", false
}

// Doc is one JSON document of an OTLP/JSON stream (ReadJSON): the lines it
// spans, and its export or why it is not one.
type Doc struct {
	Line, EndLine int
	Payload       Payload
	Err           error
}

// exportStart is how a line that begins an export starts when each
// export is one line (a Collector's file exporter).
var exportStart = [][]byte{[]byte(`{"resourceSpans"`), []byte(`{"resourceLogs"`), []byte(`{"resourceMetrics"`)}

// ReadJSON reads a stream of OTLP/JSON exports and calls each with every
// JSON document in it, in order: one export a line as a Collector's file
// exporter writes them, or documents spanning lines (pretty-printed), or
// both. A document is told by its braces, not by its lines; a line at the
// top level that is not a document is a Doc with Err (its line skipped); a
// document over limit bytes, cut short by the end of the stream or by a
// line that begins an export (see exportStart), likewise. It stops at the
// first error of each or of r.
func ReadJSON(r io.Reader, limit int, each func(Doc) error) error {
	s := &splitter{limit: limit, each: each, line: 1}
	br := bufio.NewReaderSize(r, 64<<10)
	atLineStart := true
	for {
		frag, err := br.ReadSlice('\n')
		if atLineStart && s.depth > 0 && s.begin > 0 {
			if t := bytes.TrimLeft(frag, " \t"); startsExport(t) {
				if e := s.emit(fmt.Errorf("an export cut short (a new one begins on line %d)", s.line)); e != nil {
					return e
				}
			}
		}
		if e := s.feed(frag); e != nil {
			return e
		}
		if len(frag) > 0 {
			atLineStart = frag[len(frag)-1] == '\n'
		}
		if errors.Is(err, io.EOF) {
			if s.depth > 0 {
				if atLineStart && s.line > s.begin {
					s.line-- // the last line ended with its newline
				}
				return s.emit(errors.New("an export cut short by the end of the input"))
			}
			return nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

func startsExport(b []byte) bool {
	for _, k := range exportStart {
		if bytes.HasPrefix(b, k) {
			return true
		}
	}
	return false
}

// splitter cuts a byte stream into top-level JSON documents by their
// braces (strings and escapes respected).
type splitter struct {
	limit       int
	each        func(Doc) error
	line, begin int // the current line; the line the document began on (0: none)
	depth       int
	inStr, esc  bool
	skip        bool // a line at the top level that is not a document
	buf         []byte
	tooBig      bool
}

func (s *splitter) feed(frag []byte) error {
	for i := 0; i < len(frag); i++ {
		c := frag[i]
		if s.depth == 0 {
			if err := s.top(c); err != nil {
				return err
			}
		} else if err := s.inside(c); err != nil {
			return err
		}
		if c == '\n' {
			s.line++
			s.skip = false
		}
	}
	return nil
}

// top reads a byte between documents.
func (s *splitter) top(c byte) error {
	switch {
	case s.skip || c == ' ' || c == '\t' || c == '\r' || c == '\n':
		return nil
	case c == '{' || c == '[':
		s.begin, s.depth, s.buf, s.tooBig = s.line, 1, append(s.buf[:0], c), false
		return nil
	}
	s.skip = true
	return s.each(Doc{Line: s.line, EndLine: s.line, Err: errors.New("not OTLP/JSON: not a JSON object")})
}

// inside reads a byte of a document.
func (s *splitter) inside(c byte) error {
	if !s.tooBig {
		if len(s.buf) >= s.limit {
			s.tooBig, s.buf = true, s.buf[:0]
		} else {
			s.buf = append(s.buf, c)
		}
	}
	switch {
	case s.esc:
		s.esc = false
	case s.inStr:
		s.esc, s.inStr = c == '\\', c != '"'
	case c == '"':
		s.inStr = true
	case c == '{' || c == '[':
		s.depth++
	case c == '}' || c == ']':
		s.depth--
		if s.depth == 0 {
			return s.emit(nil)
		}
	}
	return nil
}

// emit hands the document read so far to each (with err, when it is cut
// short) and goes back to the top level.
func (s *splitter) emit(err error) error {
	d := Doc{Line: s.begin, EndLine: s.line}
	switch {
	case err != nil:
		d.Err = err
	case s.tooBig:
		d.Err = fmt.Errorf("an OTLP/JSON export over %d bytes", s.limit)
	default:
		d.Payload, d.Err = ParseJSON(s.buf)
	}
	s.depth, s.inStr, s.esc, s.begin, s.buf = 0, false, false, 0, s.buf[:0]
	return s.each(d)
}
