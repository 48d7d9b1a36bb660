package wire

import (
	"net/http"
	"net/url"
	"strings"
)

// The OpenAI Chat Completions API: POST /v1/chat/completions.
const (
	ProviderOpenAI = "openai"
	PathOpenAI     = "/v1/chat/completions"
)

// openai is the Chat Completions API's wire format: data: chunks (a role
// chunk, content chunks, a finish_reason "stop" chunk, with
// stream_options.include_usage a usage chunk with empty choices) and data:
// [DONE]; error bodies {"error":{"message","type","param","code"}};
// x-request-id, openai-* and x-ratelimit-* headers. The Responses API
// (responses.go) shares its headers and error bodies.
type openai struct{}

var _ Format = openai{}

func (openai) Answers(method, path string) bool {
	return method == http.MethodPost && path == PathOpenAI
}

func (openai) Route() string        { return "POST " + PathOpenAI }
func (openai) DefaultModel() string { return "gpt-4o-mini" }

// Client: OPENAI_BASE_URL ends in /v1, the SDKs append /chat/completions
// (and /responses: the Responses format inherits this).
func (openai) Client() Client {
	return Client{BaseURLVar: "OPENAI_BASE_URL", BasePath: "/v1", KeyVar: "OPENAI_API_KEY", SDKPreset: "openai-sdk"}
}

// Read reads model, stream, stream_options.include_usage and the prompt
// from messages.
func (openai) Read(_ *url.URL, body []byte) Request { return readMessages(body) }

// Headers: x-request-id, on a stream openai-version and
// openai-processing-ms, and the x-ratelimit-* headers; remaining requests
// is 0 for a 429.
func (o openai) Headers(p Params, status int) []Header {
	remaining := "49"
	if status == http.StatusTooManyRequests {
		remaining = "0"
	}
	hs := []Header{{"x-request-id", p.RequestID}}
	if status == 200 && !p.NonStream {
		hs = append(hs, Header{"openai-version", "2020-10-01"}, Header{"openai-processing-ms", "25"})
	}
	if p.RateLimit != nil {
		return append(hs, o.RateLimitHeaders(p)...)
	}
	return append(hs,
		Header{"x-ratelimit-limit-requests", "50"},
		Header{"x-ratelimit-limit-tokens", "200000"},
		Header{"x-ratelimit-remaining-requests", remaining},
		Header{"x-ratelimit-remaining-tokens", "199000"},
		Header{"x-ratelimit-reset-requests", "1.2s"},
		Header{"x-ratelimit-reset-tokens", "300ms"},
	)
}

// openaiUsage is the Chat Completions API's usage object.
type openaiUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func mockOpenAIUsage(out int) openaiUsage { return openaiUsage{inputTokens, out, inputTokens + out} }

func (openai) Events(p Params) []string {
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

// Error bodies, with their fields in the order the API sends them.
type (
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

// StreamError: chat streams carry an "error" object; the event is named
// "error" too so that clients of either convention see it.
func (openai) StreamError(p Params, _ int) string {
	f := p.Fault.SSEError
	typ := sseErrorType(f)
	return sseEvent("error", jsonString(openaiErrorBody{openaiError{sseErrorMessage(f), typ, nil, &typ}}))
}

// Closing: the finish_reason chunk, the usage chunk when the request asked
// for it, and data: [DONE].
func (openai) Closing(p Params) int {
	if p.IncludeUsage {
		return 3
	}
	return 2
}

// Malformed is a content chunk (the n-th event when it is one, else the
// first), its data cut mid-JSON.
func (o openai) Malformed(p Params, n int) string {
	events := o.Events(p)
	return cutData(events[deltaAt(p, events, n, `"delta":{"content":`)])
}

// Message: finish_reason stop, or length for an answer cut short.
// Keepalive is an SSE comment line: the chat completions API documents no
// keepalive event, and a comment is what OpenAI-compatible servers and
// proxies send to keep a quiet stream open (every SSE parser drops it).
func (openai) Keepalive() string { return sseComment }

// sseComment is an SSE comment, the keepalive of the formats that have no
// event of their own for it.
const sseComment = ": keepalive\n\n"

func (openai) Message(p Params) string {
	finish := "stop"
	if p.truncated() {
		finish = "length"
	}
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
	return jsonString(struct {
		ID                string      `json:"id"`
		Object            string      `json:"object"`
		Created           int64       `json:"created"`
		Model             string      `json:"model"`
		Choices           []choice    `json:"choices"`
		Usage             openaiUsage `json:"usage"`
		SystemFingerprint string      `json:"system_fingerprint"`
	}{mockID("chatcmpl-mock", p), "chat.completion", p.Now.Unix(), p.Model,
		[]choice{{Message: msg{Role: "assistant", Content: p.text()}, FinishReason: finish}},
		mockOpenAIUsage(p.outputTokens()), "fp_retrylab"}) + "\n"
}

// ErrorBody: the type and code the status has (OpenAIError), or the
// scenario's errorType as both; Fault.Code, when set, as the code.
func (openai) ErrorBody(p Params) string {
	typ, code := OpenAIError(p.Fault.Status)
	if p.Fault.ErrorType != "" {
		typ, code = p.Fault.ErrorType, p.Fault.ErrorType
	}
	if p.Fault.Code != "" {
		code = p.Fault.Code
	}
	msg := p.Fault.Message
	if b, ok := p.limited(); ok && msg == "" {
		msg = openaiRateLimitMessage(p, b)
		if b.Name != BucketRequests && p.Fault.ErrorType == "" {
			typ = "tokens" // OpenAI's type for a TPM limit; "requests" for RPM
		}
	}
	if p.RateLimit != nil && p.RateLimit.Limited == Concurrency && msg == "" {
		msg = "The server is overloaded or not ready yet."
	}
	if msg == "" {
		msg = defaultMessage(typ)
	}
	var c *string
	if code != "" {
		c = &code
	}
	return jsonString(openaiErrorBody{openaiError{msg, typ, nil, c}}) + "\n"
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

// openaiModel is a model object of the OpenAI API.
type openaiModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func mkOpenAIModel(id string) openaiModel { return openaiModel{id, "model", 1727740800, "openai"} }

// Side answers GET /v1/models (the scenario's models) and GET
// /v1/models/{id}.
func (openai) Side(method, path string, p Params) (int, string, bool) {
	if method != http.MethodGet {
		return 0, "", false
	}
	if path == "/v1/models" {
		list := struct {
			Object string        `json:"object"`
			Data   []openaiModel `json:"data"`
		}{"list", []openaiModel{}}
		for _, m := range p.Models {
			list.Data = append(list.Data, mkOpenAIModel(m))
		}
		return 200, jsonString(list) + "\n", true
	}
	if id, ok := strings.CutPrefix(path, "/v1/models/"); ok && id != "" && !strings.Contains(id, "/") {
		return 200, jsonString(mkOpenAIModel(id)) + "\n", true
	}
	return 0, "", false
}
