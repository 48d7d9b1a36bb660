// Package wire renders the mock server's responses as raw HTTP/1.1 bytes, in
// the wire formats of the Anthropic Messages API and the OpenAI Chat
// Completions API: event streams, JSON answers and error bodies with the
// headers the real APIs send.
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

// Paths the mock answers.
const (
	PathAnthropic = "/v1/messages"
	PathOpenAI    = "/v1/chat/completions"
)

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
	return DefaultText
}

// outputTokens is the usage.output_tokens a success reports: one per word
// of its text.
func (p Params) outputTokens() int { return len(strings.Fields(p.text())) }

// Response is a rendered HTTP response: the head (status line and headers,
// up to and including the blank line) and the body pieces. When chunked,
// each piece is sent as one chunk and the body ends with the last-chunk
// marker; otherwise the single piece carries Content-Length.
type Response struct {
	Status  int
	Head    []byte
	Pieces  [][]byte
	Chunked bool
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

// header is one response header, sent with its name exactly as written.
type header struct{ name, value string }

// renderHead renders the status line and headers.
func renderHead(status int, hs []header) []byte {
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
		b.WriteString(h.name)
		b.WriteString(": ")
		b.WriteString(h.value)
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// Params is what varies between two responses of the mock.
type Params struct {
	Provider  string // "anthropic" or "openai"
	Model     string
	RequestID string
	Now       time.Time
	Fault     Fault
	// NonStream is set when the request did not ask for a stream
	// ("stream" absent or false, the APIs' default): a success is then one
	// JSON body, as the real APIs answer.
	NonStream bool
	// IncludeUsage is the OpenAI request's stream_options.include_usage:
	// every chunk then carries "usage": null and a last chunk with empty
	// choices carries the usage, before data: [DONE].
	IncludeUsage bool
	// KeepAlive is set when the response is meant to be cut on its way to
	// the client (a drop, raw toxics): it is then sent Connection:
	// keep-alive, as the real APIs send, instead of close. Node's fetch
	// (undici, under both official SDKs) takes EOF on a Connection: close
	// response for the end of the message even mid-chunk, so with close a
	// dropped stream would look short but clean to it.
	KeepAlive bool
}

// Fault is what shapes a response beyond a plain success.
type Fault struct {
	Status     int               // an error response's status; 0 for a success
	RetryAfter *string           // its retry-after header, as written
	ErrorType  string            // its body's error.type (default: the one the status has)
	Message    string            // its body's error.message (default: the type's usual one)
	Headers    map[string]string // extra headers, as written
	SSEError   *SSEError         // a 200 stream that ends with an error event
	Text       string            // a success's assistant text ("" = DefaultText)
}

// SSEError ends a 200 stream after AfterEvents events with an SSE error
// event.
type SSEError struct {
	AfterEvents int
	Type        string // error.type (default overloaded_error)
	Message     string // error.message
}

// rateLimitHeaders returns the provider's rate-limit headers; remaining is 0
// for a 429. Values have a fixed width so that header lengths never vary
// between attempts.
func rateLimitHeaders(p Params, status int) []header {
	remaining := "49"
	if status == http.StatusTooManyRequests {
		remaining = "0"
	}
	reset := p.Now.UTC().Add(time.Second).Truncate(time.Second).Format(time.RFC3339)
	if p.Provider == ProviderOpenAI {
		return []header{
			{"x-ratelimit-limit-requests", "50"},
			{"x-ratelimit-limit-tokens", "200000"},
			{"x-ratelimit-remaining-requests", remaining},
			{"x-ratelimit-remaining-tokens", "199000"},
			{"x-ratelimit-reset-requests", "1.2s"},
			{"x-ratelimit-reset-tokens", "300ms"},
		}
	}
	return []header{
		{"anthropic-ratelimit-requests-limit", "50"},
		{"anthropic-ratelimit-requests-remaining", remaining},
		{"anthropic-ratelimit-requests-reset", reset},
		{"anthropic-ratelimit-input-tokens-limit", "200000"},
		{"anthropic-ratelimit-input-tokens-remaining", "199000"},
		{"anthropic-ratelimit-input-tokens-reset", reset},
		{"anthropic-ratelimit-output-tokens-limit", "40000"},
		{"anthropic-ratelimit-output-tokens-remaining", "39000"},
		{"anthropic-ratelimit-output-tokens-reset", reset},
	}
}

// Provider names of Scenario.Provider.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// idHeader returns the request-id header of the provider.
func idHeader(p Params) header {
	if p.Provider == ProviderOpenAI {
		return header{"x-request-id", p.RequestID}
	}
	return header{"request-id", p.RequestID}
}

// streamHead renders the head of a 200 event stream.
func streamHead(p Params) []byte {
	hs := []header{
		{"Content-Type", "text/event-stream; charset=utf-8"},
		{"Transfer-Encoding", "chunked"},
		connectionHeader(p),
		{"Cache-Control", "no-cache"},
		idHeader(p),
	}
	if p.Provider == ProviderOpenAI {
		hs = append(hs, header{"openai-version", "2020-10-01"}, header{"openai-processing-ms", "25"})
	}
	hs = append(hs, rateLimitHeaders(p, 200)...)
	return renderHead(200, hs)
}

// jsonString marshals v without HTML escaping, for event data.
func jsonString(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// Usage objects as the real APIs send them; the mock always reports 25 input
// tokens and one output token per word of the text (Params.outputTokens).
type (
	anthropicUsage struct {
		InputTokens              int `json:"input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		OutputTokens             int `json:"output_tokens"`
	}
	openaiUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
)

func mockOpenAIUsage(out int) openaiUsage { return openaiUsage{25, out, 25 + out} }

// mockID is a message or completion id derived from the attempt's request id,
// so that the two can be matched in the journal.
func mockID(prefix string, p Params) string {
	return prefix + strings.TrimPrefix(p.RequestID, "req_mock")
}

// anthropicEvents returns the SSE events of a successful Anthropic stream, in
// order: message_start, content_block_start, ping, content_block_delta ×N,
// content_block_stop, message_delta (stop_reason end_turn, usage),
// message_stop.
func anthropicEvents(p Params) []string {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	msgID := mockID("msg_mock", p)
	type message struct {
		ID           string         `json:"id"`
		Type         string         `json:"type"`
		Role         string         `json:"role"`
		Model        string         `json:"model"`
		Content      []string       `json:"content"`
		StopReason   *string        `json:"stop_reason"`
		StopSequence *string        `json:"stop_sequence"`
		Usage        anthropicUsage `json:"usage"`
	}
	start := struct {
		Type    string  `json:"type"`
		Message message `json:"message"`
	}{"message_start", message{ID: msgID, Type: "message", Role: "assistant", Model: p.Model,
		Content: []string{}, Usage: anthropicUsage{InputTokens: 25, OutputTokens: 1}}}
	type textDelta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type blockDelta struct {
		Type  string    `json:"type"`
		Index int       `json:"index"`
		Delta textDelta `json:"delta"`
	}
	out := []string{
		ev("message_start", jsonString(start)),
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		ev("ping", `{"type": "ping"}`),
	}
	for _, d := range mockDeltas(p.text()) {
		out = append(out, ev("content_block_delta", jsonString(blockDelta{"content_block_delta", 0, textDelta{"text_delta", d}})))
	}
	out = append(out,
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
		ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, p.outputTokens())),
		ev("message_stop", `{"type":"message_stop"}`),
	)
	return out
}

// openaiEvents returns the SSE events of a successful OpenAI chat completions
// stream: a role chunk, content chunks, a finish_reason "stop" chunk, with
// stream_options.include_usage a usage chunk with empty choices, and data:
// [DONE].
func openaiEvents(p Params) []string {
	id := mockID("chatcmpl-mock", p)
	created := p.Now.Unix()
	type delta struct {
		Role    string  `json:"role,omitempty"`
		Content *string `json:"content,omitempty"`
	}
	type choice struct {
		Index        int     `json:"index"`
		Delta        delta   `json:"delta"`
		Logprobs     *string `json:"logprobs"`
		FinishReason *string `json:"finish_reason"`
	}
	type chunkT struct {
		ID                string   `json:"id"`
		Object            string   `json:"object"`
		Created           int64    `json:"created"`
		Model             string   `json:"model"`
		SystemFingerprint string   `json:"system_fingerprint"`
		Choices           []choice `json:"choices"`
	}
	// With include_usage every chunk has a usage field, null but on the last.
	type usageChunkT struct {
		chunkT
		Usage *openaiUsage `json:"usage"`
	}
	render := func(choices []choice, u *openaiUsage) string {
		c := chunkT{id, "chat.completion.chunk", created, p.Model, "fp_retrylab", choices}
		if p.IncludeUsage {
			return "data: " + jsonString(usageChunkT{c, u}) + "\n\n"
		}
		return "data: " + jsonString(c) + "\n\n"
	}
	chunk := func(d delta, finish *string) string {
		return render([]choice{{Delta: d, FinishReason: finish}}, nil)
	}
	empty, stop := "", "stop"
	out := []string{chunk(delta{Role: "assistant", Content: &empty}, nil)}
	for _, d := range mockDeltas(p.text()) {
		out = append(out, chunk(delta{Content: &d}, nil))
	}
	out = append(out, chunk(delta{}, &stop))
	if p.IncludeUsage {
		out = append(out, render([]choice{}, new(mockOpenAIUsage(p.outputTokens()))))
	}
	return append(out, "data: [DONE]\n\n")
}

// Error bodies, with their fields in the order the real APIs send them.
type (
	anthropicError struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	anthropicErrorBody struct {
		Type      string         `json:"type"`
		Error     anthropicError `json:"error"`
		RequestID string         `json:"request_id,omitempty"`
	}
	openaiError struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	openaiErrorBody struct {
		Error openaiError `json:"error"`
	}
)

// sseErrorEvent renders the SSE error event of an sseError fault. Anthropic:
// event: error, data {"type":"error","error":{"type":T,"message":M}}. OpenAI
// streams carry an "error" object; the event is named "error" too so that
// clients of either convention see it.
func sseErrorEvent(p Params, f *SSEError) string {
	typ := f.Type
	if typ == "" {
		typ = "overloaded_error"
	}
	msg := f.Message
	if msg == "" {
		msg = defaultMessage(typ)
	}
	if p.Provider == ProviderOpenAI {
		return "event: error\ndata: " + jsonString(openaiErrorBody{openaiError{msg, typ, nil, &typ}}) + "\n\n"
	}
	return "event: error\ndata: " + jsonString(anthropicErrorBody{Type: "error", Error: anthropicError{typ, msg}}) + "\n\n"
}

// messageResponse renders a successful non-streaming answer: one JSON body
// with Content-Length, carrying the same text as the stream.
func messageResponse(p Params) *Response {
	var body string
	if p.Provider == ProviderOpenAI {
		type msg struct {
			Role    string  `json:"role"`
			Content string  `json:"content"`
			Refusal *string `json:"refusal"`
		}
		type choice struct {
			Index        int     `json:"index"`
			Message      msg     `json:"message"`
			Logprobs     *string `json:"logprobs"`
			FinishReason string  `json:"finish_reason"`
		}
		body = jsonString(struct {
			ID                string      `json:"id"`
			Object            string      `json:"object"`
			Created           int64       `json:"created"`
			Model             string      `json:"model"`
			Choices           []choice    `json:"choices"`
			Usage             openaiUsage `json:"usage"`
			SystemFingerprint string      `json:"system_fingerprint"`
		}{mockID("chatcmpl-mock", p), "chat.completion", p.Now.Unix(), p.Model,
			[]choice{{Message: msg{Role: "assistant", Content: p.text()}, FinishReason: "stop"}},
			mockOpenAIUsage(p.outputTokens()), "fp_retrylab"})
	} else {
		type block struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		body = jsonString(struct {
			ID           string         `json:"id"`
			Type         string         `json:"type"`
			Role         string         `json:"role"`
			Model        string         `json:"model"`
			Content      []block        `json:"content"`
			StopReason   string         `json:"stop_reason"`
			StopSequence *string        `json:"stop_sequence"`
			Usage        anthropicUsage `json:"usage"`
		}{mockID("msg_mock", p), "message", "assistant", p.Model,
			[]block{{"text", p.text()}}, "end_turn", nil, anthropicUsage{InputTokens: 25, OutputTokens: p.outputTokens()}})
	}
	body += "\n"
	hs := []header{
		{"Content-Type", "application/json"},
		{"Content-Length", strconv.Itoa(len(body))},
		connectionHeader(p),
		idHeader(p),
	}
	hs = append(hs, rateLimitHeaders(p, 200)...)
	return &Response{Status: 200, Head: renderHead(200, hs), Pieces: [][]byte{[]byte(body)}}
}

// OK renders a success: an event stream, or one JSON body when the
// request did not ask for a stream. An sseError fault always streams.
func OK(p Params) *Response {
	if p.NonStream && p.Fault.SSEError == nil {
		return messageResponse(p)
	}
	return Stream(p)
}

// Stream renders a 200 event stream. With an sseError fault the
// stream stops after AfterEvents events and ends with the error event.
func Stream(p Params) *Response {
	var events []string
	if p.Provider == ProviderOpenAI {
		events = openaiEvents(p)
	} else {
		events = anthropicEvents(p)
	}
	if f := p.Fault.SSEError; f != nil {
		n := min(max(f.AfterEvents, 0), len(events))
		events = append(events[:n:n], sseErrorEvent(p, f))
	}
	r := &Response{Status: 200, Head: streamHead(p), Chunked: true}
	for _, e := range events {
		r.Pieces = append(r.Pieces, []byte(e))
	}
	return r
}

// AnthropicErrorType returns the Anthropic error.type the mock sends for an
// HTTP status when the scenario names none: 400 invalid_request_error, 401
// authentication_error, 402 billing_error, 403 permission_error, 404
// not_found_error, 413 request_too_large, 429 rate_limit_error, 500
// api_error, 503 and 529 overloaded_error, 504 timeout_error; any other 4xx
// is invalid_request_error and any other status api_error.
func AnthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 500:
		return "api_error"
	case 503, 529:
		return "overloaded_error"
	case 504:
		return "timeout_error"
	}
	if status >= 400 && status < 500 {
		return "invalid_request_error"
	}
	return "api_error"
}

// OpenAIError returns the OpenAI error type and code the mock sends for an
// HTTP status when the scenario names none: 401 invalid_request_error /
// invalid_api_key, 404 invalid_request_error / model_not_found, 429 requests
// / rate_limit_exceeded, other 4xx invalid_request_error / null, 5xx
// server_error / null (code "" means null).
func OpenAIError(status int) (typ, code string) {
	switch {
	case status == 401:
		return "invalid_request_error", "invalid_api_key"
	case status == 404:
		return "invalid_request_error", "model_not_found"
	case status == 429:
		return "requests", "rate_limit_exceeded"
	case status >= 400 && status < 500:
		return "invalid_request_error", ""
	}
	return "server_error", ""
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

// Error renders an error response: a JSON error body in the provider's
// shape, Retry-After as written, the extra headers as written.
func Error(p Params) *Response {
	f := p.Fault
	var body string
	if p.Provider == ProviderOpenAI {
		typ, code := OpenAIError(f.Status)
		if f.ErrorType != "" {
			typ, code = f.ErrorType, f.ErrorType
		}
		msg := f.Message
		if msg == "" {
			msg = defaultMessage(typ)
		}
		var c *string
		if code != "" {
			c = &code
		}
		body = jsonString(openaiErrorBody{openaiError{msg, typ, nil, c}})
	} else {
		typ := f.ErrorType
		if typ == "" {
			typ = AnthropicErrorType(f.Status)
		}
		msg := f.Message
		if msg == "" {
			msg = defaultMessage(typ)
		}
		body = jsonString(anthropicErrorBody{"error", anthropicError{typ, msg}, p.RequestID})
	}
	body += "\n"
	hs := []header{
		{"Content-Type", "application/json"},
		{"Content-Length", strconv.Itoa(len(body))},
		connectionHeader(p),
		idHeader(p),
	}
	if f.RetryAfter != nil {
		hs = append(hs, header{"retry-after", *f.RetryAfter})
	}
	hs = append(hs, rateLimitHeaders(p, f.Status)...)
	for _, k := range sortedKeys(f.Headers) {
		hs = append(hs, header{k, f.Headers[k]})
	}
	return &Response{Status: f.Status, Head: renderHead(f.Status, hs), Pieces: [][]byte{[]byte(body)}}
}

// NotFound answers a request the mock does not serve: 405 (with
// Allow: POST) for another method on a served path, else 404.
func NotFound(p Params, method, path string) *Response {
	q := p
	q.Fault = Fault{Status: 404, Message: "mock serves POST " + PathAnthropic + " and POST " + PathOpenAI + ", not " + method + " " + path}
	if path == PathAnthropic || path == PathOpenAI {
		q.Fault.Status = 405
		q.Fault.Headers = map[string]string{"Allow": "POST"}
	}
	if path == PathOpenAI {
		q.Provider = ProviderOpenAI
	} else if path == PathAnthropic {
		q.Provider = ProviderAnthropic
	}
	return Error(q)
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
func connectionHeader(p Params) header {
	if p.KeepAlive {
		return header{"Connection", "keep-alive"}
	}
	return header{"Connection", "close"}
}
