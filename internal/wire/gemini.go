package wire

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// The Gemini API (generativelanguage.googleapis.com):
// POST /v1beta/models/{model}:streamGenerateContent?alt=sse and
// POST /v1beta/models/{model}:generateContent.
const (
	ProviderGemini = "gemini"
	PathGemini     = "/v1beta/models/"
)

// gemini is the Gemini API's wire format (what Gemini CLI and Google's Gen
// AI SDKs speak). The model and whether the answer streams come from the
// path, not the body. A stream is data: frames without event: lines, each
// a GenerateContentResponse: candidates[0].content.parts[0].text (role
// model, index 0), usageMetadata, modelVersion and responseId; the last
// frame also carries finishReason "STOP". There is no [DONE]: the stream
// ends when the body ends. A whole answer is one GenerateContentResponse.
// Error bodies are google.rpc.Status in an "error" object: {"error":
// {"code": the HTTP status, "message", "status": its google.rpc.Code name,
// "details": [RetryInfo with retryDelay when the fault has a retry-after]}};
// an in-stream error is a data: frame with that same "error" object.
//
// :streamGenerateContent is answered as SSE with or without ?alt=sse (the
// real API answers a JSON array without it; Gemini CLI and the Gen AI SDKs
// always ask for SSE). The real API sends no request-id header; the mock sends x-request-id so
// that an attempt can be matched with its journal entry, and responseId
// is derived from it.
type gemini struct{}

var _ Format = gemini{}

// geminiMethods are the methods of a model that answer: the streamed one
// and the whole one.
const (
	geminiStream = "streamGenerateContent"
	geminiWhole  = "generateContent"
)

// geminiPath splits a request path /{v1,v1beta,v1alpha}/models/{model}:{method}
// into its model and method; ok is false for any other path, or a model
// that is empty or holds a "/".
func geminiPath(path string) (model, method string, ok bool) {
	rest, found := "", false
	for _, v := range []string{"/v1beta/models/", "/v1/models/", "/v1alpha/models/"} {
		if rest, found = strings.CutPrefix(path, v); found {
			break
		}
	}
	i := strings.LastIndexByte(rest, ':')
	if !found || i <= 0 || strings.Contains(rest[:i], "/") {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

func (gemini) Answers(method, path string) bool {
	_, m, ok := geminiPath(path)
	return ok && method == http.MethodPost && (m == geminiStream || m == geminiWhole)
}

func (gemini) Route() string {
	return "POST " + PathGemini + "{model}:" + geminiWhole + "|" + geminiStream
}

func (gemini) DefaultModel() string { return "gemini-2.5-flash" }

// Client: Gemini CLI and @google/genai append /v1beta/models/... to
// GOOGLE_GEMINI_BASE_URL; the key is GEMINI_API_KEY alone (@google/genai
// warns when GOOGLE_API_KEY is set too).
func (gemini) Client() Client {
	return Client{BaseURLVar: "GOOGLE_GEMINI_BASE_URL", KeyVar: "GEMINI_API_KEY", SDKPreset: "gemini-sdk"}
}

// Read takes the model from the path (percent-decoded once, invalid UTF-8
// and control characters replaced, so that a hostile path cannot forge a
// log line), streams for :streamGenerateContent, the prompt from the
// body's last user content (role "user" or none): its text parts joined by
// newlines, and whether generationConfig.responseMimeType asks for JSON.
func (gemini) Read(u *url.URL, body []byte) Request {
	if u == nil {
		return Request{}
	}
	model, method, ok := geminiPath(u.Path)
	if !ok || method != geminiStream && method != geminiWhole {
		return Request{}
	}
	r := Request{Model: cleanModel(model), Stream: method == geminiStream}
	var v struct {
		GenerationConfig struct {
			ResponseMimeType string `json:"responseMimeType"`
		} `json:"generationConfig"`
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text *string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal(body, &v) != nil {
		return r
	}
	r.WantsJSON = strings.HasPrefix(strings.ToLower(v.GenerationConfig.ResponseMimeType), "application/json")
	for i := len(v.Contents) - 1; i >= 0; i-- {
		if c := v.Contents[i]; c.Role == "user" || c.Role == "" {
			var texts []string
			for _, p := range c.Parts {
				if p.Text != nil {
					texts = append(texts, *p.Text)
				}
			}
			r.Prompt = strings.Join(texts, "\n")
			break
		}
	}
	return r
}

// cleanModel makes a model read from a path safe to journal and echo:
// valid UTF-8, without control characters.
func cleanModel(m string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(m, "\uFFFD"))
}

// Headers: x-request-id (the mock's own, see gemini), and the fixed
// headers Google's front end sends.
func (gemini) Headers(p Params, _ int) []Header {
	return []Header{
		{"x-request-id", p.RequestID},
		{"Vary", "Origin, X-Origin, Referer"},
		{"Server", "scaffolding on HTTPServer2"},
		{"X-XSS-Protection", "0"},
		{"X-Frame-Options", "SAMEORIGIN"},
		{"X-Content-Type-Options", "nosniff"},
	}
}

// Objects of the Gemini API, with their fields in the order the API sends
// them.
type (
	geminiPart struct {
		Text string `json:"text"`
	}
	geminiContent struct {
		Parts []geminiPart `json:"parts"`
		Role  string       `json:"role"`
	}
	geminiCandidate struct {
		Content      geminiContent `json:"content"`
		FinishReason string        `json:"finishReason,omitempty"`
		Index        int           `json:"index"`
	}
	geminiUsage struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
		TotalTokenCount      int `json:"totalTokenCount"`
	}
	geminiResponse struct {
		Candidates    []geminiCandidate `json:"candidates"`
		UsageMetadata geminiUsage       `json:"usageMetadata"`
		ModelVersion  string            `json:"modelVersion"`
		ResponseID    string            `json:"responseId"`
	}
)

// response is a GenerateContentResponse holding text, finished or not;
// out is the candidates' token count so far.
func (gemini) response(p Params, text string, finished bool, out int) geminiResponse {
	c := geminiCandidate{Content: geminiContent{[]geminiPart{{text}}, "model"}}
	if finished {
		c.FinishReason = "STOP"
	}
	return geminiResponse{[]geminiCandidate{c}, geminiUsage{inputTokens, out, inputTokens + out},
		p.Model, mockID("mock", p)}
}

// Events: one data: frame per delta, the last with finishReason STOP.
func (f gemini) Events(p Params) []string {
	ds := mockDeltas(p.text())
	out := make([]string, 0, len(ds))
	words := 0
	for i, d := range ds {
		words += len(strings.Fields(d))
		out = append(out, "data: "+jsonString(f.response(p, d, i == len(ds)-1, words))+"\n\n")
	}
	return out
}

// Closing: the chunk with finishReason, the last.
func (gemini) Closing(Params) int { return 1 }

// Malformed is a chunk (the n-th before the last, else the first), its data
// cut mid-JSON.
func (f gemini) Malformed(p Params, n int) string {
	events := f.Events(p)
	return cutData(events[deltaAt(p, events, n, `"text":`)])
}

// Message: finishReason STOP, or MAX_TOKENS for an answer cut short.
// Keepalive is an SSE comment line. The Gemini API documents no keepalive
// for streamGenerateContent; a comment is the one frame that every SSE
// parser (the genai SDKs' among them) is bound to drop, and it still
// resets an idle timer that counts bytes rather than frames, which is
// what a stall with keepalives tests.
func (gemini) Keepalive() string { return sseComment }

func (f gemini) Message(p Params) string {
	r := f.response(p, p.text(), true, p.outputTokens())
	if p.truncated() {
		r.Candidates[0].FinishReason = "MAX_TOKENS"
	}
	return jsonString(r) + "\n"
}

// Error bodies: google.rpc.Status inside "error".
type (
	geminiDetail struct {
		Type       string            `json:"@type"`
		Violations []geminiViolation `json:"violations,omitempty"`
		RetryDelay string            `json:"retryDelay,omitempty"`
	}
	// geminiViolation is one violation of a google.rpc.QuotaFailure: the
	// quota a 429 RESOURCE_EXHAUSTED ran into.
	geminiViolation struct {
		QuotaMetric     string            `json:"quotaMetric"`
		QuotaID         string            `json:"quotaId"`
		QuotaDimensions map[string]string `json:"quotaDimensions"`
		QuotaValue      string            `json:"quotaValue"`
	}
	geminiStatus struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Status  string         `json:"status"`
		Details []geminiDetail `json:"details,omitempty"`
	}
	geminiErrorBody struct {
		Error geminiStatus `json:"error"`
	}
)

// StreamError is a data: frame holding the error object of the fault's
// type: a google.rpc.Code name (UNAVAILABLE, RESOURCE_EXHAUSTED, ...) as
// is, or an Anthropic or OpenAI type read as the status it stands for
// (overloaded_error, the default, is 503 UNAVAILABLE).
func (gemini) StreamError(p Params, _ int) string {
	f := p.Fault.SSEError
	code, status := GeminiCode(sseErrorType(f))
	msg := f.Message
	if msg == "" {
		msg = geminiMessage(status, sseErrorType(f))
	}
	return "data: " + jsonString(geminiErrorBody{geminiStatus{Code: code, Message: msg, Status: status}}) + "\n\n"
}

// ErrorBody: the status name GeminiStatus gives the HTTP status, unless the
// scenario's errorType is a google.rpc.Code name; with a retry-after of N
// seconds, a RetryInfo detail with retryDelay "Ns".
func (gemini) ErrorBody(p Params) string {
	f := p.Fault
	status := GeminiStatus(f.Status)
	if _, ok := geminiCodes[f.ErrorType]; ok {
		status = f.ErrorType
	}
	msg := f.Message
	if msg == "" {
		msg = geminiMessage(status, f.ErrorType)
	}
	s := geminiStatus{Code: f.Status, Message: msg, Status: status}
	if b, ok := p.limited(); ok {
		// The account's 429: the quota it ran into, as the API names it,
		// then when to retry.
		s.Details = append(s.Details, geminiDetail{Type: "type.googleapis.com/google.rpc.QuotaFailure",
			Violations: []geminiViolation{geminiQuota(p, b)}})
	}
	if f.RetryAfter != nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(*f.RetryAfter), 64); err == nil && v >= 0 {
			s.Details = append(s.Details, geminiDetail{Type: "type.googleapis.com/google.rpc.RetryInfo",
				RetryDelay: strconv.FormatFloat(v, 'f', -1, 64) + "s"})
		}
	}
	return jsonString(geminiErrorBody{s}) + "\n"
}

// geminiCodes are the google.rpc.Code names and the HTTP status each is
// sent with.
var geminiCodes = map[string]int{
	"CANCELLED": 499, "UNKNOWN": 500, "INVALID_ARGUMENT": 400, "DEADLINE_EXCEEDED": 504,
	"NOT_FOUND": 404, "ALREADY_EXISTS": 409, "PERMISSION_DENIED": 403, "RESOURCE_EXHAUSTED": 429,
	"FAILED_PRECONDITION": 400, "ABORTED": 409, "OUT_OF_RANGE": 400, "UNIMPLEMENTED": 501,
	"INTERNAL": 500, "UNAVAILABLE": 503, "DATA_LOSS": 500, "UNAUTHENTICATED": 401,
}

// GeminiStatus returns the google.rpc.Code name the mock sends with an
// HTTP status, as Google maps them: 400 INVALID_ARGUMENT, 401
// UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND, 409 ABORTED, 429
// RESOURCE_EXHAUSTED, 499 CANCELLED, 500 INTERNAL, 501 UNIMPLEMENTED, 503
// (and 502, 529) UNAVAILABLE, 504 (and 408) DEADLINE_EXCEEDED; any other
// 4xx FAILED_PRECONDITION, any other status UNKNOWN.
func GeminiStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 500:
		return "INTERNAL"
	case 501:
		return "UNIMPLEMENTED"
	case 502, 503, 529:
		return "UNAVAILABLE"
	case 408, 504:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 400 && status < 500 {
		return "FAILED_PRECONDITION"
	}
	return "UNKNOWN"
}

// GeminiCode returns the code and google.rpc.Code name of an in-stream
// error of a fault's type: a Code name as is, an Anthropic or OpenAI type
// as the status it stands for (geminiTypes), anything else 500 INTERNAL.
func GeminiCode(typ string) (int, string) {
	if code, ok := geminiCodes[typ]; ok {
		return code, typ
	}
	if code, ok := geminiTypes[typ]; ok {
		return code, GeminiStatus(code)
	}
	return 500, "INTERNAL"
}

// geminiTypes are the HTTP statuses the Anthropic and OpenAI error types
// stand for, read from a fault's type in the Gemini format.
var geminiTypes = map[string]int{
	"overloaded_error": 503, "rate_limit_error": 429, "rate_limit_exceeded": 429, "requests": 429,
	"insufficient_quota": 429, "api_error": 500, "server_error": 500, "invalid_request_error": 400,
	"invalid_prompt": 400, "request_too_large": 400, "authentication_error": 401, "invalid_api_key": 401,
	"permission_error": 403, "billing_error": 403, "not_found_error": 404, "model_not_found": 404,
	"timeout_error": 504,
}

// geminiMessage is the message of an error sent with a status name when
// the scenario gives none: the Gemini API's usual one, or for an Anthropic
// or OpenAI type that is not a status name that type's usual message.
// RESOURCE_EXHAUSTED's says nothing of quota, which clients read as a
// quota that will not come back.
func geminiMessage(status, typ string) string {
	if _, isStatus := geminiCodes[typ]; typ != "" && !isStatus && typ != "overloaded_error" {
		return defaultMessage(typ)
	}
	switch status {
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION":
		return "Request contains an invalid argument."
	case "UNAUTHENTICATED":
		return "API key not valid. Please pass a valid API key."
	case "PERMISSION_DENIED":
		return "The caller does not have permission"
	case "NOT_FOUND":
		return "Requested entity was not found."
	case "RESOURCE_EXHAUSTED":
		return "Resource has been exhausted. Please try again later."
	case "UNAVAILABLE":
		return "The model is overloaded. Please try again later."
	case "DEADLINE_EXCEEDED":
		return "Deadline expired before operation could complete."
	case "INTERNAL", "UNKNOWN":
		return "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
	}
	return "The operation was aborted."
}

// Side answers GET /v1beta/models (the scenario's models), GET
// /v1beta/models/{model} and POST
// /v1beta/models/{model}:countTokens ({"totalTokens":25}), as Gemini CLI
// and the Gen AI SDKs send them beside the answer.
func (gemini) Side(method, path string, p Params) (int, string, bool) {
	type model struct {
		Name                       string   `json:"name"`
		Version                    string   `json:"version"`
		DisplayName                string   `json:"displayName"`
		InputTokenLimit            int      `json:"inputTokenLimit"`
		OutputTokenLimit           int      `json:"outputTokenLimit"`
		SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
	}
	mk := func(id string) model {
		return model{"models/" + id, "001", id, 1048576, 65536, []string{geminiWhole, "countTokens", geminiStream}}
	}
	if _, verb, ok := geminiPath(path); ok && method == http.MethodPost && verb == "countTokens" {
		return 200, `{"totalTokens":` + strconv.Itoa(inputTokens) + "}\n", true
	}
	if method != http.MethodGet {
		return 0, "", false
	}
	// Not /v1/models: that is the Anthropic and OpenAI model list.
	for _, v := range []string{"/v1beta/models", "/v1alpha/models"} {
		if path == v {
			list := struct {
				Models []model `json:"models"`
			}{[]model{}}
			for _, m := range p.Models {
				list.Models = append(list.Models, mk(m))
			}
			return 200, jsonString(list) + "\n", true
		}
		if id, ok := strings.CutPrefix(path, v+"/"); ok && id != "" && !strings.ContainsAny(id, "/:") {
			return 200, jsonString(mk(cleanModel(id))) + "\n", true
		}
	}
	return 0, "", false
}
