package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/internal/wire"
)

// A scenario of the Responses wire format that names no policy gets the
// OpenAI SDK's, the SDK that speaks it; the others get NAME-sdk.
func TestSDKPreset(t *testing.T) {
	t.Parallel()
	for provider, want := range map[string]string{"anthropic": "anthropic-sdk", "openai": "openai-sdk", "openai-responses": "openai-sdk"} {
		sc := &Scenario{Provider: provider}
		pol, err := policyFor(sc)
		if err != nil || pol.Name != want {
			t.Errorf("policyFor(provider %s) = %v, %v; want the %s preset", provider, pol, err, want)
		}
	}
}

// For a client without a trace, "try again in 2s" in a fault's message is
// the Retry-After its policy reads when the policy reads messages
// (retryAfter.message), in a response.failed event as in an HTTP body, and
// a header still wins.
func TestInferFailureMessageRetryAfter(t *testing.T) {
	t.Parallel()
	ra := "5"
	const msg = "Rate limit reached. Please try again in 2s."
	for _, tc := range []struct {
		name    string
		fault   Fault
		kind    string
		message bool
		want    time.Duration // -1: none
	}{
		{"response.failed, policy reads messages", Fault{Kind: fault.SSEError{Type: "rate_limit_exceeded", Message: msg}}, FaultSSEError, true, 2 * time.Second},
		{"response.failed, policy reads headers only", Fault{Kind: fault.SSEError{Type: "rate_limit_exceeded", Message: msg}}, FaultSSEError, false, -1},
		{"429 body, no header", Fault{Kind: fault.Status{Status: 429, Message: msg}}, FaultStatus, true, 2 * time.Second},
		{"429 body and a header: the header wins", Fault{Kind: fault.Status{Status: 429, Message: msg, RetryAfter: &ra}}, FaultStatus, true, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &Scenario{Provider: "openai-responses", Attempts: []Fault{tc.fault}}
			policy := map[string]any{"preset": "openai-sdk", "streamErrors": true, "retryAfter": map[string]any{"message": tc.message}}
			if err := sc.Client.Policy.Encode(policy); err != nil {
				t.Fatal(err)
			}
			pol, err := policyFor(sc)
			if err != nil {
				t.Fatal(err)
			}
			in := inferFailure(sc, pol, 0, ServerAttempt{N: 1, Fault: tc.kind, Ended: time.Now()})
			g := time.Duration(-1)
			if in.retryAfter != nil {
				g = *in.retryAfter
			}
			if g != tc.want || in.ft != "rate_limit" {
				t.Errorf("inferFailure = %s, retry-after %v; want rate_limit, %v", in.ft, g, tc.want)
			}
		})
	}
}

// TestBuiltinEveryFormat runs the built-in client through every fault a
// stream can meet, in every wire format the mock speaks: each format has a
// provider client (a new format without one fails here), and its failures
// classify alike. Waits are not checked (timeScale 0.01 keeps them short).
func TestBuiltinEveryFormat(t *testing.T) {
	toxi := runnerToxi(t)
	var scs []*Scenario
	for _, name := range wire.Names() {
		scs = append(scs, parse(t, name, fmt.Sprintf(`
provider: %s
client: {policy: forgeflare}
timeScale: 0.01
attempts:
  - status: 503
  - sseError: {afterEvents: 3, type: overloaded_error}
  - drop: {afterEvents: 2}
  - reset: {}
expect:
  outcome: success
  attempts: 5
  failureTypes: [overloaded, overloaded, stream_interrupted, connection_error]
`, name)))
	}
	r := &Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), Seed: 7, Shard: "1/1"}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range sum.Scenarios {
		if !notFailed(res) {
			t.Errorf("format %s: failed checks %v: %+v", res.Name, failedNames(res), res)
		}
	}
	if len(sum.Scenarios) != len(wire.Names()) {
		t.Errorf("%d results for %d formats", len(sum.Scenarios), len(wire.Names()))
	}
}
