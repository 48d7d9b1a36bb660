package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const testKey = "sk-ant-test-SECRETKEY-0123456789"

// anthropicOK is a complete Anthropic stream, with the ping and an unknown
// event type the API documents that clients must tolerate.
var anthropicOK = []string{
	"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-haiku-4-5\",\"stop_reason\":null,\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n",
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
	"event: ping\ndata: {\"type\": \"ping\"}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n",
	"event: future_event\ndata: {\"type\":\"future_event\",\"whatever\":[1,2]}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\", world\"}}\n\n",
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\n",
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
}

var openaiOK = []string{
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n",
	": keep-alive\n\n",
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\", world\"},\"finish_reason\":null}]}\n\n",
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":15,\"total_tokens\":27}}\n\n",
	"data: [DONE]\n\n",
}

// stream answers 200 with the given chunks, flushing after each.
func stream(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("request-id", "req_123")
		w.Header().Set("x-request-id", "req_123")
		w.WriteHeader(http.StatusOK)
		for _, c := range chunks {
			io.WriteString(w, c)
			w.(http.Flusher).Flush()
		}
	}
}

// bytewise answers 200 with the chunks written one byte per flush, so the
// client sees every event split across reads.
func bytewise(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		all := strings.Join(chunks, "")
		for i := range len(all) {
			w.Write([]byte{all[i]})
			w.(http.Flusher).Flush()
		}
	}
}

// fail answers status with body and headers.
func fail(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func anthropicErrBody(typ, msg string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_body"}`, typ, msg)
}

// block sends head (if any) and then waits for the request to end, so the
// client's timeout or cancellation is what ends the attempt.
func block(head ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The server notices a closed connection only once the body is read.
		io.Copy(io.Discard, r.Body)
		if len(head) > 0 {
			stream(head...)(w, r)
		}
		<-r.Context().Done()
	}
}

// hijack takes over the connection after reading the request, writes raw
// and then resets it (SO_LINGER 0 makes Close send RST).
func hijack(raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		if raw != "" {
			bw.WriteString(raw)
			bw.Flush()
		}
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	}
}

// closeConn takes over the connection and closes it cleanly without a
// response.
func closeConn(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

var testReq = Request{Model: "claude-haiku-4-5", System: "be brief", Messages: []Message{{Role: "user", Content: "hi"}}, MaxTokens: 64}

func TestStreamSuccess(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		handler  http.HandlerFunc
		want     *Response
	}{
		{"anthropic", "anthropic", stream(anthropicOK...),
			&Response{Text: "Hello, world", StopReason: "end_turn", RequestID: "req_123", Model: "claude-haiku-4-5", Usage: Usage{12, 15}}},
		{"anthropic byte by byte", "anthropic", bytewise(anthropicOK...),
			&Response{Text: "Hello, world", StopReason: "end_turn", Model: "claude-haiku-4-5", Usage: Usage{12, 15}}},
		{"anthropic CRLF", "anthropic", bytewise(strings.ReplaceAll(strings.Join(anthropicOK, ""), "\n", "\r\n")),
			&Response{Text: "Hello, world", StopReason: "end_turn", Model: "claude-haiku-4-5", Usage: Usage{12, 15}}},
		{"anthropic without event fields", "anthropic", stream(strings.ReplaceAll(strings.Join(anthropicOK, ""), "event: ", ": was event ")),
			&Response{Text: "Hello, world", StopReason: "end_turn", RequestID: "req_123", Model: "claude-haiku-4-5", Usage: Usage{12, 15}}},
		{"openai", "openai", stream(openaiOK...),
			&Response{Text: "Hello, world", StopReason: "stop", RequestID: "req_123", Model: "gpt-4o-mini", Usage: Usage{12, 15}}},
		{"openai byte by byte", "openai", bytewise(openaiOK...),
			&Response{Text: "Hello, world", StopReason: "stop", Model: "gpt-4o-mini", Usage: Usage{12, 15}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handler)
			var deltas []string
			c, err := New(tt.provider, Config{BaseURL: srv.URL + "/", APIKey: testKey, OnText: func(s string) { deltas = append(deltas, s) }})
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
			if diff := cmp.Diff([]string{"Hello", ", world"}, deltas); diff != "" {
				t.Errorf("OnText deltas mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestWireFormat(t *testing.T) {
	type seen struct {
		Path   string
		Header map[string]string
		Body   map[string]any
	}
	capture := func(got *seen, chunks []string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			got.Path = r.URL.Path
			got.Header = map[string]string{}
			for _, h := range []string{"X-Api-Key", "Authorization", "Anthropic-Version", "Content-Type", "Accept"} {
				if v := r.Header.Get(h); v != "" {
					got.Header[h] = v
				}
			}
			json.NewDecoder(r.Body).Decode(&got.Body)
			stream(chunks...)(w, r)
		}
	}
	tests := []struct {
		provider string
		chunks   []string
		want     seen
	}{
		{"anthropic", anthropicOK, seen{
			Path: "/v1/messages",
			Header: map[string]string{"X-Api-Key": testKey, "Anthropic-Version": "2023-06-01",
				"Content-Type": "application/json", "Accept": "text/event-stream"},
			Body: map[string]any{"model": "claude-haiku-4-5", "max_tokens": 64.0, "system": "be brief", "stream": true,
				"messages": []any{map[string]any{"role": "user", "content": "hi"}}},
		}},
		{"openai", openaiOK, seen{
			Path: "/v1/chat/completions",
			Header: map[string]string{"Authorization": "Bearer " + testKey,
				"Content-Type": "application/json", "Accept": "text/event-stream"},
			Body: map[string]any{"model": "claude-haiku-4-5", "max_tokens": 64.0, "stream": true,
				"stream_options": map[string]any{"include_usage": true},
				"messages":       []any{map[string]any{"role": "system", "content": "be brief"}, map[string]any{"role": "user", "content": "hi"}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			var got seen
			srv := newServer(t, capture(&got, tt.chunks))
			c, _ := New(tt.provider, Config{BaseURL: srv.URL, APIKey: testKey})
			if _, err := c.Stream(context.Background(), testReq); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("request mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

type errCase struct {
	name     string
	provider string
	handler  http.HandlerFunc
	want     *Error
}

func errorCases() []errCase {
	var cases []errCase
	// Every status of the seeds' tables, plus an unknown one.
	for _, st := range []struct {
		status int
		typ    string
	}{
		{400, "invalid_request_error"}, {401, "authentication_error"}, {402, "billing_error"},
		{403, "permission_error"}, {404, "not_found_error"}, {408, "timeout_error"}, {409, "conflict_error"},
		{413, "request_too_large"}, {429, "rate_limit_error"}, {500, "api_error"}, {501, "api_error"},
		{502, "api_error"}, {503, "overloaded_error"}, {504, "timeout_error"}, {529, "overloaded_error"},
		{418, "teapot_error"},
	} {
		cases = append(cases, errCase{
			fmt.Sprintf("anthropic HTTP %d", st.status), "anthropic",
			fail(st.status, anthropicErrBody(st.typ, "msg "+st.typ), "request-id", "req_h"),
			&Error{Kind: KindHTTP, Provider: "anthropic", Status: st.status, ErrorType: st.typ, Message: "msg " + st.typ, RequestID: "req_h"},
		})
	}
	ra := func(ms, sec string) http.HandlerFunc {
		var h []string
		if ms != "" {
			h = append(h, "retry-after-ms", ms)
		}
		if sec != "" {
			h = append(h, "retry-after", sec)
		}
		return fail(429, anthropicErrBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), h...)
	}
	rl := func(d time.Duration, raw string, ok bool) *Error {
		return &Error{Kind: KindHTTP, Provider: "anthropic", Status: 429, ErrorType: "rate_limit_error",
			Message: "Number of request tokens has exceeded your per-minute rate limit", RequestID: "req_body",
			RetryAfter: d, RetryAfterRaw: raw, HasRetryAfter: ok}
	}
	f, tr := false, true
	cases = append(cases,
		errCase{"429 retry-after int", "anthropic", ra("", "5"), rl(5*time.Second, "5", true)},
		errCase{"429 retry-after zero", "anthropic", ra("", "0"), rl(0, "0", true)},
		errCase{"429 retry-after float", "anthropic", ra("", "1.5"), rl(1500*time.Millisecond, "1.5", true)},
		errCase{"429 retry-after past HTTP-date", "anthropic", ra("", "Wed, 21 Oct 2015 07:28:00 GMT"), rl(0, "Wed, 21 Oct 2015 07:28:00 GMT", true)},
		errCase{"429 retry-after-ms wins", "anthropic", ra("750", "5"), rl(750*time.Millisecond, "5", true)},
		errCase{"429 retry-after garbage", "anthropic", ra("", "later"), rl(0, "later", false)},
		errCase{"529 overloaded body", "anthropic",
			fail(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011"}`),
			&Error{Kind: KindHTTP, Provider: "anthropic", Status: 529, ErrorType: "overloaded_error", Message: "Overloaded", RequestID: "req_011"}},
		errCase{"x-should-retry false", "anthropic", fail(500, anthropicErrBody("api_error", "x"), "x-should-retry", "false"),
			&Error{Kind: KindHTTP, Provider: "anthropic", Status: 500, ErrorType: "api_error", Message: "x", RequestID: "req_body", ShouldRetry: &f}},
		errCase{"x-should-retry true", "anthropic", fail(400, anthropicErrBody("invalid_request_error", "x"), "x-should-retry", "true"),
			&Error{Kind: KindHTTP, Provider: "anthropic", Status: 400, ErrorType: "invalid_request_error", Message: "x", RequestID: "req_body", ShouldRetry: &tr}},
		errCase{"non-JSON error body", "anthropic", fail(502, "<html>Bad Gateway</html>"),
			&Error{Kind: KindHTTP, Provider: "anthropic", Status: 502, Message: "<html>Bad Gateway</html>"}},
		errCase{"empty error body", "anthropic", fail(503, ""),
			&Error{Kind: KindHTTP, Provider: "anthropic", Status: 503}},
		errCase{"SSE error mid-stream", "anthropic",
			stream(append(anthropicOK[:4:4], "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")...),
			&Error{Kind: KindSSEError, Provider: "anthropic", ErrorType: "overloaded_error", Message: "Overloaded", RequestID: "req_123", Streamed: true, Text: "Hello"}},
		errCase{"SSE error before content", "anthropic",
			stream(anthropicOK[0], "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n"),
			&Error{Kind: KindSSEError, Provider: "anthropic", ErrorType: "invalid_request_error", Message: "bad", RequestID: "req_123"}},
		errCase{"SSE error with unreadable data", "anthropic",
			stream(anthropicOK[0], "event: error\ndata: Overloaded\n\n"),
			&Error{Kind: KindSSEError, Provider: "anthropic", Message: "Overloaded", RequestID: "req_123"}},
		errCase{"stream cut without stop_reason", "anthropic", stream(anthropicOK[:6]...),
			&Error{Kind: KindIncomplete, Provider: "anthropic", Message: "stream ended before the end of the response", RequestID: "req_123", Streamed: true, Text: "Hello, world"}},
		errCase{"stream cut after stop_reason, before message_stop", "anthropic", stream(anthropicOK[:8]...),
			&Error{Kind: KindIncomplete, Provider: "anthropic", Message: "stream ended before the end of the response", RequestID: "req_123", Streamed: true, Text: "Hello, world"}},
		// Seed 000 R1: "stream ended without stop_reason" is StreamTransient,
		// even when message_stop arrives.
		errCase{"message_stop without stop_reason", "anthropic", stream(append(anthropicOK[:7:7], anthropicOK[8])...),
			&Error{Kind: KindIncomplete, Provider: "anthropic", Message: "stream ended without stop_reason", RequestID: "req_123", Streamed: true, Text: "Hello, world"}},
		errCase{"message_delta with a null stop_reason, then message_stop", "anthropic",
			stream(anthropicOK[0], anthropicOK[3], "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":null},\"usage\":{\"output_tokens\":3}}\n\n", anthropicOK[8]),
			&Error{Kind: KindIncomplete, Provider: "anthropic", Message: "stream ended without stop_reason", RequestID: "req_123", Streamed: true, Text: "Hello"}},
		errCase{"openai [DONE] without finish_reason", "openai", stream(append(openaiOK[:4:4], openaiOK[5], openaiOK[6])...),
			&Error{Kind: KindIncomplete, Provider: "openai", Message: "stream ended without finish_reason", RequestID: "req_123", Streamed: true, Text: "Hello, world"}},
		errCase{"empty 200 body", "anthropic", stream(),
			&Error{Kind: KindIncomplete, Provider: "anthropic", Message: "stream ended before the end of the response", RequestID: "req_123"}},
		errCase{"malformed JSON", "anthropic", stream(anthropicOK[0], "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n"),
			&Error{Kind: KindParse, Provider: "anthropic", RequestID: "req_123",
				Message: `malformed content_block_delta event data: unexpected end of JSON input: "{\"type\":\"content_block_delta\","`}},

		errCase{"openai HTTP 429 with code", "openai",
			fail(429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
				"x-request-id", "req_oa", "retry-after", "20"),
			&Error{Kind: KindHTTP, Provider: "openai", Status: 429, ErrorType: "insufficient_quota", Code: "insufficient_quota",
				Message: "You exceeded your current quota", RequestID: "req_oa", RetryAfter: 20 * time.Second, RetryAfterRaw: "20", HasRetryAfter: true}},
		errCase{"openai HTTP 400 context length", "openai",
			fail(400, `{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
			&Error{Kind: KindHTTP, Provider: "openai", Status: 400, ErrorType: "invalid_request_error", Code: "context_length_exceeded",
				Message: "This model's maximum context length is 8192 tokens"}},
		errCase{"openai HTTP 500 numeric code", "openai", fail(500, `{"error":{"message":"oops","type":"server_error","code":500}}`),
			&Error{Kind: KindHTTP, Provider: "openai", Status: 500, ErrorType: "server_error", Code: "500", Message: "oops"}},
		errCase{"openai error chunk mid-stream", "openai",
			stream(openaiOK[1], "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\",\"code\":null}}\n\n"),
			&Error{Kind: KindSSEError, Provider: "openai", ErrorType: "server_error", Message: "The server had an error", RequestID: "req_123", Streamed: true, Text: "Hello"}},
		errCase{"openai [DONE] missing", "openai", stream(openaiOK[:6]...),
			&Error{Kind: KindIncomplete, Provider: "openai", Message: "stream ended before the end of the response", RequestID: "req_123", Streamed: true, Text: "Hello, world"}},
		errCase{"openai malformed JSON", "openai", stream("data: {nope}\n\n"),
			&Error{Kind: KindParse, Provider: "openai", RequestID: "req_123",
				Message: `malformed message event data: invalid character 'n' looking for beginning of object key string: "{nope}"`}},
		errCase{"server closes without response", "anthropic", closeConn,
			&Error{Kind: KindEOF, Provider: "anthropic"}},
		errCase{"reset before response", "anthropic", hijack(""),
			&Error{Kind: KindReset, Provider: "anthropic"}},
		errCase{"reset mid-stream", "anthropic",
			hijack("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
				fmt.Sprintf("%x\r\n%s\r\n", len(anthropicOK[0]+anthropicOK[3]), anthropicOK[0]+anthropicOK[3])),
			&Error{Kind: KindIncomplete, Provider: "anthropic", Streamed: true, Text: "Hello"}},
		errCase{"chunked body cut mid-stream", "anthropic",
			func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				conn, bw, _ := w.(http.Hijacker).Hijack()
				bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
					fmt.Sprintf("%x\r\n%s\r\n", len(anthropicOK[0]+anthropicOK[3]), anthropicOK[0]+anthropicOK[3]) + "400\r\nevent: con")
				bw.Flush()
				conn.Close()
			},
			&Error{Kind: KindIncomplete, Provider: "anthropic", Streamed: true, Text: "Hello"}},
	)
	return cases
}

var errOpts = cmp.Options{cmpopts.IgnoreFields(Error{}, "Header", "Err", "Bytes")}

func TestStreamErrors(t *testing.T) {
	for _, tt := range errorCases() {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handler)
			c, _ := New(tt.provider, Config{BaseURL: srv.URL, APIKey: testKey})
			resp, err := c.Stream(context.Background(), testReq)
			if err == nil {
				t.Fatalf("Stream() = %+v, want an error", resp)
			}
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("Stream() error %T %v, want *Error", err, err)
			}
			if diff := cmp.Diff(tt.want, got, errOpts); diff != "" {
				t.Errorf("Stream() error mismatch (-want +got):\n%s\n(error: %v)", diff, err)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(fmt.Sprintf("%+v", got), testKey) {
				t.Errorf("error leaks the API key: %v", err)
			}
		})
	}
}

func TestStreamErrorDetails(t *testing.T) {
	t.Run("future HTTP-date", func(t *testing.T) {
		date := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
		srv := newServer(t, fail(429, anthropicErrBody("rate_limit_error", "slow down"), "retry-after", date))
		_, err := NewAnthropic(Config{BaseURL: srv.URL}).Stream(context.Background(), testReq)
		var e *Error
		if !errors.As(err, &e) || !e.HasRetryAfter || e.RetryAfterRaw != date || e.RetryAfter < 30*time.Minute || e.RetryAfter > time.Hour {
			t.Fatalf("got %+v, want a Retry-After of about an hour from %q", e, date)
		}
	})
	t.Run("mid-stream failures keep the transport error and byte count", func(t *testing.T) {
		body := anthropicOK[0] + anthropicOK[3]
		srv := newServer(t, hijack("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
			fmt.Sprintf("%x\r\n%s\r\n", len(body), body)))
		_, err := NewAnthropic(Config{BaseURL: srv.URL}).Stream(context.Background(), testReq)
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindIncomplete || e.Err == nil || e.Bytes < int64(len(body)) {
			t.Fatalf("got %#v, want KindIncomplete with Err set and at least %d bytes", e, len(body))
		}
	})
}

func TestStreamNetworkErrors(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		_, err = NewAnthropic(Config{BaseURL: "http://" + addr, APIKey: testKey}).Stream(context.Background(), testReq)
		wantKind(t, err, KindRefused, false)
	})
	t.Run("per-attempt timeout before headers", func(t *testing.T) {
		srv := newServer(t, block())
		_, err := NewAnthropic(Config{BaseURL: srv.URL, APIKey: testKey, Timeout: 50 * time.Millisecond}).Stream(context.Background(), testReq)
		wantKind(t, err, KindTimeout, false)
		if e := (*Error)(nil); !errors.As(err, &e) || !e.AttemptTimeout {
			t.Errorf("AttemptTimeout = false, want true: Config.Timeout fired")
		}
	})
	t.Run("per-attempt timeout mid-stream", func(t *testing.T) {
		srv := newServer(t, block(anthropicOK[:4]...))
		_, err := NewOpenAI(Config{BaseURL: srv.URL, APIKey: testKey, Timeout: 50 * time.Millisecond}).Stream(context.Background(), testReq)
		wantKind(t, err, KindTimeout, false)
		srv2 := newServer(t, block(anthropicOK[:4]...))
		_, err = NewAnthropic(Config{BaseURL: srv2.URL, APIKey: testKey, Timeout: 50 * time.Millisecond}).Stream(context.Background(), testReq)
		wantKind(t, err, KindTimeout, true)
	})
	t.Run("network timeout from the transport", func(t *testing.T) {
		srv := newServer(t, block())
		hc := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 50 * time.Millisecond}}
		_, err := NewAnthropic(Config{BaseURL: srv.URL, HTTPClient: hc}).Stream(context.Background(), testReq)
		wantKind(t, err, KindTimeout, false)
		if e := (*Error)(nil); !errors.As(err, &e) || e.AttemptTimeout {
			t.Errorf("AttemptTimeout = true, want false: the transport timed out, not Config.Timeout")
		}
	})
	t.Run("caller cancels mid-stream", func(t *testing.T) {
		srv := newServer(t, block(anthropicOK[:4]...))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Cancel as soon as content arrives: deterministic, no sleeps.
		c := NewAnthropic(Config{BaseURL: srv.URL, Timeout: time.Hour, OnText: func(string) { cancel() }})
		_, err := c.Stream(ctx, testReq)
		wantKind(t, err, KindCanceled, true)
	})
	t.Run("caller canceled before the call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := NewOpenAI(Config{BaseURL: "http://" + closedAddr(t)}).Stream(ctx, testReq)
		wantKind(t, err, KindCanceled, false)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("errors.Is(err, context.Canceled) = false for %v", err)
		}
	})
	t.Run("caller deadline is cancellation, not attempt timeout", func(t *testing.T) {
		srv := newServer(t, block())
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := NewAnthropic(Config{BaseURL: srv.URL, Timeout: time.Hour}).Stream(ctx, testReq)
		wantKind(t, err, KindCanceled, false)
	})
}

func wantKind(t *testing.T, err error, kind Kind, streamed bool) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v, want *Error", err, err)
	}
	if e.Kind != kind || e.Streamed != streamed {
		t.Fatalf("got Kind %q Streamed %v (%v), want Kind %q Streamed %v", e.Kind, e.Streamed, err, kind, streamed)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("error leaks the API key: %v", err)
	}
}

// TestAPIKeyNeverInErrors has the server echo the key back everywhere it can.
func TestAPIKeyNeverInErrors(t *testing.T) {
	const plainKey = "plain-key-without-prefix-42"
	echo := func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Api-Key") + r.Header.Get("Authorization")
		mode, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		switch mode {
		case "http":
			fail(401, anthropicErrBody("authentication_error", "invalid x-api-key "+key))(w, r)
		case "openai-http":
			fail(401, fmt.Sprintf(`{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error","code":"invalid_api_key"}}`, key))(w, r)
		case "raw":
			fail(500, "bad key "+key)(w, r)
		case "sse":
			stream(fmt.Sprintf("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"key %s\"}}\n\n", key))(w, r)
		case "parse":
			stream("event: message_start\ndata: {"+key+"\n\n")(w, r)
		}
	}
	srv := newServer(t, http.HandlerFunc(echo))
	for _, key := range []string{testKey, plainKey} {
		for _, mode := range []string{"http", "openai-http", "raw", "sse", "parse"} {
			for _, provider := range Names() {
				c, _ := New(provider, Config{BaseURL: srv.URL + "/" + mode, APIKey: key})
				_, err := c.Stream(context.Background(), testReq)
				if err == nil {
					t.Fatalf("%s/%s: no error", provider, mode)
				}
				if strings.Contains(err.Error(), key) || strings.Contains(fmt.Sprintf("%+v", err), key) {
					t.Errorf("%s/%s: error leaks the API key: %v", provider, mode, err)
				}
			}
		}
	}
	// A transport error naming the key (here: in the URL) is scrubbed too.
	_, err := NewAnthropic(Config{BaseURL: "http://" + closedAddr(t) + "/" + plainKey, APIKey: plainKey}).Stream(context.Background(), testReq)
	if err == nil || strings.Contains(err.Error(), plainKey) {
		t.Errorf("transport error leaks the API key: %v", err)
	}
}

func TestNewUnknownProvider(t *testing.T) {
	_, err := New("gemeni", Config{})
	if err == nil {
		t.Fatal("New(gemeni) succeeded, want an error")
	}
	for _, n := range Names() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %s", err, n)
		}
	}
}

// closedAddr returns the address of a loopback listener opened and closed:
// nothing listens there, whatever the machine runs on fixed ports.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// A base URL given the way OPENAI_BASE_URL usually is (ending in /v1) must
// not turn into /v1/v1/...
func TestBaseURLWithV1(t *testing.T) {
	tests := []struct{ in, def, want string }{
		{"", "https://api.openai.com", "https://api.openai.com"},
		{"http://127.0.0.1:9/", "x", "http://127.0.0.1:9"},
		{"http://127.0.0.1:9/v1", "x", "http://127.0.0.1:9"},
		{"http://127.0.0.1:9/v1/", "x", "http://127.0.0.1:9"},
		{"http://proxy/openai/v1", "x", "http://proxy/openai"},
	}
	for _, tt := range tests {
		if got := trimBase(tt.in, tt.def); got != tt.want {
			t.Errorf("trimBase(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
