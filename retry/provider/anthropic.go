package provider

import (
	"context"
	"encoding/json"
	"net/http"
)

// AnthropicVersion is the anthropic-version header sent with every request.
const AnthropicVersion = "2023-06-01"

// Anthropic streams from the Anthropic Messages API (POST /v1/messages).
//
// A response is complete only when message_stop arrives after a
// message_delta that carried a stop_reason; a stream that ends before
// message_stop, or whose message_stop comes without a stop_reason, is
// KindIncomplete (seed 000 R1: "stream ended without stop_reason"). ping,
// content_block_start/stop and unknown event types are ignored; the data of
// every other event, and of an event without an event field, must be JSON,
// or the attempt is KindParse. An `error` event is KindSSEError with
// ErrorType taken from data.error.type (the top-level type is always
// "error").
type Anthropic struct{ base }

var _ Client = (*Anthropic)(nil)

func init() { register("anthropic", func(cfg Config) Client { return NewAnthropic(cfg) }) }

// NewAnthropic returns a client for the Anthropic Messages API.
func NewAnthropic(cfg Config) *Anthropic {
	a := &Anthropic{}
	a.base = newBase("anthropic", cfg, anthropicWire{cfg: cfg})
	return a
}

// Stream makes one attempt. See Client.
func (a *Anthropic) Stream(ctx context.Context, req Request) (*Response, error) {
	return a.stream(ctx, req)
}

type anthropicWire struct{ cfg Config }

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    string             `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
	Stream    bool               `json:"stream"`
}

func (w anthropicWire) request(ctx context.Context, req Request) (*http.Request, error) {
	body := anthropicRequest{Model: req.Model, MaxTokens: req.MaxTokens, System: req.System, Stream: true,
		Messages: make([]anthropicMessage, 0, len(req.Messages))}
	if body.MaxTokens == 0 {
		body.MaxTokens = DefaultMaxTokens
	}
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, anthropicMessage(m))
	}
	hr, err := postJSON(ctx, trimBase(w.cfg.BaseURL, AnthropicBaseURL)+"/v1/messages", body)
	if err != nil {
		return nil, err
	}
	if w.cfg.APIKey != "" {
		hr.Header.Set("X-Api-Key", w.cfg.APIKey)
	}
	hr.Header.Set("Anthropic-Version", AnthropicVersion)
	return hr, nil
}

func (anthropicWire) requestIDHeader() string { return "Request-Id" }

// anthropicErrorBody is {"type":"error","error":{"type":...,"message":...},"request_id":...}.
type anthropicErrorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

func (anthropicWire) httpError(e *Error, body []byte) {
	var b anthropicErrorBody
	if json.Unmarshal(body, &b) != nil {
		return
	}
	e.ErrorType, e.Message = b.Error.Type, b.Error.Message
	if e.RequestID == "" {
		e.RequestID = b.RequestID
	}
}

// anthropicEvent holds the fields of every event type this client reads.
type anthropicEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string `json:"id"`
		Model string `json:"model"`
		Usage struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
	Delta *struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		StopReason string `json:"stop_reason"`
	} `json:"delta"`
	Usage *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (anthropicWire) event(st *streamState, ev SSEEvent) (bool, *Error) {
	typ := ev.Event
	switch typ {
	case "ping", "content_block_start", "content_block_stop":
		return false, nil
	case "message_start", "content_block_delta", "message_delta", "message_stop", "error":
	case "message":
		// No event field: fall back to the data's own type. Data that is not
		// JSON is malformed (seed 000: StreamParse), as in the other formats.
		var probe struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &probe); err != nil {
			return false, parseErr(ev, err)
		}
		typ = probe.Type
	default:
		return false, nil // unknown event types are ignored, as the API asks
	}
	var d anthropicEvent
	if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
		if typ == "error" {
			// The server said error; its details are unreadable.
			return false, &Error{Kind: KindSSEError, Message: truncate(ev.Data, 200)}
		}
		return false, parseErr(ev, err)
	}
	switch typ {
	case "message_start":
		if d.Message != nil {
			if d.Message.Model != "" {
				st.resp.Model = d.Message.Model
			}
			st.resp.Usage.InputTokens = d.Message.Usage.InputTokens
			st.resp.Usage.OutputTokens = d.Message.Usage.OutputTokens
		}
	case "content_block_delta":
		if d.Delta != nil && d.Delta.Type == "text_delta" {
			st.addText(d.Delta.Text)
		} else {
			st.streamed = true // tool input or thinking: content all the same
		}
	case "message_delta":
		if d.Delta != nil && d.Delta.StopReason != "" {
			st.resp.StopReason = d.Delta.StopReason
		}
		if d.Usage != nil {
			if d.Usage.InputTokens > 0 {
				st.resp.Usage.InputTokens = d.Usage.InputTokens
			}
			st.resp.Usage.OutputTokens = d.Usage.OutputTokens
		}
	case "message_stop":
		if st.resp.StopReason == "" {
			return false, &Error{Kind: KindIncomplete, Message: "stream ended without stop_reason"}
		}
		return true, nil
	case "error":
		e := &Error{Kind: KindSSEError}
		if d.Error != nil {
			e.ErrorType, e.Message = d.Error.Type, d.Error.Message
		}
		return false, e
	}
	return false, nil
}
