package retry

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// wireAttempt is how the test server answers one attempt: an HTTP error
// with these headers (status 0: a complete stream).
type wireAttempt struct {
	status  int
	headers map[string]string
}

const wireOK = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// runWire runs one logical request under p through the real Anthropic
// client against a server that answers the k-th attempt with attempts[k],
// and with a complete stream past the end. It returns the RetryAttempt
// events; their waits are in policy time (the sleeps are scaled down to
// nothing, so the test does not depend on the clock).
func runWire(t *testing.T, p *Policy, attempts ...wireAttempt) []trace.RetryAttempt {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := int(n.Add(1)) - 1
		if k < len(attempts) && attempts[k].status != 0 {
			a := attempts[k]
			for h, v := range a.headers {
				w.Header().Set(h, v)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.status)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"api_error","message":"status %d"}}`, a.status)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, wireOK)
	}))
	t.Cleanup(srv.Close)
	return runAt(t, p, srv.URL)
}

// runAt runs one logical request under p through the real Anthropic client
// against baseURL, and returns the RetryAttempt events.
func runAt(t *testing.T, p *Policy, baseURL string) []trace.RetryAttempt {
	t.Helper()
	c := provider.NewAnthropic(provider.Config{BaseURL: baseURL, APIKey: "test-key"})
	var buf bytes.Buffer
	r := &Retrier{Policy: p, Provider: "anthropic", Model: "m", Trace: trace.NewWriter(&buf, "t"),
		Rand: fixedRand(0), TimeScale: 1e-9}
	_ = r.Do(context.Background(), func(ctx context.Context, _ Attempt) error {
		_, err := c.Stream(ctx, provider.Request{Model: "m", Messages: []provider.Message{{Role: "user", Content: "hi"}}})
		return err
	})
	return eventsOf[trace.RetryAttempt](t, decodeEvents(t, buf.Bytes()), trace.TypeRetryAttempt)
}
