// Package wire renders the mock server's responses as raw HTTP/1.1 bytes, in
// the wire formats of the real APIs (one file each, behind Format; see
// format.go): event streams, JSON answers and error bodies with the headers
// the real APIs send.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The mock writes the wire format itself (instead of going through net/http's
// ResponseWriter) for three reasons: the bytes are exact and golden-tested;
// the header length is known, so a drop fault can cut the body at an exact
// offset with Toxiproxy's limit_data, which counts header bytes too; and after
// the last byte the mock half-closes and waits for the proxy to close, which
// tells it when the client saw the end of the attempt.
//
// Streams use chunked transfer encoding with one chunk per SSE event, as the
// real APIs do over HTTP/1.1, so a stream cut short is an unexpected EOF to an
// HTTP client rather than a clean end.

// DefaultText is the deterministic assistant text of every successful stream.
// It is long enough (about 1.5 KB) that a drop after a few hundred bytes lands
// in the middle of the content_block_delta events.
const DefaultText = "Retries are a contract between a client and a provider. " +
	"When the provider is overloaded it answers 529, and a careful client waits, " +
	"doubling the wait each time, before it tries again. When the provider says " +
	"how long to wait with a Retry-After header, the client honours it, because the " +
	"provider knows its own queue better than any backoff formula. When a stream " +
	"breaks in the middle, the client starts the response again from the beginning " +
	"and never stitches two partial answers together. When the error is the " +
	"client's own fault, such as a malformed request or an invalid key, retrying " +
	"only wastes time and money, so the client stops at once and says why. Jitter " +
	"spreads retries of many clients so that they do not arrive together and knock " +
	"the provider over a second time. A retry budget caps the extra load that " +
	"retries may add across a whole process. Escalation moves a stubborn request " +
	"to a stronger model only after the cheaper one has had its fair number of " +
	"tries. Every attempt, every wait and every switch is written to a trace, so " +
	"that an engineer can see afterwards exactly what happened and why, and so " +
	"that a test harness can check that the client did precisely what its policy " +
	"promised. This sentence exists only to make the stream long enough to cut."

// mockDeltas splits text into the text_delta pieces of a stream: groups of
// six words, each keeping its trailing space.
func mockDeltas(text string) []string {
	words := strings.SplitAfter(text, " ")
	var out []string
	for i := 0; i < len(words); i += 6 {
		out = append(out, strings.Join(words[i:min(i+6, len(words))], ""))
	}
	return out
}

// text is the assistant text of a success: the fault's text when it sets
// one (a response the client's validation may reject), else DefaultText.
func (p Params) text() string {
	if p.Fault.Text != "" {
		return p.Fault.Text
	}
	if p.WantsJSON {
		return "{}"
	}
	return DefaultText
}

// outputTokens is the usage.output_tokens a success reports: one per word
// of its text.
func (p Params) outputTokens() int { return len(strings.Fields(p.text())) }

// OutputTokens is the output tokens a success's usage reports: what the
// mock's provider account charges for the answer.
func (p Params) OutputTokens() int { return p.outputTokens() }

// Response is a rendered HTTP response: the head (status line and headers,
// up to and including the blank line) and the body pieces. When chunked,
// each piece is sent as one chunk and the body ends with the last-chunk
// marker; otherwise the single piece carries Content-Length.
type Response struct {
	Status  int
	Head    []byte
	Pieces  [][]byte
	Chunked bool
	// Keepalive is the format's keepalive event (Format.Keepalive) for an
	// event stream, nil for a JSON answer, which has none: what a stalled
	// stream sends while it sends nothing else.
	Keepalive []byte
	// Tokens[i] are the output tokens of the answer's text that piece i
	// carries (one per word, as its usage counts them); nil for an error.
	Tokens []int
}

// PieceTokens returns the output tokens piece i carries (Tokens), 0 when
// none is known.
func (r *Response) PieceTokens(i int) int {
	if i < 0 || i >= len(r.Tokens) {
		return 0
	}
	return r.Tokens[i]
}

// pieceTokens finds each text delta, in order, in the events that carry
// it and counts its words there.
func pieceTokens(events, deltas []string) []int {
	out := make([]int, len(events))
	k := 0
	for i, e := range events {
		if k >= len(deltas) {
			break
		}
		q := jsonString(deltas[k])
		if strings.Contains(e, q[1:len(q)-1]) {
			out[i] = len(strings.Fields(deltas[k]))
			k++
		}
	}
	return out
}

// Wire returns the piece i as it goes on the wire.
func (r *Response) Wire(i int) []byte {
	if !r.Chunked {
		return r.Pieces[i]
	}
	p := r.Pieces[i]
	b := make([]byte, 0, len(p)+12)
	b = strconv.AppendInt(b, int64(len(p)), 16)
	b = append(b, "\r\n"...)
	b = append(b, p...)
	return append(b, "\r\n"...)
}

// Trailer is what follows the last piece on the wire.
func (r *Response) Trailer() []byte {
	if r.Chunked {
		return []byte("0\r\n\r\n")
	}
	return nil
}

// Bytes returns the whole response as it goes on the wire.
func (r *Response) Bytes() []byte {
	var b bytes.Buffer
	b.Write(r.Head)
	for i := range r.Pieces {
		b.Write(r.Wire(i))
	}
	b.Write(r.Trailer())
	return b.Bytes()
}

// WireOffset returns how many wire bytes after the head carry the first n
// bytes of the decoded body (chunk framing included, the chunk that holds the
// n-th byte cut right after it).
func (r *Response) WireOffset(n int) int {
	off := 0
	for i, p := range r.Pieces {
		frame := len(r.Wire(i)) - len(p) - 2 // size line before the data
		if !r.Chunked {
			frame = 0
		}
		if n <= len(p) {
			return off + frame + n
		}
		n -= len(p)
		off += len(r.Wire(i))
	}
	return off + len(r.Trailer())
}

// Header is one response header, sent with its name exactly as written.
type Header struct{ Name, Value string }

// renderHead renders the status line and headers.
func renderHead(status int, hs []Header) []byte {
	var b bytes.Buffer
	text := http.StatusText(status)
	switch status {
	case 529:
		text = "Overloaded"
	case 0:
		status = 200
		text = "OK"
	}
	if text == "" {
		text = "Status " + strconv.Itoa(status)
	}
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, text)
	for _, h := range hs {
		b.WriteString(h.Name)
		b.WriteString(": ")
		b.WriteString(h.Value)
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// Params is what varies between two responses of the mock.
type Params struct {
	Format    Format
	Model     string
	RequestID string
	Now       time.Time
	Fault     Fault
	// Asks is what the request asked of the answer's shape.
	Asks
	// Models are the scenario's models (its model, escalation ladder and
	// fallbacks), listed by a model-list side request.
	Models []string
	// KeepAlive is set when the response is meant to be cut on its way to
	// the client (a drop, raw toxics): it is then sent Connection:
	// keep-alive, as the real APIs send, instead of close. Node's fetch
	// (undici, under both official SDKs) takes EOF on a Connection: close
	// response for the end of the message even mid-chunk, so with close a
	// dropped stream would look short but clean to it.
	KeepAlive bool
	// RateLimit, when the scenario has limits:, is the account's state
	// the answer reports (ratelimit.go); nil: the format's fixed headers.
	RateLimit *RateLimit
}

// Fault is what shapes a response beyond a plain success.
type Fault struct {
	Status     int               // an error response's status; 0 for a success
	RetryAfter *string           // its retry-after header, as written
	ErrorType  string            // its body's error.type (default: the one the status has)
	Code       string            // its body's error.code where the format has one (OpenAI, Responses; default: ErrorType, else the status's)
	Message    string            // its body's error.message (default: the type's usual one)
	Headers    map[string]string // extra headers, as written
	SSEError   *SSEError         // a 200 stream that ends with an error event
	Context    *ContextLength    // a context-overflow error: the format's own body (contextlength.go)
	Truncate   *Cut              // a 200 that ends early without its closing events (cut.go)
	Malformed  *Cut              // a 200 with one event, or a body, whose JSON is cut (cut.go)
	Text       string            // a success's assistant text ("" = DefaultText)
}

// SSEError ends a 200 stream after AfterEvents events with an SSE error
// event.
type SSEError struct {
	AfterEvents int
	Type        string // error.type (default overloaded_error)
	Message     string // error.message
}

// jsonString marshals v without HTML escaping, for event data.
func jsonString(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// mockID is a message or completion id derived from the attempt's request id,
// so that the two can be matched in the journal.
func mockID(prefix string, p Params) string {
	return prefix + strings.TrimPrefix(p.RequestID, "req_mock")
}

// inputTokens is the usage's input tokens of every answer of the mock.
const inputTokens = 25

// sseErrorType and sseErrorMessage are an sseError fault's error type
// (overloaded_error unless the scenario names another) and message (the
// type's usual one unless the scenario gives one).
func sseErrorType(f *SSEError) string {
	if f.Type == "" {
		return "overloaded_error"
	}
	return f.Type
}

func sseErrorMessage(f *SSEError) string {
	if f.Message == "" {
		return defaultMessage(sseErrorType(f))
	}
	return f.Message
}

// defaultMessage is the error.message sent when the scenario gives none.
func defaultMessage(typ string) string {
	switch typ {
	case "overloaded_error":
		return "Overloaded"
	case "rate_limit_error", "requests", "rate_limit_exceeded":
		return "Number of requests has exceeded your rate limit. Please try again later."
	case "insufficient_quota":
		return "You exceeded your current quota, please check your plan and billing details."
	case "api_error", "server_error":
		return "Internal server error"
	case "authentication_error", "invalid_api_key":
		return "invalid x-api-key"
	case "permission_error":
		return "Your API key does not have permission to use the specified resource."
	case "not_found_error", "model_not_found":
		return "The requested resource was not found."
	case "request_too_large":
		return "Request exceeds the maximum allowed number of bytes."
	case "billing_error":
		return "Your credit balance is too low to access the API."
	case "timeout_error":
		return "Request timed out"
	}
	return "Invalid request"
}

// OK renders a success: an event stream, or one JSON body when the
// request did not ask for a stream. An sseError fault answers a request
// that did not ask for a stream as the provider does, with the error
// status and JSON body of its error type (NonStreamedError).
func OK(p Params) *Response {
	if p.NonStream && p.Fault.SSEError != nil {
		return Error(NonStreamedError(p))
	}
	if p.NonStream {
		r := jsonResponse(p, 200, message(p))
		r.Tokens = []int{p.outputTokens()}
		return r
	}
	return Stream(p)
}

// Stream renders a 200 event stream, one chunk per event. With an sseError
// fault the stream stops after AfterEvents events and ends with the
// format's in-stream error.
func Stream(p Params) *Response {
	p.NonStream = false
	events := p.Format.Events(p)
	if f := p.Fault.SSEError; f != nil {
		n := min(max(f.AfterEvents, 0), len(events))
		events = append(events[:n:n], p.Format.StreamError(p, n))
	}
	events = cutEvents(p, events)
	hs := []Header{
		{"Content-Type", "text/event-stream; charset=utf-8"},
		{"Transfer-Encoding", "chunked"},
		connectionHeader(p),
		{"Cache-Control", "no-cache"},
	}
	hs = append(hs, p.Format.Headers(p, 200)...)
	r := &Response{Status: 200, Head: renderHead(200, hs), Chunked: true, Keepalive: []byte(p.Format.Keepalive())}
	for _, e := range events {
		r.Pieces = append(r.Pieces, []byte(e))
	}
	r.Tokens = pieceTokens(events, mockDeltas(p.text()))
	return r
}

// Error renders an error response: a JSON error body in the format's
// shape, Retry-After as written, the extra headers as written.
func Error(p Params) *Response {
	body, ok := contextBody(p)
	if !ok {
		body = p.Format.ErrorBody(p)
	}
	return jsonResponse(p, p.Fault.Status, body)
}

// jsonResponse renders a JSON body with Content-Length: the format's
// headers, then for an error Retry-After and the scenario's headers.
func jsonResponse(p Params, status int, body string) *Response {
	f := p.Fault
	hs := []Header{
		{"Content-Type", "application/json"},
		{"Content-Length", strconv.Itoa(len(body))},
		connectionHeader(p),
	}
	fh := p.Format.Headers(p, status)
	if len(fh) > 0 { // the request id, then retry-after
		hs, fh = append(hs, fh[0]), fh[1:]
	}
	if status != 200 && f.RetryAfter != nil {
		hs = append(hs, Header{"retry-after", *f.RetryAfter})
	}
	hs = append(hs, fh...)
	if status != 200 {
		for _, k := range sortedKeys(f.Headers) {
			hs = append(hs, Header{k, f.Headers[k]})
		}
	}
	return &Response{Status: status, Head: renderHead(status, hs), Pieces: [][]byte{[]byte(body)}}
}

// NotFound answers a request the mock does not serve: 405 (with Allow:
// POST) for another method on a path a format answers, in that format's
// shape, else 404 in the shape of p.Format.
func NotFound(p Params, method, path string) *Response {
	q := p
	// The OpenAI API's code for a URL it does not serve is unknown_url,
	// not model_not_found, its code for a 404 status fault: a client must
	// not read a wrong base URL as a missing model (and switch models).
	q.Fault = Fault{Status: 404, Code: "unknown_url", Message: "mock serves " + Routes() + ", not " + method + " " + path}
	if _, f, ok := Recognize("POST", path); ok {
		q.Format = f
		q.Fault.Status, q.Fault.Code = 405, ""
		q.Fault.Headers = map[string]string{"Allow": "POST"}
	}
	return Error(q)
}

// Side answers a request beside the answer (wire.Format.Side): in the
// format of p first, else in the first other format that knows the
// request; ok false when none does.
func Side(p Params, method, path string) (*Response, bool) {
	try := []Format{p.Format}
	for _, n := range order {
		try = append(try, formats[n])
	}
	for _, f := range try {
		q := p
		q.Format, q.Fault, q.NonStream = f, Fault{}, true
		if status, body, ok := f.Side(method, path, q); ok {
			return jsonResponse(q, status, body), true
		}
	}
	return nil, false
}

// RefuseUpgrade answers a WebSocket upgrade with 426 Upgrade Required, in
// the error shape of p's format, without switching protocols: a client
// that tries a WebSocket first (Codex CLI) falls back to HTTP.
func RefuseUpgrade(p Params, path string) *Response {
	q := p
	q.Fault = Fault{Status: http.StatusUpgradeRequired, ErrorType: "invalid_request_error",
		Message: "mock serves HTTP only, not a WebSocket at " + path}
	return Error(q)
}

// Health answers a health probe: 200 with {"status":"ok"}, or no body for
// HEAD.
func Health(p Params, method string) *Response {
	q := p
	q.Fault, q.NonStream = Fault{}, true
	r := jsonResponse(q, 200, `{"status":"ok"}`+"\n")
	if method == http.MethodHead {
		r.Pieces = nil
	}
	return r
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// connectionHeader says Connection: close, since the mock closes every
// connection after one response, unless the response is meant to be cut
// (see Params.KeepAlive).
func connectionHeader(p Params) Header {
	if p.KeepAlive {
		return Header{"Connection", "keep-alive"}
	}
	return Header{"Connection", "close"}
}
