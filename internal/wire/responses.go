package wire

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The OpenAI Responses API: POST /v1/responses.
const (
	ProviderResponses = "openai-responses"
	PathResponses     = "/v1/responses"
)

// responses is the Responses API's wire format (what Codex CLI, the Vercel
// AI SDK's openai() and the SDKs' responses.stream speak). A stream is SSE
// events with an event: line, each data a JSON object whose type repeats
// the event's name and whose sequence_number counts from 0:
// response.created, response.in_progress, response.output_item.added,
// response.content_part.added, response.output_text.delta ×N,
// response.output_text.done, response.content_part.done,
// response.output_item.done, response.completed (the response with its
// id, status completed and usage). There is no [DONE]. An in-stream error
// is response.failed, whose response has status failed and error {code:
// the fault's type, message}. Headers and error bodies are the Chat
// Completions API's (openai.go).
type responses struct{ openai }

var _ Format = responses{}

func (responses) Answers(method, path string) bool {
	return method == http.MethodPost && path == PathResponses
}

func (responses) Route() string { return "POST " + PathResponses }

// Read reads model and stream, and the prompt from input: a string, or
// the last user message among its items (content a string or input_text
// parts).
func (responses) Read(_ *url.URL, body []byte) Request {
	var v struct {
		Model  string          `json:"model"`
		Stream bool            `json:"stream"`
		Input  json.RawMessage `json:"input"`
	}
	if json.Unmarshal(body, &v) != nil {
		return Request{}
	}
	r := Request{Model: v.Model, Stream: v.Stream}
	if json.Unmarshal(v.Input, &r.Prompt) == nil {
		return r
	}
	var items []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(v.Input, &items) != nil {
		return r
	}
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].Role == "user" {
			r.Prompt = contentText(items[i].Content, "input_text", "text")
			break
		}
	}
	return r
}

// Objects of the Responses API, with their fields in the order the API
// sends them.
type (
	respPart struct {
		Type        string   `json:"type"`
		Annotations []string `json:"annotations"`
		Logprobs    []string `json:"logprobs"`
		Text        string   `json:"text"`
	}
	respItem struct {
		ID      string     `json:"id"`
		Type    string     `json:"type"`
		Status  string     `json:"status"`
		Content []respPart `json:"content"`
		Role    string     `json:"role"`
	}
	respUsage struct {
		InputTokens        int `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens        int `json:"output_tokens"`
		OutputTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
		TotalTokens int `json:"total_tokens"`
	}
	// respCutBy is incomplete_details: why a response was cut short.
	respCutBy struct {
		Reason string `json:"reason"`
	}
	respError struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	respObject struct {
		ID                 string     `json:"id"`
		Object             string     `json:"object"`
		CreatedAt          int64      `json:"created_at"`
		Status             string     `json:"status"`
		Background         bool       `json:"background"`
		Error              *respError `json:"error"`
		IncompleteDetails  *respCutBy `json:"incomplete_details"`
		Instructions       *string    `json:"instructions"`
		MaxOutputTokens    *int       `json:"max_output_tokens"`
		Model              string     `json:"model"`
		Output             []respItem `json:"output"`
		ParallelToolCalls  bool       `json:"parallel_tool_calls"`
		PreviousResponseID *string    `json:"previous_response_id"`
		Reasoning          struct {
			Effort  *string `json:"effort"`
			Summary *string `json:"summary"`
		} `json:"reasoning"`
		Store       bool    `json:"store"`
		Temperature float64 `json:"temperature"`
		Text        struct {
			Format struct {
				Type string `json:"type"`
			} `json:"format"`
		} `json:"text"`
		ToolChoice string            `json:"tool_choice"`
		Tools      []string          `json:"tools"`
		TopP       float64           `json:"top_p"`
		Truncation string            `json:"truncation"`
		Usage      *respUsage        `json:"usage"`
		User       *string           `json:"user"`
		Metadata   map[string]string `json:"metadata"`
	}
)

// response returns the response object in a state: in_progress (no
// output, no usage), completed (the message and its usage), incomplete
// (the same, cut by max_output_tokens) or failed.
func (responses) response(p Params, status string) respObject {
	r := respObject{ID: mockID("resp_mock", p), Object: "response", CreatedAt: p.Now.Unix(), Status: status,
		Model: p.Model, Output: []respItem{}, ParallelToolCalls: true, Store: true, Temperature: 1,
		ToolChoice: "auto", Tools: []string{}, TopP: 1, Truncation: "disabled", Metadata: map[string]string{}}
	r.Text.Format.Type = "text"
	if status == "incomplete" {
		r.IncompleteDetails = &respCutBy{Reason: "max_output_tokens"}
	}
	if status == "completed" || status == "incomplete" {
		r.Output = []respItem{respMessage(p, status, []respPart{respText(p.text())})}
		u := &respUsage{InputTokens: inputTokens, OutputTokens: p.outputTokens(), TotalTokens: inputTokens + p.outputTokens()}
		r.Usage = u
	}
	return r
}

func respText(text string) respPart {
	return respPart{Type: "output_text", Annotations: []string{}, Logprobs: []string{}, Text: text}
}

func respMessage(p Params, status string, content []respPart) respItem {
	return respItem{ID: mockID("msg_mock", p), Type: "message", Status: status, Content: content, Role: "assistant"}
}

// respEvents numbers events: each data object gets its type and
// sequence_number first, then its own fields.
type respEvents struct{ out []string }

func (e *respEvents) add(typ string, fields string) {
	data := `{"type":"` + typ + `","sequence_number":` + strconv.Itoa(len(e.out))
	if fields != "{}" {
		data += "," + fields[1:]
	} else {
		data += "}"
	}
	e.out = append(e.out, sseEvent(typ, data))
}

func (f responses) Events(p Params) []string {
	var e respEvents
	type wrap struct {
		Response respObject `json:"response"`
	}
	e.add("response.created", jsonString(wrap{f.response(p, "in_progress")}))
	e.add("response.in_progress", jsonString(wrap{f.response(p, "in_progress")}))
	itemID := mockID("msg_mock", p)
	type itemEvent struct {
		OutputIndex int      `json:"output_index"`
		Item        respItem `json:"item"`
	}
	type partEvent struct {
		ItemID       string   `json:"item_id"`
		OutputIndex  int      `json:"output_index"`
		ContentIndex int      `json:"content_index"`
		Part         respPart `json:"part"`
	}
	type deltaEvent struct {
		ItemID       string   `json:"item_id"`
		OutputIndex  int      `json:"output_index"`
		ContentIndex int      `json:"content_index"`
		Delta        string   `json:"delta"`
		Logprobs     []string `json:"logprobs"`
	}
	type doneEvent struct {
		ItemID       string   `json:"item_id"`
		OutputIndex  int      `json:"output_index"`
		ContentIndex int      `json:"content_index"`
		Text         string   `json:"text"`
		Logprobs     []string `json:"logprobs"`
	}
	e.add("response.output_item.added", jsonString(itemEvent{0, respMessage(p, "in_progress", []respPart{})}))
	e.add("response.content_part.added", jsonString(partEvent{itemID, 0, 0, respText("")}))
	for _, d := range mockDeltas(p.text()) {
		e.add("response.output_text.delta", jsonString(deltaEvent{itemID, 0, 0, d, []string{}}))
	}
	e.add("response.output_text.done", jsonString(doneEvent{itemID, 0, 0, p.text(), []string{}}))
	e.add("response.content_part.done", jsonString(partEvent{itemID, 0, 0, respText(p.text())}))
	e.add("response.output_item.done", jsonString(itemEvent{0, respMessage(p, "completed", []respPart{respText(p.text())})}))
	e.add("response.completed", jsonString(wrap{f.response(p, "completed")}))
	return e.out
}

// StreamError is response.failed, numbered after the n events sent: its
// response has status failed and error {code: the fault's type, message}.
func (f responses) StreamError(p Params, n int) string {
	r := f.response(p, "failed")
	s := p.Fault.SSEError
	r.Error = &respError{Code: sseErrorType(s), Message: sseErrorMessage(s)}
	e := respEvents{out: make([]string, n)}
	e.add("response.failed", jsonString(struct {
		Response respObject `json:"response"`
	}{r}))
	return e.out[n]
}

// Keepalive is an SSE comment, as for chat completions: a comment carries
// no sequence_number, so the events after it keep their numbers.
func (responses) Keepalive() string { return sseComment }

// Closing: response.completed.
func (responses) Closing(Params) int { return 1 }

// Malformed is a response.output_text.delta event (the n-th event when it
// is one, else the first), numbered n, its data cut mid-JSON.
func (f responses) Malformed(p Params, n int) string {
	events := f.Events(p)
	i := deltaAt(p, events, n, "event: response.output_text.delta\n")
	ev := strings.Replace(events[i], `"sequence_number":`+strconv.Itoa(i)+",", `"sequence_number":`+strconv.Itoa(n)+",", 1)
	return cutData(ev)
}

// Message is the completed response object, or the incomplete one
// (max_output_tokens) for an answer cut short.
func (f responses) Message(p Params) string {
	status := "completed"
	if p.truncated() {
		status = "incomplete"
	}
	return jsonString(f.response(p, status)) + "\n"
}

// Side answers POST /v1/responses/input_tokens (the token count), and the
// model requests as the Chat Completions API does.
func (f responses) Side(method, path string, p Params) (int, string, bool) {
	if method == http.MethodPost && path == PathResponses+"/input_tokens" {
		return 200, `{"object":"response.input_tokens","input_tokens":` + strconv.Itoa(inputTokens) + "}\n", true
	}
	return f.openai.Side(method, path, p)
}
