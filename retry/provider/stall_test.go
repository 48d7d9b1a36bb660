package provider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	wireformat "github.com/retrylab/retrylab/internal/wire"
)

// stallTransport answers every request with the first two events of the
// format's stream, then the format's keepalive every second until the
// request's context ends: a stream that stays busy on the wire and never
// carries the answer (the chaos stall fault).
type stallTransport struct{ format string }

func (s stallTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	f := wireformat.Must(s.format)
	ok := wireformat.Stream(wireformat.Params{Format: f, Model: f.DefaultModel(), RequestID: "req_mock1", Now: time.Unix(0, 0)})
	pr, pw := io.Pipe()
	go func() {
		for _, p := range ok.Pieces[:2] {
			pw.Write(p)
		}
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				pw.Write([]byte(f.Keepalive()))
			case <-req.Context().Done():
				pw.CloseWithError(req.Context().Err())
				return
			}
		}
	}()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr, Request: req}, nil
}

// TestKeepaliveStallTimesOut: keepalives every second do not keep an
// attempt alive past Config.Timeout, in any format, because the timeout
// bounds the whole attempt (it is no idle timer that a byte or a ping
// resets): the stall ends at exactly the timeout, as KindTimeout with
// AttemptTimeout, after the events that did stream.
func TestKeepaliveStallTimesOut(t *testing.T) {
	for _, name := range []string{"anthropic", "openai", "openai-responses", "gemini"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, err := New(name, Config{BaseURL: "http://mock.invalid", APIKey: testKey, Timeout: 10 * time.Second,
					HTTPClient: &http.Client{Transport: stallTransport{name}}})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				_, err = c.Stream(context.Background(), testReq)
				if took := time.Since(start); took != 10*time.Second {
					t.Errorf("the stall ended after %s of fake time, want the 10s timeout", took)
				}
				var e *Error
				if !errors.As(err, &e) || e.Kind != KindTimeout || !e.AttemptTimeout {
					t.Fatalf("got %v, want a per-attempt timeout", err)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("error leaks the key: %v", err)
				}
			})
		})
	}
}
