package retry

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/retry/provider"
)

// TestResendsInTheLoop runs the presets whose clients re-send some
// failures outside their backoff loop (measured: docs/agents.md) through
// Retrier.Do under fake time: how many attempts, and each gap.
func TestResendsInTheLoop(t *testing.T) {
	e400, e404, e529 := httpErr(400), httpErr(404), httpErr(529)
	sse := sseErr("overloaded_error")
	cut := &provider.Error{Kind: provider.KindEOF, Provider: "anthropic", Streamed: true}
	tests := []struct {
		name     string
		preset   string
		errs     []error
		attempts int
		gaps     []time.Duration
		failed   bool
	}{
		{"claude-code re-sends a 400 five times, at once", "claude-code",
			[]error{e400, e400, e400, e400, e400, e400, e400}, 6, make([]time.Duration, 5), true},
		{"claude-code re-sends a 404 once", "claude-code", []error{e404, e404, e404}, 2, []time.Duration{0}, true},
		{"a 400 re-send is not a backoff attempt (529, 400, 529: 500ms, 0, 1s)", "claude-code",
			[]error{e529, e400, e529}, 4, secs(0.5, 0, 1), false},
		{"an SSE error is re-sent at once and the count restarts (529, 529, SSE, 529)", "claude-code",
			[]error{e529, e529, sse, e529}, 5, secs(0.5, 1, 0, 0.5), false},
		{"a cut stream waits the backoff", "claude-code", []error{cut}, 2, secs(0.5), false},
		{"cuts back off by their number in the request (cut × 3)", "claude-code", []error{cut, cut, cut}, 4, secs(0.5, 1, 2), false},
		{"a cut after two 529s waits 2s, and the 529 after it 500ms", "claude-code",
			[]error{e529, e529, cut, e529}, 5, secs(0.5, 1, 2, 0.5), false},
		{"a 422 shares the 400's five re-sends", "claude-code",
			[]error{e400, httpErr(422), e400, httpErr(422), e400, httpErr(422), e400}, 6, make([]time.Duration, 5), true},
		{"gemini-cli re-sends an error frame after 1s, 2s, 4s, then gives up", "gemini-cli",
			[]error{sse, sse, sse, sse, sse}, 4, secs(1, 2, 4), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got := doFake(t, &Retrier{Policy: mustPreset(t, tt.preset)}, tt.errs...)
				if n := len(got.gaps) + 1; n != tt.attempts {
					t.Errorf("attempts = %d, want %d", n, tt.attempts)
				}
				if diff := cmp.Diff(tt.gaps, got.gaps); diff != "" {
					t.Errorf("gaps mismatch (-want +got):\n%s", diff)
				}
				if (got.err != nil) != tt.failed {
					t.Errorf("err = %v, want failed %t", got.err, tt.failed)
				}
			})
		})
	}
}

// TestClaudeCodeRetryAfterRules: Claude Code reads retry-after with
// parseInt (no HTTP-date, "2.5" is 2s), gives up above 60s, and
// retries a 503 whatever its x-should-retry says.
func TestClaudeCodeRetryAfterRules(t *testing.T) {
	p := mustPreset(t, "claude-code")
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	read := func(v string) string {
		d, ok := p.ReadRetryAfter(http.Header{"Retry-After": {v}}, now)
		if !ok {
			return "none"
		}
		return d.String()
	}
	got := map[string]string{}
	for _, v := range []string{"2", "2.5", "5s", "Wed, 21 Oct 2099 07:28:00 GMT", "x"} {
		got[v] = read(v)
	}
	want := map[string]string{"2": "2s", "2.5": "2s", "5s": "5s", "Wed, 21 Oct 2099 07:28:00 GMT": "none", "x": "none"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadRetryAfter mismatch (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		ra   time.Duration
		want bool
	}{{20 * time.Second, true}, {60 * time.Second, true}, {61 * time.Second, false}, {time.Hour, false}} {
		if _, _, ok := p.Envelope(RateLimit, 1, tc.ra, true); ok != tc.want {
			t.Errorf("Envelope(rate_limit, retry-after %s) ok = %t, want %t", tc.ra, ok, tc.want)
		}
	}
	no := false
	for st, want := range map[int]bool{503: true, 529: false, 429: false, 500: false} {
		c := Classify(withShouldRetry(httpErr(st), &no))
		if got := p.Retries(c); got != want {
			t.Errorf("Retries(%d with x-should-retry: false) = %t, want %t", st, got, want)
		}
	}
}

func withShouldRetry(e *provider.Error, v *bool) *provider.Error { e.ShouldRetry = v; return e }

// TestGeminiCLIRetryInfoFloor: a RetryInfo retryDelay above the backoff
// is waited as max(nominal backoff, retryDelay) × (1 + up to 20%).
func TestGeminiCLIRetryInfoFloor(t *testing.T) {
	p := mustPreset(t, "gemini-cli")
	type env struct{ Lo, Hi time.Duration }
	var got []env
	for _, ra := range []time.Duration{8 * time.Second, 2 * time.Second} {
		lo, hi, ok := p.Envelope(RateLimit, 1, ra, true)
		if !ok {
			t.Fatalf("Envelope(rate_limit, %s) not retried", ra)
		}
		got = append(got, env{lo, hi})
	}
	want := []env{{8 * time.Second, 9600 * time.Millisecond}, {5 * time.Second, 6 * time.Second}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Envelope mismatch (-want +got):\n%s", diff)
	}
}
