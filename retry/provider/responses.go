package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// ResponsesProvider is the provider name of the OpenAI Responses API client,
// as New, Error.Provider and traces spell it.
const ResponsesProvider = "openai-responses"

// Responses streams from the OpenAI Responses API (POST /v1/responses,
// "stream": true): SSE events with an event field and a sequence_number,
// response.created, response.in_progress, response.output_item.added,
// response.content_part.added, response.output_text.delta ...,
// response.output_text.done, response.content_part.done,
// response.output_item.done, response.completed.
//
// A response is complete only when response.completed arrives. A stream that
// ends before it, or that ends with response.incomplete (the model stopped
// early: max_output_tokens, content_filter; Codex CLI retries it), is
// KindIncomplete. A response.failed event is KindSSEError with Code =
// response.error.code (rate_limit_exceeded, server_error, ...) and Message =
// response.error.message; so is an `error` event (Code = its code) and any
// event whose data carries an "error" object, as the official SDK reads it.
// The event type is the event field, or the data's type when the event has
// none. Other event types (reasoning, tool calls, annotations, unknown ones)
// are ignored, though their deltas count as streamed content.
type Responses struct{ base }

var _ Client = (*Responses)(nil)

func init() { register(ResponsesProvider, func(cfg Config) Client { return NewResponses(cfg) }) }

// NewResponses returns a client for the OpenAI Responses API.
func NewResponses(cfg Config) *Responses {
	r := &Responses{}
	r.base = newBase(ResponsesProvider, cfg, responsesWire{cfg: cfg})
	return r
}

// Stream makes one attempt. See Client.
func (r *Responses) Stream(ctx context.Context, req Request) (*Response, error) {
	return r.stream(ctx, req)
}

type responsesWire struct{ cfg Config }

type responsesInput struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responsesRequest struct {
	Model           string           `json:"model"`
	Instructions    string           `json:"instructions,omitempty"`
	Input           []responsesInput `json:"input"`
	MaxOutputTokens int              `json:"max_output_tokens,omitempty"`
	Stream          bool             `json:"stream"`
}

func (w responsesWire) request(ctx context.Context, req Request) (*http.Request, error) {
	body := responsesRequest{Model: req.Model, Instructions: req.System, MaxOutputTokens: req.MaxTokens, Stream: true,
		Input: make([]responsesInput, 0, len(req.Messages))}
	for _, m := range req.Messages {
		body.Input = append(body.Input, responsesInput(m))
	}
	hr, err := postJSON(ctx, trimBase(w.cfg.BaseURL, OpenAIBaseURL)+"/v1/responses", body)
	if err != nil {
		return nil, err
	}
	if w.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+w.cfg.APIKey)
	}
	return hr, nil
}

func (responsesWire) requestIDHeader() string { return "X-Request-Id" }

// httpError reads the OpenAI error body, {"error":{"message","type","param","code"}}.
func (responsesWire) httpError(e *Error, body []byte) { openaiWire{}.httpError(e, body) }

// responsesEvent holds the fields of every event type this client reads.
type responsesEvent struct {
	Type     string `json:"type"`
	Delta    string `json:"delta"`
	Response *struct {
		Model  string `json:"model"`
		Status string `json:"status"`
		Error  *struct {
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
		} `json:"error"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Usage *struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	} `json:"response"`
	// The `error` event's own fields.
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	// An "error" object, as a chat completions chunk carries it.
	Error *openaiError `json:"error"`
}

// responsesType is the type of an event: its event field, or the data's
// type for an event without one.
func responsesType(ev SSEEvent) string {
	if ev.Event != "message" {
		return ev.Event
	}
	var probe struct {
		Type string `json:"type"`
	}
	if json.Unmarshal([]byte(ev.Data), &probe) != nil {
		return ""
	}
	return probe.Type
}

func (responsesWire) event(st *streamState, ev SSEEvent) (bool, *Error) {
	typ := responsesType(ev)
	if ev.Data == "[DONE]" {
		// Not part of the Responses API, but a proxy may add it.
		return false, &Error{Kind: KindIncomplete, Message: "stream ended without response.completed"}
	}
	var d responsesEvent
	if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
		if typ == "error" || typ == "response.failed" {
			return false, &Error{Kind: KindSSEError, Message: truncate(ev.Data, 200)}
		}
		if typ != "" && !strings.HasPrefix(typ, "response.") {
			return false, nil // an unknown event with data this client need not read
		}
		return false, parseErr(ev, err)
	}
	if d.Error != nil && typ != "response.failed" {
		return false, &Error{Kind: KindSSEError, ErrorType: d.Error.Type, Code: d.Error.code(), Message: d.Error.Message}
	}
	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		d.readResponse(st)
	case "response.output_text.delta":
		st.addText(d.Delta)
	case "response.completed":
		d.readResponse(st)
		st.resp.StopReason = "completed"
		if d.Response != nil && d.Response.Status != "" {
			st.resp.StopReason = d.Response.Status
		}
		return true, nil
	case "response.incomplete":
		d.readResponse(st)
		reason := "unknown"
		if d.Response != nil && d.Response.IncompleteDetails != nil && d.Response.IncompleteDetails.Reason != "" {
			reason = d.Response.IncompleteDetails.Reason
		}
		return false, &Error{Kind: KindIncomplete, Message: "response incomplete: " + reason}
	case "response.failed":
		e := &Error{Kind: KindSSEError, Message: "response failed"}
		if d.Response != nil && d.Response.Error != nil {
			e.Code, e.Message = rawCode(d.Response.Error.Code), d.Response.Error.Message
		}
		return false, e
	case "error":
		return false, &Error{Kind: KindSSEError, Code: rawCode(d.Code), Message: d.Message}
	default:
		if strings.HasSuffix(typ, ".delta") {
			st.streamed = true // reasoning, refusal or tool arguments: content all the same
		}
	}
	return false, nil
}

// readResponse takes the model and usage of the response object an event
// carries.
func (d *responsesEvent) readResponse(st *streamState) {
	if d.Response == nil {
		return
	}
	if d.Response.Model != "" {
		st.resp.Model = d.Response.Model
	}
	if u := d.Response.Usage; u != nil {
		st.resp.Usage = Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	}
}

// rawCode reads an error code sent as a string, a number or null.
func rawCode(raw json.RawMessage) string {
	return (&openaiError{Code: raw}).code()
}
