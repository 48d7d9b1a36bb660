package wire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The Anthropic Messages API: POST /v1/messages.
const (
	ProviderAnthropic = "anthropic"
	PathAnthropic     = "/v1/messages"
)

// anthropic is the Messages API's wire format: SSE events message_start,
// content_block_start, ping, content_block_delta ×N, content_block_stop,
// message_delta (stop_reason end_turn, usage), message_stop; error bodies
// {"type":"error","error":{"type","message"},"request_id"}; request-id and
// anthropic-ratelimit-* headers.
type anthropic struct{}

var _ Format = anthropic{}

func (anthropic) Answers(method, path string) bool {
	return method == http.MethodPost && path == PathAnthropic
}

func (anthropic) Route() string        { return "POST " + PathAnthropic }
func (anthropic) DefaultModel() string { return "claude-haiku-4-5" }

// Client: the SDKs append /v1/messages to ANTHROPIC_BASE_URL.
func (anthropic) Client() Client {
	return Client{BaseURLVar: "ANTHROPIC_BASE_URL", KeyVar: "ANTHROPIC_API_KEY", SDKPreset: "anthropic-sdk"}
}

// Read reads model and stream, and the prompt from messages.
func (anthropic) Read(_ *url.URL, body []byte) Request { return readMessages(body) }

// readMessages reads a request body of the Messages or Chat Completions
// API: model, stream, stream_options.include_usage and the last user
// message of messages (kept raw until then, so that messages of any shape
// never spoil the other fields).
func readMessages(body []byte) Request {
	var v struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages json.RawMessage `json:"messages"`
	}
	// Fields that parsed before an error are kept by Unmarshal; a
	// half-parsed body is not trusted.
	if json.Unmarshal(body, &v) != nil {
		return Request{}
	}
	return Request{Model: v.Model, Stream: v.Stream, IncludeUsage: v.StreamOptions.IncludeUsage, Prompt: lastUserText(v.Messages)}
}

// lastUserText returns the text of the last message with role user: its
// content string, or its text parts joined by newlines; "" when there is
// none or it has another shape.
func lastUserText(raw json.RawMessage) string {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &msgs) != nil {
		return ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return contentText(msgs[i].Content, "text")
		}
	}
	return ""
}

// contentText returns a content string, or the text of its parts whose
// type is one of types, joined by newlines; "" for any other shape.
func contentText(raw json.RawMessage, types ...string) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		for _, t := range types {
			if p.Type == t {
				texts = append(texts, p.Text)
			}
		}
	}
	return strings.Join(texts, "\n")
}

// Headers: request-id and the anthropic-ratelimit-* headers; remaining is
// 0 for a 429. Values have a fixed width so that header lengths never vary
// between attempts.
func (a anthropic) Headers(p Params, status int) []Header {
	if p.RateLimit != nil {
		return append([]Header{{"request-id", p.RequestID}}, a.RateLimitHeaders(p)...)
	}
	remaining := "49"
	if status == http.StatusTooManyRequests {
		remaining = "0"
	}
	reset := p.Now.UTC().Add(time.Second).Truncate(time.Second).Format(time.RFC3339)
	return []Header{
		{"request-id", p.RequestID},
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

// anthropicUsage is the Messages API's usage object.
type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// sseEvent renders one SSE event with an event: line.
func sseEvent(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

func (anthropic) Events(p Params) []string {
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
	}{"message_start", message{ID: mockID("msg_mock", p), Type: "message", Role: "assistant", Model: p.Model,
		Content: []string{}, Usage: anthropicUsage{InputTokens: inputTokens, OutputTokens: 1}}}
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
		sseEvent("message_start", jsonString(start)),
		sseEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		sseEvent("ping", `{"type": "ping"}`),
	}
	for _, d := range mockDeltas(p.text()) {
		out = append(out, sseEvent("content_block_delta", jsonString(blockDelta{"content_block_delta", 0, textDelta{"text_delta", d}})))
	}
	return append(out,
		sseEvent("content_block_stop", `{"type":"content_block_stop","index":0}`),
		sseEvent("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, p.outputTokens())),
		sseEvent("message_stop", `{"type":"message_stop"}`),
	)
}

// Error bodies, with their fields in the order the API sends them.
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
)

// StreamError is event: error, data {"type":"error","error":{"type":T,"message":M}}.
func (anthropic) StreamError(p Params, _ int) string {
	f := p.Fault.SSEError
	return sseEvent("error", jsonString(anthropicErrorBody{Type: "error", Error: anthropicError{sseErrorType(f), sseErrorMessage(f)}}))
}

// Closing: message_delta (the stop_reason) and message_stop.
func (anthropic) Closing(Params) int { return 2 }

// Malformed is a content_block_delta event (the n-th event when it is one,
// else the first), its data cut mid-JSON.
func (a anthropic) Malformed(p Params, n int) string {
	events := a.Events(p)
	return cutData(events[deltaAt(p, events, n, "event: content_block_delta\n")])
}

// Message: stop_reason end_turn, or max_tokens for an answer cut short.
// Keepalive is the ping event the API sends while a stream is quiet, as
// the Messages streaming docs describe it (the same event as the one after
// content_block_start).
func (anthropic) Keepalive() string { return sseEvent("ping", `{"type": "ping"}`) }

func (anthropic) Message(p Params) string {
	stop := "end_turn"
	if p.truncated() {
		stop = "max_tokens"
	}
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	return jsonString(struct {
		ID           string         `json:"id"`
		Type         string         `json:"type"`
		Role         string         `json:"role"`
		Model        string         `json:"model"`
		Content      []block        `json:"content"`
		StopReason   string         `json:"stop_reason"`
		StopSequence *string        `json:"stop_sequence"`
		Usage        anthropicUsage `json:"usage"`
	}{mockID("msg_mock", p), "message", "assistant", p.Model,
		[]block{{"text", p.text()}}, stop, nil, anthropicUsage{InputTokens: inputTokens, OutputTokens: p.outputTokens()}}) + "\n"
}

func (anthropic) ErrorBody(p Params) string {
	typ := p.Fault.ErrorType
	if typ == "" {
		typ = AnthropicErrorType(p.Fault.Status)
	}
	msg := p.Fault.Message
	if b, ok := p.limited(); ok && msg == "" {
		msg = anthropicRateLimitMessage(b)
	}
	if msg == "" {
		msg = defaultMessage(typ)
	}
	return jsonString(anthropicErrorBody{"error", anthropicError{typ, msg}, p.RequestID}) + "\n"
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

// Side answers POST /v1/messages/count_tokens ({"input_tokens":25}), GET
// /v1/models (the scenario's models) and GET /v1/models/{id}.
func (anthropic) Side(method, path string, p Params) (int, string, bool) {
	type model struct {
		Type        string `json:"type"`
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
		CreatedAt   string `json:"created_at"`
	}
	mk := func(id string) model { return model{"model", id, id, "2025-10-01T00:00:00Z"} }
	switch id, isModel := strings.CutPrefix(path, "/v1/models/"); {
	case method == http.MethodPost && path == PathAnthropic+"/count_tokens":
		return 200, fmt.Sprintf(`{"input_tokens":%d}`, inputTokens) + "\n", true
	case method == http.MethodGet && path == "/v1/models":
		list := struct {
			Data    []model `json:"data"`
			HasMore bool    `json:"has_more"`
			FirstID string  `json:"first_id"`
			LastID  string  `json:"last_id"`
		}{Data: []model{}}
		for _, m := range p.Models {
			list.Data = append(list.Data, mk(m))
		}
		if n := len(list.Data); n > 0 {
			list.FirstID, list.LastID = list.Data[0].ID, list.Data[n-1].ID
		}
		return 200, jsonString(list) + "\n", true
	case method == http.MethodGet && isModel && id != "" && !strings.Contains(id, "/"):
		return 200, jsonString(mk(id)) + "\n", true
	}
	return 0, "", false
}
