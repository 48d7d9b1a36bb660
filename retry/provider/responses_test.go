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

// responsesEv is one Responses API event as the API writes it: an event
// field, then the data with the same type and a sequence_number.
func responsesEv(typ string, seq int, fields string) string {
	if fields != "" {
		fields = "," + fields
	}
	return fmt.Sprintf("event: %s\ndata: {\"type\":%q,\"sequence_number\":%d%s}\n\n", typ, typ, seq, fields)
}

const responsesObj = `"id":"resp_1","object":"response","created_at":1741290958,"error":null,"incomplete_details":null,` +
	`"instructions":null,"max_output_tokens":null,"model":"gpt-4.1-2025-04-14","parallel_tool_calls":true,` +
	`"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"store":true,"temperature":1.0,` +
	`"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","user":null,"metadata":{}`

// responsesOK is a complete Responses stream, shaped like the API's.
var responsesOK = []string{
	responsesEv("response.created", 0, `"response":{`+responsesObj+`,"status":"in_progress","output":[],"usage":null}`),
	responsesEv("response.in_progress", 1, `"response":{`+responsesObj+`,"status":"in_progress","output":[],"usage":null}`),
	responsesEv("response.output_item.added", 2, `"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`),
	responsesEv("response.content_part.added", 3, `"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}`),
	responsesEv("response.output_text.delta", 4, `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello","logprobs":[]`),
	responsesEv("response.output_text.delta", 5, `"item_id":"msg_1","output_index":0,"content_index":0,"delta":", world","logprobs":[]`),
	responsesEv("response.output_text.done", 6, `"item_id":"msg_1","output_index":0,"content_index":0,"text":"Hello, world","logprobs":[]`),
	responsesEv("response.content_part.done", 7, `"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":"Hello, world"}`),
	responsesEv("response.output_item.done", 8, `"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"Hello, world"}]}`),
	responsesEv("response.completed", 9, `"response":{`+responsesObj+`,"status":"completed","output":[{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"Hello, world"}]}],`+
		`"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":15,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":27}}`),
}

// responsesFailed is a response.failed event with error code and message.
func responsesFailed(seq int, code, msg string) string {
	return responsesEv("response.failed", seq, fmt.Sprintf(`"response":{%s,"status":"failed","output":[],"usage":null,"error":{"code":%q,"message":%q}}`,
		strings.Replace(responsesObj, `"error":null,`, "", 1), code, msg))
}

const rateLimitMsg = "Rate limit reached for gpt-4.1 in organization org-x on tokens per min (TPM): Limit 30000, Used 29800, Requested 500. Please try again in 1.5s. Visit https://platform.openai.com/account/rate-limits to learn more."

func TestResponsesStream(t *testing.T) {
	t.Parallel()
	want := &Response{Text: "Hello, world", StopReason: "completed", RequestID: "req_123", Model: "gpt-4.1-2025-04-14", Usage: Usage{12, 15}}
	noID := *want
	noID.RequestID = ""
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    *Response
		deltas  []string
	}{
		{"as the API sends it", stream(responsesOK...), want, []string{"Hello", ", world"}},
		{"byte by byte", bytewise(responsesOK...), &noID, []string{"Hello", ", world"}},
		{"CRLF", bytewise(strings.ReplaceAll(strings.Join(responsesOK, ""), "\n", "\r\n")), &noID, []string{"Hello", ", world"}},
		// The official SDKs read the data's type; a server may leave out the
		// event field.
		{"without event fields", stream(strings.ReplaceAll(strings.Join(responsesOK, ""), "event: ", ": was event ")), want, []string{"Hello", ", world"}},
		{"reasoning, a tool call and unknown events are not text", stream(
			responsesOK[0],
			responsesEv("response.output_item.added", 1, `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`),
			responsesEv("response.reasoning_summary_text.delta", 2, `"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Thinking"`),
			responsesEv("response.function_call_arguments.delta", 3, `"item_id":"fc_1","output_index":1,"delta":"{\"city\":"`),
			responsesEv("response.future_thing", 4, `"whatever":[1,2]`),
			"event: keepalive\ndata: not json\n\n",
			responsesOK[4],
			responsesOK[9]),
			want, []string{"Hello"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handler)
			var deltas []string
			c, err := New(ResponsesProvider, Config{BaseURL: srv.URL + "/v1", APIKey: testKey, OnText: func(s string) { deltas = append(deltas, s) }})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Stream(context.Background(), testReq)
			if err != nil {
				t.Fatalf("Stream() error: %v", err)
			}
			if tt.name == "reasoning, a tool call and unknown events are not text" {
				want := *tt.want
				want.Text = "Hello"
				tt.want = &want
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

func TestResponsesRequest(t *testing.T) {
	t.Parallel()
	var path string
	var header http.Header
	var body map[string]any
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, header = r.URL.Path, r.Header.Clone()
		json.NewDecoder(r.Body).Decode(&body)
		stream(responsesOK...)(w, r)
	}))
	// OPENAI_BASE_URL ends in /v1; the client must not double it.
	c := NewResponses(Config{BaseURL: srv.URL + "/v1/", APIKey: testKey})
	if _, err := c.Stream(context.Background(), testReq); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"path": path, "authorization": header.Get("Authorization"), "accept": header.Get("Accept"),
		"content-type": header.Get("Content-Type"), "body": body}
	want := map[string]any{"path": "/v1/responses", "authorization": "Bearer " + testKey, "accept": "text/event-stream",
		"content-type": "application/json", "body": map[string]any{"model": "claude-haiku-4-5", "instructions": "be brief",
			"input": []any{map[string]any{"role": "user", "content": "hi"}}, "max_output_tokens": 64.0, "stream": true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request mismatch (-want +got):\n%s", diff)
	}
}

func responsesErrorCases() []errCase {
	const p = ResponsesProvider
	body := func(msg, typ, code string) string {
		return fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":%q}}`, msg, typ, code)
	}
	return []errCase{
		{"HTTP 429 with retry-after, retry-after-ms and a code", p,
			fail(429, body(rateLimitMsg, "requests", "rate_limit_exceeded"), "x-request-id", "req_h", "retry-after", "2", "retry-after-ms", "1500"),
			&Error{Kind: KindHTTP, Provider: p, Status: 429, ErrorType: "requests", Code: "rate_limit_exceeded", Message: rateLimitMsg,
				RequestID: "req_h", RetryAfter: 1500 * time.Millisecond, RetryAfterRaw: "2", HasRetryAfter: true}},
		{"HTTP 503 x-should-retry true", p, fail(503, body("The server is overloaded", "server_error", "server_is_overloaded"), "x-should-retry", "true"),
			&Error{Kind: KindHTTP, Provider: p, Status: 503, ErrorType: "server_error", Code: "server_is_overloaded", Message: "The server is overloaded", ShouldRetry: ptr(true)}},
		{"HTTP 400 null code", p, fail(400, `{"error":{"message":"Unsupported parameter: 'foo'.","type":"invalid_request_error","param":"foo","code":null}}`),
			&Error{Kind: KindHTTP, Provider: p, Status: 400, ErrorType: "invalid_request_error", Message: "Unsupported parameter: 'foo'."}},
		{"response.failed rate_limit_exceeded after text", p, stream(append(responsesOK[:5:5], responsesFailed(5, "rate_limit_exceeded", rateLimitMsg))...),
			&Error{Kind: KindSSEError, Provider: p, Code: "rate_limit_exceeded", Message: rateLimitMsg, RequestID: "req_123", Streamed: true, Text: "Hello"}},
		{"response.failed server_error before text", p, stream(responsesOK[0], responsesFailed(1, "server_error", "The server had an error while processing your request.")),
			&Error{Kind: KindSSEError, Provider: p, Code: "server_error", Message: "The server had an error while processing your request.", RequestID: "req_123"}},
		{"response.failed with a null error", p, stream(responsesEv("response.failed", 0, `"response":{"status":"failed","error":null}`)),
			&Error{Kind: KindSSEError, Provider: p, Message: "response failed", RequestID: "req_123"}},
		{"response.failed with unreadable data", p, stream("event: response.failed\ndata: {oops\n\n"),
			&Error{Kind: KindSSEError, Provider: p, Message: "{oops", RequestID: "req_123"}},
		{"error event", p, stream(responsesOK[0], responsesEv("error", 1, `"code":"rate_limit_exceeded","message":"Please try again in 20ms.","param":null`)),
			&Error{Kind: KindSSEError, Provider: p, Code: "rate_limit_exceeded", Message: "Please try again in 20ms.", RequestID: "req_123"}},
		{"error event with a null code", p, stream(responsesEv("error", 0, `"code":null,"message":"boom","param":null`)),
			&Error{Kind: KindSSEError, Provider: p, Message: "boom", RequestID: "req_123"}},
		{"error event with unreadable data", p, stream("event: error\ndata: Overloaded\n\n"),
			&Error{Kind: KindSSEError, Provider: p, Message: "Overloaded", RequestID: "req_123"}},
		{"an error object in the data, as the SDK reads it", p,
			stream(`data: {"error":{"message":"The server had an error","type":"server_error","code":"server_error"}}` + "\n\n"),
			&Error{Kind: KindSSEError, Provider: p, ErrorType: "server_error", Code: "server_error", Message: "The server had an error", RequestID: "req_123"}},
		{"response.incomplete", p, stream(append(responsesOK[:5:5], responsesEv("response.incomplete", 5,
			`"response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":3,"output_tokens":64}}`))...),
			&Error{Kind: KindIncomplete, Provider: p, Message: "response incomplete: max_output_tokens", RequestID: "req_123", Streamed: true, Text: "Hello"}},
		{"response.incomplete without a reason", p, stream(responsesEv("response.incomplete", 0, `"response":{"status":"incomplete"}`)),
			&Error{Kind: KindIncomplete, Provider: p, Message: "response incomplete: unknown", RequestID: "req_123"}},
		{"stream ends before response.completed", p, stream(responsesOK[:9]...),
			&Error{Kind: KindIncomplete, Provider: p, Message: "stream ended before the end of the response", RequestID: "req_123", Streamed: true, Text: "Hello, world"}},
		{"[DONE] before response.completed", p, stream(append(responsesOK[:6:6], "data: [DONE]\n\n")...),
			&Error{Kind: KindIncomplete, Provider: p, Message: "stream ended without response.completed", RequestID: "req_123", Streamed: true, Text: "Hello, world"}},
		{"empty 200 body", p, stream(),
			&Error{Kind: KindIncomplete, Provider: p, Message: "stream ended before the end of the response", RequestID: "req_123"}},
		{"malformed delta", p, stream(responsesOK[0], "event: response.output_text.delta\ndata: {\"delta\":\n\n"),
			&Error{Kind: KindParse, Provider: p, RequestID: "req_123",
				Message: `malformed response.output_text.delta event data: unexpected end of JSON input: "{\"delta\":"`}},
		{"malformed data without an event field", p, stream("data: {nope}\n\n"),
			&Error{Kind: KindParse, Provider: p, RequestID: "req_123",
				Message: `malformed message event data: invalid character 'n' looking for beginning of object key string: "{nope}"`}},
		{"reset mid-stream", p,
			hijack("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
				fmt.Sprintf("%x\r\n%s\r\n", len(responsesOK[0]+responsesOK[4]), responsesOK[0]+responsesOK[4])),
			&Error{Kind: KindIncomplete, Provider: p, Streamed: true, Text: "Hello"}},
	}
}

func TestResponsesErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range responsesErrorCases() {
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

func TestParseTryAgain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		msg  string
		want time.Duration
		ok   bool
	}{
		{rateLimitMsg, 1500 * time.Millisecond, true},
		{"Please try again in 20ms.", 20 * time.Millisecond, true},
		{"Please try again in 6m0s. Visit ...", 6 * time.Minute, true},
		{"try again in 1h2m3.5s", time.Hour + 2*time.Minute + 3500*time.Millisecond, true},
		{"Rate limit exceeded. Try again in 35 seconds.", 35 * time.Second, true}, // Azure
		{"Requests to the ChatCompletions_Create Operation have exceeded ... TRY AGAIN IN 2 s", 2 * time.Second, true},
		{"try again in 1m 30s", time.Minute, true}, // a compound has no spaces
		{"try again in 0s", 0, true},
		{"try again in later; or try again in 3s", 3 * time.Second, true},
		{"try again in 99999999999h", maxRetryAfter, true},
		{"Please try again later.", 0, false},
		{"try again in a few minutes", 0, false},
		{"try again in 5", 0, false},
		{"try again in 5 parsecs", 0, false},
		{"try again in 1.2.3s", 0, false},
		{"wait 5s", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		d, ok := ParseTryAgain(tt.msg)
		if d != tt.want || ok != tt.ok {
			t.Errorf("ParseTryAgain(%q) = %v, %t; want %v, %t", tt.msg, d, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseTryAgain(f *testing.F) {
	for _, s := range []string{rateLimitMsg, "try again in 6m0s", "Try again in 35 seconds", "try again in 1.5", "try again in 9e9h", "TRY AGAIN IN İ1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		d, ok := ParseTryAgain(msg)
		if d < 0 || d > maxRetryAfter || (!ok && d != 0) {
			t.Fatalf("ParseTryAgain(%q) = %v, %t", msg, d, ok)
		}
		if ok && !strings.Contains(strings.ToLower(msg), "try again in") {
			t.Fatalf("ParseTryAgain(%q) = %v without the phrase", msg, d)
		}
	})
}

// FuzzResponsesStream feeds any bytes to the Responses client as a 200
// event stream. Whatever it reads, it must not panic, and its answer must
// be a whole response (StopReason set, the text its deltas) or a *Error of
// a kind a stream can end in, with the text that had streamed.
func FuzzResponsesStream(f *testing.F) {
	f.Add(strings.Join(responsesOK, ""))
	f.Add(strings.Join(responsesOK[:5], "") + responsesFailed(5, "rate_limit_exceeded", rateLimitMsg))
	f.Add(responsesOK[0] + responsesEv("error", 1, `"code":"server_error","message":"x"`))
	f.Add(responsesOK[4] + responsesEv("response.incomplete", 1, `"response":{"incomplete_details":{"reason":"content_filter"}}`))
	f.Add("data: {\"type\":\"response.output_text.delta\",\"delta\":\"a\"}\n\ndata: {\"type\":\"response.completed\",\"response\":null}\n\n")
	f.Add("data: [DONE]\n\n")
	f.Add("event: response.failed\ndata: {\"response\":{\"error\":{\"code\":429,\"message\":null}}}\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		var deltas strings.Builder
		c := NewResponses(Config{APIKey: testKey, OnText: func(s string) { deltas.WriteString(s) }})
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
		if e.Provider != ResponsesProvider || e.Status != 0 || e.Text != deltas.String() {
			t.Fatalf("error %+v: want provider %s, status 0 and text %q", e, ResponsesProvider, deltas.String())
		}
	})
}
