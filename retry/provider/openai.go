package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// OpenAI streams from the OpenAI chat completions API
// (POST /v1/chat/completions).
//
// A response is complete only when `data: [DONE]` arrives; a stream that ends
// before it is KindIncomplete, even after a finish_reason. A chunk carrying an
// "error" object is KindSSEError with ErrorType = error.type and Code =
// error.code. Events with an explicit event type other than "message" are
// ignored.
type OpenAI struct{ base }

var _ Client = (*OpenAI)(nil)

func init() { register("openai", func(cfg Config) Client { return NewOpenAI(cfg) }) }

// NewOpenAI returns a client for the OpenAI chat completions API.
func NewOpenAI(cfg Config) *OpenAI {
	o := &OpenAI{}
	o.base = newBase("openai", cfg, openaiWire{cfg: cfg})
	return o
}

// Stream makes one attempt. See Client.
func (o *OpenAI) Stream(ctx context.Context, req Request) (*Response, error) {
	return o.stream(ctx, req)
}

type openaiWire struct{ cfg Config }

type openaiMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openaiRequest struct {
	Model         string          `json:"model"`
	Messages      []openaiMessage `json:"messages"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	Stream        bool            `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (w openaiWire) request(ctx context.Context, req Request) (*http.Request, error) {
	body := openaiRequest{Model: req.Model, MaxTokens: req.MaxTokens, Stream: true}
	body.StreamOptions.IncludeUsage = true
	if req.System != "" {
		body.Messages = append(body.Messages, openaiMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, openaiMessage(m))
	}
	hr, err := postJSON(ctx, trimBase(w.cfg.BaseURL, OpenAIBaseURL)+"/v1/chat/completions", body)
	if err != nil {
		return nil, err
	}
	if w.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+w.cfg.APIKey)
	}
	return hr, nil
}

func (openaiWire) requestIDHeader() string { return "X-Request-Id" }

// openaiError is the "error" object of a body or a chunk:
// {"message":...,"type":...,"code":...}. code is a string, a number or null.
type openaiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func (o *openaiError) code() string {
	if len(o.Code) == 0 || string(o.Code) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(o.Code, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(o.Code, &n) == nil {
		return n.String()
	}
	return strconv.Quote(string(o.Code))
}

func (openaiWire) httpError(e *Error, body []byte) {
	var b struct {
		Error *openaiError `json:"error"`
	}
	if json.Unmarshal(body, &b) != nil || b.Error == nil {
		return
	}
	e.ErrorType, e.Code, e.Message = b.Error.Type, b.Error.code(), b.Error.Message
}

type openaiChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *openaiError `json:"error"`
}

func (openaiWire) event(st *streamState, ev SSEEvent) (bool, *Error) {
	if ev.Event != "message" && ev.Event != "error" {
		return false, nil
	}
	if ev.Data == "[DONE]" {
		if st.resp.StopReason == "" {
			return false, &Error{Kind: KindIncomplete, Message: "stream ended without finish_reason"}
		}
		return true, nil
	}
	var c openaiChunk
	if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
		if ev.Event == "error" {
			return false, &Error{Kind: KindSSEError, Message: truncate(ev.Data, 200)}
		}
		return false, parseErr(ev, err)
	}
	if c.Error != nil || ev.Event == "error" {
		e := &Error{Kind: KindSSEError}
		if c.Error != nil {
			e.ErrorType, e.Code, e.Message = c.Error.Type, c.Error.code(), c.Error.Message
		}
		return false, e
	}
	if c.Model != "" {
		st.resp.Model = c.Model
	}
	if len(c.Choices) > 0 {
		ch := c.Choices[0]
		if ch.Delta.Content != "" {
			st.addText(ch.Delta.Content)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			st.resp.StopReason = *ch.FinishReason
		}
	}
	if c.Usage != nil {
		st.resp.Usage = Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
	}
	return false, nil
}
