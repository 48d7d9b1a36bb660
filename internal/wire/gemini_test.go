package wire

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// The model and whether the answer streams come from the path; a path
// that is not a model's generate method is not an answer request.
func TestGeminiRead(t *testing.T) {
	t.Parallel()
	body := `{"contents":[{"role":"user","parts":[{"text":"first"}]},{"role":"model","parts":[{"text":"x"}]},` +
		`{"role":"user","parts":[{"text":"a"},{"inlineData":{}},{"text":"b"}]}],"generationConfig":{}}`
	for _, tc := range []struct {
		name, path string
		body       string
		answers    bool
		want       Request
	}{
		{"stream", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", body, true,
			Request{Model: "gemini-2.5-pro", Stream: true, Prompt: "a\nb"}},
		{"whole", "/v1beta/models/gemini-2.5-flash-lite:generateContent", `{"contents":[{"parts":[{"text":"route me"}]}]}`, true,
			Request{Model: "gemini-2.5-flash-lite", Prompt: "route me"}},
		{"v1", "/v1/models/m:generateContent", `{}`, true, Request{Model: "m"}},
		{"a routing call asks for JSON", "/v1beta/models/gemini-3.5-flash-lite:generateContent",
			`{"contents":[{"role":"user","parts":[{"text":"route"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{}}}`, true,
			Request{Model: "gemini-3.5-flash-lite", Prompt: "route", WantsJSON: true}},
		{"escaped colon in the model", "/v1beta/models/a%3Ab:generateContent", `{}`, true, Request{Model: "a:b"}},
		{"control characters", "/v1beta/models/a%0Aforged%00:generateContent", `{}`, true, Request{Model: "a\uFFFDforged\uFFFD"}},
		{"invalid UTF-8", "/v1beta/models/a%FF:generateContent", `{}`, true, Request{Model: "a\uFFFD"}},
		{"not JSON keeps the path's fields", "/v1beta/models/m:streamGenerateContent", `{"contents":`, true,
			Request{Model: "m", Stream: true}},
		{"count tokens is a side request", "/v1beta/models/m:countTokens", `{}`, false, Request{}},
		{"no model", "/v1beta/models/:generateContent", `{}`, false, Request{}},
		{"escaped slash", "/v1beta/models/a%2Fb:generateContent", `{}`, false, Request{}},
		{"tuned model path", "/v1beta/tunedModels/t:generateContent", `{}`, false, Request{}},
		{"model list", "/v1beta/models", `{}`, false, Request{}},
	} {
		u, err := url.Parse(tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := (gemini{}).Answers(http.MethodPost, u.Path); got != tc.answers {
			t.Errorf("%s: Answers = %v, want %v", tc.name, got, tc.answers)
		}
		if got := (gemini{}).Read(u, []byte(tc.body)); got != tc.want {
			t.Errorf("%s: Read mismatch (-want +got):\n%s", tc.name, cmp.Diff(tc.want, got))
		}
	}
	if (gemini{}).Answers(http.MethodGet, "/v1beta/models/m:generateContent") {
		t.Error("a GET is not an answer request")
	}
}

// Error bodies are google.rpc.Status with the status name of the HTTP
// code, or the scenario's errorType when it is a name; a retry-after
// becomes RetryInfo's retryDelay.
func TestGeminiErrorBody(t *testing.T) {
	t.Parallel()
	ra, frac, date := "2", "1.5", "Wed, 21 Oct 2026 07:28:00 GMT"
	type detail struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
	}
	type status struct {
		Code    int      `json:"code"`
		Message string   `json:"message"`
		Status  string   `json:"status"`
		Details []detail `json:"details"`
	}
	retryInfo := "type.googleapis.com/google.rpc.RetryInfo"
	for _, tc := range []struct {
		name  string
		fault Fault
		want  status
	}{
		{"429 with retry-after", Fault{Status: 429, RetryAfter: &ra}, status{429, "Resource has been exhausted. Please try again later.",
			"RESOURCE_EXHAUSTED", []detail{{retryInfo, "2s"}}}},
		{"fractional retry-after", Fault{Status: 429, RetryAfter: &frac, Message: "m"}, status{429, "m", "RESOURCE_EXHAUSTED", []detail{{retryInfo, "1.5s"}}}},
		{"a date is no retryDelay", Fault{Status: 503, RetryAfter: &date}, status{503, "The model is overloaded. Please try again later.", "UNAVAILABLE", nil}},
		{"errorType a status name", Fault{Status: 400, ErrorType: "FAILED_PRECONDITION", Message: "User location is not supported for the API use."},
			status{400, "User location is not supported for the API use.", "FAILED_PRECONDITION", nil}},
		{"errorType of another format", Fault{Status: 429, ErrorType: "insufficient_quota"},
			status{429, defaultMessage("insufficient_quota"), "RESOURCE_EXHAUSTED", nil}},
		{"401", Fault{Status: 401}, status{401, "API key not valid. Please pass a valid API key.", "UNAUTHENTICATED", nil}},
		{"409", Fault{Status: 409}, status{409, "The operation was aborted.", "ABORTED", nil}},
		{"529", Fault{Status: 529}, status{529, "The model is overloaded. Please try again later.", "UNAVAILABLE", nil}},
	} {
		p := params(ProviderGemini)
		p.Fault = tc.fault
		var got struct{ Error status }
		if err := json.Unmarshal([]byte(gemini{}.ErrorBody(p)), &got); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, got.Error); diff != "" {
			t.Errorf("%s: ErrorBody mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestGeminiStatus(t *testing.T) {
	t.Parallel()
	want := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
		409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL", 501: "UNIMPLEMENTED",
		503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED", 402: "FAILED_PRECONDITION", 418: "FAILED_PRECONDITION", 507: "UNKNOWN"}
	for code, name := range want {
		if got := GeminiStatus(code); got != name {
			t.Errorf("GeminiStatus(%d) = %s, want %s", code, got, name)
		}
	}
	// A fault's type in a stream: a status name as is, another format's
	// type as the status it stands for.
	for typ, w := range map[string]struct {
		code   int
		status string
	}{
		"":                   {503, "UNAVAILABLE"}, // sseError's default type is overloaded_error
		"UNAVAILABLE":        {503, "UNAVAILABLE"},
		"RESOURCE_EXHAUSTED": {429, "RESOURCE_EXHAUSTED"},
		"rate_limit_error":   {429, "RESOURCE_EXHAUSTED"},
		"api_error":          {500, "INTERNAL"},
		"invalid_request":    {500, "INTERNAL"},
		"timeout_error":      {504, "DEADLINE_EXCEEDED"},
	} {
		if code, status := GeminiCode(sseErrorType(&SSEError{Type: typ})); code != w.code || status != w.status {
			t.Errorf("GeminiCode(%q) = %d %s, want %d %s", typ, code, status, w.code, w.status)
		}
	}
}

// A request that asks for JSON gets {} without a scenario's text, the
// scenario's text with one.
func TestGeminiWantsJSON(t *testing.T) {
	t.Parallel()
	p := params(ProviderGemini)
	p.WantsJSON, p.NonStream = true, true
	var v struct {
		Candidates []struct {
			Content struct{ Parts []struct{ Text string } }
		}
	}
	for _, tc := range []struct{ text, want string }{{"", "{}"}, {"scenario text", "scenario text"}} {
		p.Fault.Text = tc.text
		if err := json.Unmarshal([]byte(gemini{}.Message(p)), &v); err != nil || v.Candidates[0].Content.Parts[0].Text != tc.want {
			t.Errorf("text %q: answer %+v (%v), want %q", tc.text, v, err, tc.want)
		}
	}
}

// Side requests: the model list, one model, countTokens.
func TestGeminiSide(t *testing.T) {
	t.Parallel()
	p := params(ProviderGemini)
	p.Models = []string{"m", "m-large"}
	for _, tc := range []struct {
		method, path string
		ok           bool
		has          string
	}{
		{http.MethodGet, "/v1beta/models", true, `"name":"models/m-large"`},
		{http.MethodGet, "/v1/models", false, ""}, // the Anthropic and OpenAI list
		{http.MethodGet, "/v1beta/models/gemini-2.5-pro", true, `"name":"models/gemini-2.5-pro"`},
		{http.MethodPost, "/v1beta/models/gemini-2.5-pro:countTokens", true, `{"totalTokens":25}`},
		{http.MethodPost, "/v1beta/models", false, ""},
		{http.MethodGet, "/v1beta/models/a/b", false, ""},
		{http.MethodGet, "/v1/messages", false, ""},
	} {
		status, body, ok := gemini{}.Side(tc.method, tc.path, p)
		if ok != tc.ok || ok && (status != 200 || !strings.Contains(body, tc.has) || !json.Valid([]byte(body))) {
			t.Errorf("%s %s: %d %q %v", tc.method, tc.path, status, body, ok)
		}
	}
}

// FuzzGeminiRead feeds arbitrary paths and bodies to the Gemini request
// parser: it never panics, and the model it reads is valid UTF-8 without
// control characters whenever the path is an answer request's.
func FuzzGeminiRead(f *testing.F) {
	f.Add("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	f.Add("/v1beta/models/a%0A%FF:generateContent", `{"contents":[{"parts":[{"text":null}]}]}`)
	f.Add("/v1beta/models/::", `{"contents":`)
	f.Fuzz(func(t *testing.T, path, body string) {
		u, err := url.Parse(path)
		if err != nil {
			return
		}
		r := gemini{}.Read(u, []byte(body))
		if !utf8.ValidString(r.Model) || strings.ContainsFunc(r.Model, unicode.IsControl) {
			t.Errorf("model %q", r.Model)
		}
		if r.Model != "" && !(gemini{}).Answers(http.MethodPost, u.Path) {
			t.Errorf("a model %q read from %q, which is not an answer request", r.Model, u.Path)
		}
	})
}
