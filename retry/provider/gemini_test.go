package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// geminiFrame is one frame of a Gemini stream as the API writes it (CRLF
// line ends, no event field).
func geminiFrame(text, finish string) string {
	fr := ""
	if finish != "" {
		fr = fmt.Sprintf(`,"finishReason":%q`, finish)
	}
	return fmt.Sprintf(`data: {"candidates": [{"content": {"parts": [{"text": %q}],"role": "model"}%s,"index": 0}],`+
		`"usageMetadata": {"promptTokenCount": 5,"candidatesTokenCount": 3,"totalTokenCount": 8},`+
		`"modelVersion": "gemini-2.5-flash","responseId": "r1"}`+"\r\n\r\n", text, fr)
}

var geminiOK = []string{geminiFrame("Hello", ""), geminiFrame(", world", "STOP")}

func geminiErr(code int, status, msg, details string) string {
	if details != "" {
		details = `,"details":[` + details + `]`
	}
	return fmt.Sprintf(`{"error":{"code":%d,"message":%q,"status":%q%s}}`, code, msg, status, details)
}

const retryInfo = `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"%s"}`

func TestGeminiStream(t *testing.T) {
	t.Parallel()
	want := &Response{Text: "Hello, world", StopReason: "STOP", RequestID: "req_123", Model: "gemini-2.5-flash", Usage: Usage{5, 3}}
	noID := *want
	noID.RequestID = ""
	thought := `data: {"candidates":[{"content":{"parts":[{"text":"Let me think","thought":true}],"role":"model"},"index":0}]}` + "\n\n"
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		want    *Response
		deltas  []string
	}{
		{"as the API sends it", stream(geminiOK...), want, []string{"Hello", ", world"}},
		{"byte by byte", bytewise(geminiOK...), &noID, []string{"Hello", ", world"}},
		{"LF line ends", stream(strings.ReplaceAll(strings.Join(geminiOK, ""), "\r\n", "\n")), want, []string{"Hello", ", world"}},
		{"a thought is not text", stream(thought, geminiOK[0], geminiOK[1]), want, []string{"Hello", ", world"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handler)
			var deltas []string
			c, err := New(GeminiProvider, Config{BaseURL: srv.URL, APIKey: testKey, OnText: func(s string) { deltas = append(deltas, s) }})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Stream(context.Background(), testReq)
			if err != nil {
				t.Fatalf("Stream() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Stream() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.deltas, deltas); diff != "" {
				t.Errorf("OnText deltas mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGeminiRequest(t *testing.T) {
	t.Parallel()
	var uri string
	var header http.Header
	var body map[string]any
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uri, header = r.URL.RequestURI(), r.Header.Clone()
		json.NewDecoder(r.Body).Decode(&body)
		stream(geminiOK...)(w, r)
	}))
	req := testReq
	req.Messages = append([]Message{{"user", "first"}, {"assistant", "answer"}}, req.Messages...)
	c := NewGemini(Config{BaseURL: srv.URL + "/v1beta/", APIKey: testKey})
	if _, err := c.Stream(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"uri": uri, "key": header.Get("x-goog-api-key"), "authorization": header.Get("Authorization"), "body": body}
	part := func(s string) []any { return []any{map[string]any{"text": s}} }
	want := map[string]any{"uri": "/v1beta/models/claude-haiku-4-5:streamGenerateContent?alt=sse", "key": testKey, "authorization": "",
		"body": map[string]any{"contents": []any{
			map[string]any{"role": "user", "parts": part("first")},
			map[string]any{"role": "model", "parts": part("answer")},
			map[string]any{"role": "user", "parts": part("hi")}},
			"systemInstruction": map[string]any{"parts": part("be brief")},
			"generationConfig":  map[string]any{"maxOutputTokens": 64.0}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request mismatch (-want +got):\n%s", diff)
	}
}

func geminiErrorCases() []errCase {
	const p = GeminiProvider
	quota := "You exceeded your current quota, please check your plan and billing details."
	return []errCase{
		{"HTTP 429 with RetryInfo", p, fail(429, geminiErr(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted.", fmt.Sprintf(retryInfo, "1.5s")), "x-request-id", "req_h"),
			&Error{Kind: KindHTTP, Provider: p, Status: 429, ErrorType: "RESOURCE_EXHAUSTED", Code: "429", Message: "Resource has been exhausted.",
				RequestID: "req_h", RetryAfter: 1500 * time.Millisecond, HasRetryAfter: true}},
		{"a retry-after header wins over RetryInfo", p, fail(429, geminiErr(429, "RESOURCE_EXHAUSTED", quota,
			`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},`+fmt.Sprintf(retryInfo, "34s")), "retry-after", "2"),
			&Error{Kind: KindHTTP, Provider: p, Status: 429, ErrorType: "RESOURCE_EXHAUSTED", Code: "429", Message: quota,
				RetryAfter: 2 * time.Second, RetryAfterRaw: "2", HasRetryAfter: true}},
		{"HTTP 503", p, fail(503, geminiErr(503, "UNAVAILABLE", "The model is overloaded. Please try again later.", "")),
			&Error{Kind: KindHTTP, Provider: p, Status: 503, ErrorType: "UNAVAILABLE", Code: "503", Message: "The model is overloaded. Please try again later."}},
		{"HTTP 400 in an array", p, fail(400, "["+geminiErr(400, "INVALID_ARGUMENT", "API key not valid.", "")+"]"),
			&Error{Kind: KindHTTP, Provider: p, Status: 400, ErrorType: "INVALID_ARGUMENT", Code: "400", Message: "API key not valid."}},
		{"an unreadable RetryInfo", p, fail(429, geminiErr(429, "RESOURCE_EXHAUSTED", "x", fmt.Sprintf(retryInfo, "soon"))),
			&Error{Kind: KindHTTP, Provider: p, Status: 429, ErrorType: "RESOURCE_EXHAUSTED", Code: "429", Message: "x"}},
		{"an error frame after text", p, stream(geminiOK[0], "data: "+geminiErr(503, "UNAVAILABLE", "The model is overloaded.", "")+"\n\n"),
			&Error{Kind: KindSSEError, Provider: p, ErrorType: "UNAVAILABLE", Code: "503", Message: "The model is overloaded.",
				RequestID: "req_123", Streamed: true, Text: "Hello"}},
		{"an error frame with RetryInfo", p, stream("data: " + geminiErr(429, "RESOURCE_EXHAUSTED", "slow down", fmt.Sprintf(retryInfo, "2s")) + "\n\n"),
			&Error{Kind: KindSSEError, Provider: p, ErrorType: "RESOURCE_EXHAUSTED", Code: "429", Message: "slow down",
				RequestID: "req_123", RetryAfter: 2 * time.Second, HasRetryAfter: true}},
		{"stream ends before a finishReason", p, stream(geminiOK[0]),
			&Error{Kind: KindIncomplete, Provider: p, Message: "stream ended before the end of the response", RequestID: "req_123", Streamed: true, Text: "Hello"}},
		{"malformed frame", p, stream("data: {nope}\n\n"),
			&Error{Kind: KindParse, Provider: p, RequestID: "req_123",
				Message: `malformed message event data: invalid character 'n' looking for beginning of object key string: "{nope}"`}},
	}
}

func TestGeminiErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range geminiErrorCases() {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handler)
			c, err := New(tt.provider, Config{BaseURL: srv.URL, APIKey: testKey})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Stream(context.Background(), testReq)
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("Stream() = %+v, %v; want a *Error", resp, err)
			}
			if diff := cmp.Diff(tt.want, got, errOpts); diff != "" {
				t.Errorf("Stream() error mismatch (-want +got):\n%s\n(error: %v)", diff, err)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks the API key: %v", err)
			}
		})
	}
}

func TestParseRetryDelay(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"2s", 2 * time.Second, true},
		{"1.5s", 1500 * time.Millisecond, true},
		{"0.5s", 500 * time.Millisecond, true},
		{"34.123456789s", 34*time.Second + 123456789, true},
		{"0s", 0, true},
		{" 3s ", 3 * time.Second, true},
		{"99999999999999999999s", maxRetryAfter, true},
		{"2", 0, false},
		{"-1s", 0, false},
		{"1e3s", 0, false},
		{".5s", 0, false},
		{"1.s", 1 * time.Second, true},
		{"1.1234567890s", 0, false},
		{"2ms", 0, false},
		{"s", 0, false},
		{"", 0, false},
	} {
		d, ok := ParseRetryDelay(tt.in)
		if d != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryDelay(%q) = %v, %t; want %v, %t", tt.in, d, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseRetryDelay(f *testing.F) {
	for _, s := range []string{"2s", "1.5s", "0.500s", "-1s", "1e9s", "99999999999999999999.9s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseRetryDelay(s)
		if d < 0 || d > maxRetryAfter || (!ok && d != 0) {
			t.Fatalf("ParseRetryDelay(%q) = %v, %t", s, d, ok)
		}
		if ok && !strings.HasSuffix(strings.TrimSpace(s), "s") {
			t.Fatalf("ParseRetryDelay(%q) = %v without a unit", s, d)
		}
	})
}

// FuzzGeminiStream feeds any bytes to the Gemini client as a 200 event
// stream: it never panics, and its answer is a whole response (a stop
// reason, the text its deltas) or a *Error of a kind a stream can end in,
// with the text that had streamed.
func FuzzGeminiStream(f *testing.F) {
	f.Add(strings.Join(geminiOK, ""))
	f.Add(geminiOK[0] + "data: " + geminiErr(503, "UNAVAILABLE", "x", fmt.Sprintf(retryInfo, "1s")) + "\n\n")
	f.Add(`data: {"candidates":[{"content":{"parts":[{"text":"a","thought":true}]},"finishReason":"SAFETY"}]}` + "\n\n")
	f.Add(`data: {"error":{"code":"x","details":[{"@type":"google.rpc.RetryInfo","retryDelay":"9e9s"}]}}` + "\n\n")
	f.Add("data: [DONE]\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		var deltas strings.Builder
		c := NewGemini(Config{APIKey: testKey, OnText: func(s string) { deltas.WriteString(s) }})
		resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader([]byte(in)))}
		ctx := context.Background()
		got, err := c.readStream(ctx, ctx, testReq, resp)
		if err == nil {
			if got.StopReason == "" || got.Text != deltas.String() {
				t.Fatalf("response %+v from %q: no stop reason, or text != deltas %q", got, in, deltas.String())
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %T %v, want *Error", err, err)
		}
		switch e.Kind {
		case KindSSEError, KindIncomplete, KindParse:
		default:
			t.Fatalf("error kind %s from a stream: %v", e.Kind, err)
		}
		if e.Provider != GeminiProvider || e.Status != 0 || e.Text != deltas.String() || e.RetryAfter < 0 || e.RetryAfter > maxRetryAfter {
			t.Fatalf("error %+v: want provider %s, status 0 and text %q", e, GeminiProvider, deltas.String())
		}
	})
}
