package provider

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// GeminiProvider is the provider name of the Gemini API client, as New,
// Error.Provider and traces spell it.
const GeminiProvider = "gemini"

// GeminiBaseURL is the Gemini API's base URL (GOOGLE_GEMINI_BASE_URL
// replaces it for Gemini CLI).
const GeminiBaseURL = "https://generativelanguage.googleapis.com"

// Gemini streams from the Gemini API (POST
// /v1beta/models/{model}:streamGenerateContent?alt=sse, the key in
// x-goog-api-key): SSE data frames without an event field, each a
// GenerateContentResponse whose candidates[0].content.parts hold text; the
// frame that ends the answer carries candidates[0].finishReason (STOP,
// MAX_TOKENS, SAFETY, ...). There is no [DONE].
//
// A response is complete only when a finishReason arrives; a stream that
// ends before it is KindIncomplete. A frame holding an "error" object (the
// API's in-stream error) is KindSSEError with ErrorType = error.status
// (UNAVAILABLE, RESOURCE_EXHAUSTED, ...), Code = error.code and Message =
// error.message. An HTTP error's body is google.rpc.Status inside "error":
// ErrorType = its status, Code = its code; a RetryInfo detail's retryDelay
// ("2s", "1.5s") is the Retry-After when no header gives one. Text parts
// marked thought are streamed content but not text.
type Gemini struct{ base }

var _ Client = (*Gemini)(nil)

func init() { register(GeminiProvider, func(cfg Config) Client { return NewGemini(cfg) }) }

// NewGemini returns a client for the Gemini API.
func NewGemini(cfg Config) *Gemini {
	g := &Gemini{}
	g.base = newBase(GeminiProvider, cfg, geminiWire{cfg: cfg})
	return g
}

// Stream makes one attempt. See Client.
func (g *Gemini) Stream(ctx context.Context, req Request) (*Response, error) {
	return g.stream(ctx, req)
}

type geminiWire struct{ cfg Config }

type (
	geminiPart struct {
		Text    string `json:"text"`
		Thought bool   `json:"thought,omitempty"`
	}
	geminiContent struct {
		Role  string       `json:"role,omitempty"`
		Parts []geminiPart `json:"parts"`
	}
	geminiRequest struct {
		Contents          []geminiContent `json:"contents"`
		SystemInstruction *geminiContent  `json:"systemInstruction,omitempty"`
		GenerationConfig  struct {
			MaxOutputTokens int `json:"maxOutputTokens"`
		} `json:"generationConfig"`
	}
)

func (w geminiWire) request(ctx context.Context, req Request) (*http.Request, error) {
	body := geminiRequest{Contents: make([]geminiContent, 0, len(req.Messages))}
	for _, m := range req.Messages {
		role := m.Role
		if role == "assistant" {
			role = "model"
		}
		body.Contents = append(body.Contents, geminiContent{role, []geminiPart{{Text: m.Content}}})
	}
	if req.System != "" {
		body.SystemInstruction = &geminiContent{Parts: []geminiPart{{Text: req.System}}}
	}
	body.GenerationConfig.MaxOutputTokens = req.MaxTokens
	if req.MaxTokens == 0 {
		body.GenerationConfig.MaxOutputTokens = DefaultMaxTokens
	}
	base := strings.TrimSuffix(strings.TrimRight(cmp.Or(w.cfg.BaseURL, GeminiBaseURL), "/"), "/v1beta")
	u := base + "/v1beta/models/" + url.PathEscape(req.Model) + ":streamGenerateContent?alt=sse"
	hr, err := postJSON(ctx, u, body)
	if err != nil {
		return nil, err
	}
	if w.cfg.APIKey != "" {
		hr.Header.Set("x-goog-api-key", w.cfg.APIKey)
	}
	return hr, nil
}

// requestIDHeader: the API sends none; the mock sends x-request-id.
func (geminiWire) requestIDHeader() string { return "X-Request-Id" }

// geminiStatus is google.rpc.Status, the "error" object of an error body
// or of a stream's frame.
type geminiStatus struct {
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Status  string          `json:"status"`
	Details []struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
	} `json:"details"`
}

// fill sets e's type, code and message, and its Retry-After from a
// RetryInfo detail when e has none yet.
func (s *geminiStatus) fill(e *Error) {
	e.ErrorType, e.Code, e.Message = s.Status, rawCode(s.Code), s.Message
	for _, d := range s.Details {
		if !strings.HasSuffix(d.Type, "google.rpc.RetryInfo") || e.HasRetryAfter {
			continue
		}
		if v, ok := ParseRetryDelay(d.RetryDelay); ok {
			e.RetryAfter, e.HasRetryAfter = v, true
		}
	}
}

func (geminiWire) httpError(e *Error, body []byte) {
	var b struct {
		Error *geminiStatus `json:"error"`
	}
	// The API answers some errors with a one-element array of the body.
	if json.Unmarshal(body, &b) != nil {
		var arr []struct {
			Error *geminiStatus `json:"error"`
		}
		if json.Unmarshal(body, &arr) != nil || len(arr) == 0 {
			return
		}
		b.Error = arr[0].Error
	}
	if b.Error != nil {
		b.Error.fill(e)
	}
}

// geminiChunk holds the fields of a GenerateContentResponse this client
// reads.
type geminiChunk struct {
	Candidates []struct {
		Content struct {
			Parts []geminiPart `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string        `json:"modelVersion"`
	Error        *geminiStatus `json:"error"`
}

func (geminiWire) event(st *streamState, ev SSEEvent) (bool, *Error) {
	if ev.Data == "" || ev.Data == "[DONE]" {
		return false, nil // not part of the API; the finishReason ends the answer
	}
	var c geminiChunk
	if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
		return false, parseErr(ev, err)
	}
	if c.Error != nil {
		e := &Error{Kind: KindSSEError}
		c.Error.fill(e)
		return false, e
	}
	if c.ModelVersion != "" {
		st.resp.Model = c.ModelVersion
	}
	if u := c.UsageMetadata; u != nil {
		st.resp.Usage = Usage{InputTokens: u.PromptTokenCount, OutputTokens: u.CandidatesTokenCount}
	}
	if len(c.Candidates) == 0 {
		return false, nil
	}
	cand := c.Candidates[0]
	for _, p := range cand.Content.Parts {
		if p.Thought {
			st.streamed = true
			continue
		}
		st.addText(p.Text)
	}
	if cand.FinishReason != "" {
		st.resp.StopReason = cand.FinishReason
		return true, nil
	}
	return false, nil
}

// ParseRetryDelay reads RetryInfo's retryDelay, a google.protobuf.Duration
// in its JSON form: seconds with up to nine fractional digits and an "s"
// ("2s", "1.5s", "0.500s"). ok is false for anything else, a negative
// value included; values are capped at one year, like ParseRetryAfter's.
func ParseRetryDelay(s string) (time.Duration, bool) {
	num, found := strings.CutSuffix(strings.TrimSpace(s), "s")
	if !found || num == "" {
		return 0, false
	}
	whole, frac, _ := strings.Cut(num, ".")
	if whole == "" || len(frac) > 9 || !digits(whole) || !digits(frac) {
		return 0, false
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return durationOf(v, float64(time.Second)), true
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
