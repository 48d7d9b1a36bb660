package retry

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// failed is a Responses stream's response.failed (or error event): a code
// and a message, after the stream began.
func failed(code, msg string) *provider.Error {
	return &provider.Error{Kind: provider.KindSSEError, Provider: provider.ResponsesProvider, Code: code, Message: msg, Streamed: true}
}

// TestClassifyResponses covers every path a Responses API failure takes
// through the classifier: the status, the body's code, the in-stream codes
// (OpenAI's, and the Anthropic-style types the mock may send as codes), the
// message, and a stream without response.completed.
func TestClassifyResponses(t *testing.T) {
	t.Parallel()
	rh := func(status int, typ, code, msg string) *provider.Error {
		e := h(status, typ, code, msg)
		e.Provider = provider.ResponsesProvider
		return e
	}
	tests := []struct {
		name     string
		err      error
		typ      FailureType
		class    Class
		streamed bool
	}{
		{"HTTP 503 overloaded", rh(503, "server_error", "server_is_overloaded", "The server is overloaded"), Overloaded, Retryable, false},
		{"HTTP 429 rate_limit_exceeded", rh(429, "requests", "rate_limit_exceeded", "Please try again in 1.5s"), RateLimit, Retryable, false},
		{"HTTP 429 insufficient_quota", rh(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota"), QuotaExhausted, NonRetryable, false},
		{"HTTP 400 not retried", rh(400, "invalid_request_error", "", "Unsupported parameter"), InvalidRequest, NonRetryable, false},
		{"HTTP 500", rh(500, "server_error", "", "oops"), ServerError, Retryable, false},
		{"response.failed rate_limit_exceeded", failed("rate_limit_exceeded", "Please try again in 2s."), RateLimit, Retryable, true},
		{"response.failed rate limit that says quota", failed("rate_limit_exceeded", "You exceeded your current quota"), QuotaExhausted, NonRetryable, true},
		{"response.failed server_error", failed("server_error", "The server had an error"), ServerError, Retryable, true},
		{"server_is_overloaded (Codex: overloaded)", failed("server_is_overloaded", "busy"), Overloaded, Retryable, true},
		{"slow_down (Codex: overloaded)", failed("slow_down", "slow down"), Overloaded, Retryable, true},
		{"insufficient_quota", failed("insufficient_quota", "quota"), QuotaExhausted, NonRetryable, true},
		{"billing_not_active", failed("billing_not_active", "inactive"), BillingError, Conditional, true},
		{"context_length_exceeded", failed("context_length_exceeded", "too long"), ContextTooLong, NonRetryable, true},
		{"invalid_prompt (stream_parse: refused in the stream)", failed("invalid_prompt", "flagged"), StreamParse, NonRetryable, true},
		{"invalid_api_key", failed("invalid_api_key", "bad key"), AuthInvalid, NonRetryable, true},
		{"model_not_found", failed("model_not_found", "no model"), ModelNotFound, NonRetryable, true},
		{"vector_store_timeout", failed("vector_store_timeout", "slow store"), Timeout, Retryable, true},
		{"image code", failed("image_too_large", "big"), StreamParse, NonRetryable, true},
		{"image_content_policy_violation", failed("image_content_policy_violation", "no"), StreamParse, NonRetryable, true},
		{"the mock's fault type as code: overloaded_error", failed("overloaded_error", "Overloaded"), Overloaded, Retryable, true},
		{"the mock's fault type as code: rate_limit_error", failed("rate_limit_error", "slow"), RateLimit, Retryable, true},
		{"the mock's fault type as code: api_error", failed("api_error", "oops"), ServerError, Retryable, true},
		{"unknown code", failed("mystery", "?"), Unknown, Conditional, true},
		{"no code", failed("", "response failed"), Unknown, Conditional, true},
		{"the code wins over the type", &provider.Error{Kind: provider.KindSSEError, ErrorType: "invalid_request_error",
			Code: "context_length_exceeded", Streamed: true}, ContextTooLong, NonRetryable, true},
		{"a chat completions error chunk: type server_error, no code", &provider.Error{Kind: provider.KindSSEError, Provider: "openai",
			ErrorType: "server_error", Streamed: true}, ServerError, Retryable, true},
		{"response.incomplete", &provider.Error{Kind: provider.KindIncomplete, Provider: provider.ResponsesProvider,
			Message: "response incomplete: max_output_tokens", Streamed: true}, StreamInterrupted, Retryable, true},
		{"stream without response.completed", &provider.Error{Kind: provider.KindIncomplete, Provider: provider.ResponsesProvider,
			Message: "stream ended before the end of the response"}, StreamInterrupted, Retryable, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Classify(tt.err)
			want := []any{tt.typ, tt.class.String(), tt.streamed}
			if diff := cmp.Diff(want, []any{c.Type, c.Class.String(), c.Streamed}); diff != "" {
				t.Errorf("Classify(%v) mismatch (-want +got):\n%s", tt.err, diff)
			}
		})
	}
}

// TestMessageRetryAfter: "try again in Ns" is read from HTTP bodies and
// in-stream errors, and used only by a policy that reads messages, and only
// when no header gave a Retry-After.
func TestMessageRetryAfter(t *testing.T) {
	t.Parallel()
	withHeader := h(429, "requests", "rate_limit_exceeded", "Please try again in 1.5s.")
	withHeader.RetryAfter, withHeader.RetryAfterRaw, withHeader.HasRetryAfter = 5*time.Second, "5", true
	tests := []struct {
		name    string
		err     *provider.Error
		message bool
		hint    time.Duration
		hasHint bool
		want    time.Duration
		ok      bool
	}{
		{"in-stream, policy reads messages", failed("rate_limit_exceeded", "Please try again in 2s."), true, 2 * time.Second, true, 2 * time.Second, true},
		{"in-stream, policy reads headers only", failed("rate_limit_exceeded", "Please try again in 2s."), false, 2 * time.Second, true, 0, false},
		{"HTTP body, no header", h(429, "requests", "rate_limit_exceeded", "Please try again in 750ms."), true, 750 * time.Millisecond, true, 750 * time.Millisecond, true},
		{"the header wins", withHeader, true, 1500 * time.Millisecond, true, 5 * time.Second, true},
		{"no phrase", failed("server_error", "The server had an error"), true, 0, false, 0, false},
		{"a transport error has no message hint", &provider.Error{Kind: provider.KindIncomplete, Message: "try again in 3s"}, true, 0, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Classify(tt.err)
			if c.MessageRetryAfter != tt.hint || c.HasMessageRetryAfter != tt.hasHint {
				t.Errorf("Classify: message retry-after %v, %t; want %v, %t", c.MessageRetryAfter, c.HasMessageRetryAfter, tt.hint, tt.hasHint)
			}
			p := mustPreset(t, "openai-sdk")
			p.RetryAfter.Message = tt.message
			d, ok := p.readRetryAfter(c, time.Now())
			if d != tt.want || ok != tt.ok {
				t.Errorf("readRetryAfter = %v, %t; want %v, %t", d, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParsePolicyRetryAfterMessage(t *testing.T) {
	t.Parallel()
	p, err := TestPolicies.Parse([]byte("preset: openai-sdk\nretryAfter: {message: true}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !p.RetryAfter.Message || !strings.Contains(p.String(), "message: true") {
		t.Errorf("retryAfter.message not read or not rendered: %+v\n%s", p.RetryAfter, p)
	}
	if _, err := TestPolicies.Parse([]byte("retryAfter: {message: often}\n"), "p.yaml"); err == nil {
		t.Error("retryAfter.message: often parsed, want an error")
	}
}

// TestResponsesWire runs the retry core over the real Responses client:
// an overload, then response.failed rate_limit_exceeded saying "try again
// in 2s" mid-stream, then a whole response. A policy that retries stream
// errors and reads messages waits the backoff, then the 2s.
func TestResponsesWire(t *testing.T) {
	t.Parallel()
	ev := func(typ, fields string) string {
		return fmt.Sprintf("event: %s\ndata: {\"type\":%q,\"sequence_number\":0,%s}\n\n", typ, typ, fields)
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			w.WriteHeader(503)
			fmt.Fprint(w, `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`)
		case 2:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ev("response.output_text.delta", `"delta":"hel"`)+
				ev("response.failed", `"response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 2s."}}`))
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ev("response.output_text.delta", `"delta":"hello"`)+
				ev("response.completed", `"response":{"status":"completed","model":"gpt-4.1","usage":{"input_tokens":1,"output_tokens":1}}`))
		}
	}))
	t.Cleanup(srv.Close)
	p, err := TestPolicies.Parse([]byte("preset: openai-sdk\nstreamErrors: true\nretryAfter: {message: true}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := provider.New(provider.ResponsesProvider, provider.Config{BaseURL: srv.URL + "/v1", APIKey: "test-key"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	r := &Retrier{Policy: p, Provider: provider.ResponsesProvider, Model: "gpt-4.1", Trace: trace.NewWriter(&buf, "t"),
		Rand: fixedRand(0), TimeScale: 1e-9}
	var text string
	err = r.Do(context.Background(), func(ctx context.Context, _ Attempt) error {
		resp, err := c.Stream(ctx, provider.Request{Model: "gpt-4.1", Messages: []provider.Message{{Role: "user", Content: "hi"}}})
		if err == nil {
			text = resp.Text
		}
		return err
	})
	if err != nil || text != "hello" {
		t.Fatalf("Do() = %v with text %q, want success with hello", err, text)
	}
	type got struct {
		FailureType, DelaySource string
		DelayMs                  int64
		Status                   int
	}
	var out []got
	for _, a := range eventsOf[trace.RetryAttempt](t, decodeEvents(t, buf.Bytes()), trace.TypeRetryAttempt) {
		out = append(out, got{a.FailureType, a.DelaySource, a.DelayMs, a.Status})
	}
	want := []got{{"overloaded", "backoff", 500, 503}, {"rate_limit", "retry-after", 2000, 0}}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("RetryAttempt events mismatch (-want +got):\n%s", diff)
	}
}
