package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func params(provider string) Params {
	return Params{Format: Must(provider), Model: "m", RequestID: "req_mock0123456789ab000001",
		Now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
}

// Every response parses as HTTP/1.1, says keep-alive only when asked, and
// its body is what its pieces hold.
func TestResponsesParse(t *testing.T) {
	t.Parallel()
	ra := "2"
	for _, prov := range Names() {
		for _, tc := range []struct {
			name      string
			make      func(Params) *Response
			keepAlive bool
			status    int
		}{
			{"stream", Stream, false, 200},
			{"stream cut", Stream, true, 200},
			{"message", func(p Params) *Response { p.NonStream = true; return OK(p) }, false, 200},
			{"429", func(p Params) *Response { p.Fault = Fault{Status: 429, RetryAfter: &ra}; return Error(p) }, false, 429},
			{"405", func(p Params) *Response { return NotFound(p, http.MethodGet, PathOpenAI) }, false, 405},
		} {
			p := params(prov)
			p.KeepAlive = tc.keepAlive
			r := tc.make(p)
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(r.Bytes())), nil)
			if err != nil {
				t.Fatalf("%s %s: %v", prov, tc.name, err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("%s %s: body: %v", prov, tc.name, err)
			}
			if resp.StatusCode != tc.status || r.Status != tc.status {
				t.Errorf("%s %s: status %d (rendered %d), want %d", prov, tc.name, resp.StatusCode, r.Status, tc.status)
			}
			if got := resp.Header.Get("Connection") == "keep-alive"; got != tc.keepAlive {
				t.Errorf("%s %s: Connection %q, keep-alive wanted %v", prov, tc.name, resp.Header.Get("Connection"), tc.keepAlive)
			}
			if want := string(bytes.Join(r.Pieces, nil)); string(body) != want {
				t.Errorf("%s %s: body differs from the pieces", prov, tc.name)
			}
		}
	}
}

// An SSE error stops the stream after AfterEvents events with an error
// event of the type given (overloaded_error by default).
func TestSSEErrorEndsStream(t *testing.T) {
	t.Parallel()
	p := params(ProviderAnthropic)
	p.Fault.SSEError = &SSEError{AfterEvents: 2}
	r := Stream(p)
	if len(r.Pieces) != 3 {
		t.Fatalf("%d events, want 2 and the error", len(r.Pieces))
	}
	if last := string(r.Pieces[2]); !strings.HasPrefix(last, "event: error\n") || !strings.Contains(last, "overloaded_error") {
		t.Errorf("last event %q", last)
	}
}

// An sseError fault met by a request that did not ask for a stream is
// answered as the provider answers one: the error type's status and the
// format's JSON error body, not a stream (issue 29: Claude Code's
// non-streaming re-send read a stream there as a malformed response).
func TestSSEErrorNotStreamed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		prov, typ string
		status    int
		body      string
	}{
		{ProviderAnthropic, "", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_mock0123456789ab000001"}`},
		{ProviderAnthropic, "api_error", 500, `"type":"api_error"`},
		{ProviderAnthropic, "invalid_request_error", 400, `"type":"invalid_request_error"`},
		{ProviderOpenAI, "", 503, `{"error":{"message":"That model is currently overloaded with other requests.`},
		{ProviderOpenAI, "server_error", 500, `"type":"server_error","param":null,"code":"server_error"}}`},
		{ProviderOpenAI, "rate_limit_exceeded", 429, `"code":"rate_limit_exceeded"`},
		{ProviderResponses, "", 503, `"type":"server_error","param":null,"code":null}}`},
		{ProviderGemini, "", 503, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`},
		{ProviderGemini, "RESOURCE_EXHAUSTED", 429, `"status":"RESOURCE_EXHAUSTED"`},
	}
	for _, tc := range cases {
		p := params(tc.prov)
		p.NonStream = true
		p.Fault.SSEError = &SSEError{AfterEvents: 2, Type: tc.typ}
		r := OK(p)
		if r.Chunked || r.Status != tc.status {
			t.Errorf("%s %q: status %d chunked %v, want %d and a JSON body", tc.prov, tc.typ, r.Status, r.Chunked, tc.status)
		}
		if body := string(bytes.Join(r.Pieces, nil)); !strings.Contains(body, tc.body) || !json.Valid([]byte(body)) {
			t.Errorf("%s %q: body %s, want it to hold %s", tc.prov, tc.typ, body, tc.body)
		}
	}
}

// An unknown provider name is an error that lists the known ones.
func TestLookupUnknown(t *testing.T) {
	t.Parallel()
	_, err := Lookup("gemeni")
	if err == nil {
		t.Fatal("Lookup(gemeni) succeeded")
	}
	for _, n := range Names() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %s", err, n)
		}
	}
}

// TestSideAnswers: every side answer is one valid JSON object in the shape
// of the format that knows the request, whichever format the scenario has.
func TestSideAnswers(t *testing.T) {
	t.Parallel()
	for _, prov := range Names() {
		p := params(prov)
		p.Models = []string{"m", "m-large"}
		for _, tc := range []struct {
			method, path, holds string
		}{
			{"POST", "/v1/messages/count_tokens", `{"input_tokens":25}`},
			{"POST", "/v1/responses/input_tokens", `"input_tokens":25`},
			{"GET", "/v1/models", `"m-large"`},
			{"GET", "/v1/models/x-1", `"id":"x-1"`},
			{"POST", "/v1beta/models/m:countTokens", `{"totalTokens":25}`},
			{"GET", "/v1beta/models", `"name":"models/m-large"`},
			{"GET", "/v1beta/models/x-1", `"name":"models/x-1"`},
		} {
			r, ok := Side(p, tc.method, tc.path)
			if !ok {
				t.Errorf("%s: %s %s not answered", prov, tc.method, tc.path)
				continue
			}
			body := string(bytes.Join(r.Pieces, nil))
			var v map[string]any
			if err := json.Unmarshal([]byte(body), &v); err != nil || r.Status != 200 || !strings.Contains(body, tc.holds) {
				t.Errorf("%s: %s %s = %d %s (%v), want %s", prov, tc.method, tc.path, r.Status, body, err, tc.holds)
			}
		}
		if _, ok := Side(p, "GET", "/v1/models/a/b"); ok {
			t.Errorf("%s: GET /v1/models/a/b answered", prov)
		}
	}
}

func TestOffersTools(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{`{"model":"m","messages":[],"tools":[{"name":"read_file"}]}`, true},                // Anthropic, OpenAI chat, Responses
		{`{"contents":[],"tools":[{"functionDeclarations":[{"name":"read_file"}]}]}`, true}, // Gemini
		{`{"model":"m","messages":[{"role":"user","content":"tools"}]}`, false},             // a title call
		{`{"model":"m","tools":[]}`, false},                                                 // empty
		{`{"model":"m","tools":null}`, false},
		{`{"model":"m","messages":[{"tools":[{"name":"x"}]}]}`, false}, // not top-level
		{`not json`, false},
		{``, false},
	} {
		if got := OffersTools([]byte(tc.body)); got != tc.want {
			t.Errorf("OffersTools(%s) = %v, want %v", tc.body, got, tc.want)
		}
	}
}

// TestNotFoundBody: a path no format serves is answered as each API answers
// an unknown URL (OpenAI: code unknown_url, not a missing model's
// model_not_found), and a served path with another method gets 405.
func TestNotFoundBody(t *testing.T) {
	for _, tc := range []struct {
		prov, method, path string
		status             int
		holds              string
	}{
		{ProviderOpenAI, http.MethodPost, "/chat/completions", 404, `"type":"invalid_request_error","param":null,"code":"unknown_url"}`},
		{ProviderResponses, http.MethodPost, "/v1//responses", 404, `"code":"unknown_url"`},
		{ProviderAnthropic, http.MethodPost, "/messages", 404, `"type":"not_found_error"`},
		{ProviderGemini, http.MethodPost, "/models/m:generateContent", 404, `"status":"NOT_FOUND"`},
		{ProviderOpenAI, http.MethodGet, PathOpenAI, 405, `"code":null`},
	} {
		r := NotFound(params(tc.prov), tc.method, tc.path)
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(r.Bytes())), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.holds) {
			t.Errorf("%s %s %s = %d %s, want %d with %s", tc.prov, tc.method, tc.path, resp.StatusCode, body, tc.status, tc.holds)
		}
	}
}
