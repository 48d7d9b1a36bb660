package retry

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
)

// half makes every Float64() exactly 0.5, so jittered waits are reproducible.
const half = 1 << 52

// TestPresetSchedules checks the exact wait schedule of every preset under
// fake time: the gaps between attempts as the call observed them.
func TestPresetSchedules(t *testing.T) {
	t.Parallel()
	rep := func(e error, n int) []error {
		out := make([]error, n)
		for i := range out {
			out[i] = e
		}
		return out
	}
	reset := &provider.Error{Kind: provider.KindReset, Provider: "anthropic"}
	drop := &provider.Error{Kind: provider.KindIncomplete, Provider: "anthropic", Streamed: true}
	timeout := &provider.Error{Kind: provider.KindTimeout, Provider: "anthropic"}
	tests := []struct {
		name     string
		preset   string
		rand     uint64
		errs     []error
		gaps     []time.Duration
		attempts int
		success  bool
	}{
		{"forgeflare 529 ×4 then ok: 2,4,8,16", "forgeflare", 0, rep(httpErr(529), 4), secs(2, 4, 8, 16), 5, true},
		{"forgeflare gives up after 5 attempts", "forgeflare", 0, rep(httpErr(503), 6), secs(2, 4, 8, 16), 5, false},
		{"forgeflare 400 is permanent", "forgeflare", 0, rep(httpErr(400), 2), nil, 1, false},
		{"forgeflare 401 is permanent", "forgeflare", 0, rep(httpErr(401), 2), nil, 1, false},
		{"forgeflare 403 is permanent", "forgeflare", 0, rep(httpErr(403), 2), nil, 1, false},
		{"forgeflare unknown 4xx (418) is permanent", "forgeflare", 0, rep(httpErr(418), 2), nil, 1, false},
		{"forgeflare unknown 5xx (599) is transient", "forgeflare", 0, rep(httpErr(599), 1), secs(2), 2, true},
		{"forgeflare retry-after 5 replaces backoff", "forgeflare", 0, []error{retryAfterErr(429, "5", 5*time.Second)}, secs(5), 2, true},
		{"forgeflare retry-after 0 retries at once", "forgeflare", 0, []error{retryAfterErr(429, "0", 0)}, secs(0), 2, true},
		{"forgeflare retry-after capped at 60s", "forgeflare", 0, []error{retryAfterErr(429, "120", 120*time.Second)}, secs(60), 2, true},
		{"forgeflare fractional retry-after falls back", "forgeflare", 0, []error{retryAfterErr(429, "1.5", 1500*time.Millisecond)}, secs(2), 2, true},
		{"forgeflare HTTP-date retry-after falls back", "forgeflare", 0, []error{retryAfterErr(429, "Sat, 21 Nov 2026 10:00:05 GMT", 5*time.Second)}, secs(2), 2, true},
		{"forgeflare SSE overloaded_error is transient", "forgeflare", 0, []error{sseErr("overloaded_error"), sseErr("api_error"), sseErr("rate_limit_error"), sseErr("")}, secs(2, 4, 8, 16), 5, true},
		{"forgeflare SSE invalid_request_error is permanent", "forgeflare", 0, []error{sseErr("invalid_request_error")}, nil, 1, false},
		// Regression: these SSE types classify as auth_invalid etc., which
		// forgeflare does not retry over HTTP; seed 000 R1 makes every SSE
		// error type but invalid_request_error StreamTransient.
		{"forgeflare SSE authentication_error, not_found_error, request_too_large are transient", "forgeflare", 0, []error{sseErr("authentication_error"), sseErr("not_found_error"), sseErr("request_too_large")}, secs(2, 4, 8), 4, true},
		{"orchestrator SSE authentication_error not retried", "orchestrator", 0, []error{sseErr("authentication_error")}, nil, 1, false},
		{"forgeflare stream without stop_reason, timeout, reset", "forgeflare", 0, []error{drop, timeout, reset}, secs(2, 4, 8), 4, true},

		{"plandex rate_limit 5 attempts, full jitter at 0.5", "plandex", half, rep(httpErr(429), 5), secs(1, 2, 4, 8), 5, false},
		{"plandex overloaded 5 attempts", "plandex", half, rep(httpErr(529), 5), secs(5, 10, 20, 40), 5, false},
		{"plandex server_error 3 attempts", "plandex", half, rep(httpErr(500), 3), secs(1, 2), 3, false},
		{"plandex timeout 2 attempts immediate", "plandex", half, rep(httpErr(504), 2), secs(0), 2, false},
		{"plandex connection_error 3 attempts ×1.5", "plandex", half, rep(error(reset), 3), secs(0.375, 0.5625), 3, false},
		{"plandex stream_interrupted 2 attempts", "plandex", half, rep(error(drop), 2), secs(0.75), 2, false},
		{"plandex provider_unavailable 3 attempts", "plandex", half, rep(httpErr(502), 3), secs(1, 2), 3, false},
		{"plandex full jitter at 0 retries at once", "plandex", 0, rep(httpErr(429), 2), secs(0, 0), 3, true},
		{"plandex retry-after 5s padded 10%", "plandex", half, []error{retryAfterErr(429, "5", 5*time.Second)}, secs(5.5), 2, true},
		{"plandex retry-after 12s above the 10s ceiling", "plandex", half, []error{retryAfterErr(429, "12", 12*time.Second)}, nil, 1, false},
		{"plandex quota_exhausted fails fast", "plandex", half, []error{&provider.Error{Kind: provider.KindHTTP, Status: 429, Message: "You exceeded your current quota"}}, nil, 1, false},

		{"orchestrator 4 attempts 1,2,4 (jitter 0 at 0.5)", "orchestrator", half, rep(httpErr(500), 4), secs(1, 2, 4), 4, false},
		{"orchestrator −10% at rand 0", "orchestrator", 0, rep(httpErr(429), 3), secs(0.9, 1.8, 3.6), 4, true},
		{"orchestrator ECONNRESET retried", "orchestrator", half, []error{reset}, secs(1), 2, true},
		{"orchestrator 404 not retried", "orchestrator", half, []error{httpErr(404)}, nil, 1, false},

		{"escalation-epic 1,2,4 then stop", "escalation-epic", 0, rep(httpErr(503), 5), secs(1, 2, 4), 4, false},
		{"escalation-epic 529 not retried", "escalation-epic", 0, []error{httpErr(529)}, nil, 1, false},
		{"escalation-epic timeout retried", "escalation-epic", 0, []error{timeout}, secs(1), 2, true},
		{"escalation-epic context_length not retried", "escalation-epic", 0, []error{&provider.Error{Kind: provider.KindHTTP, Status: 400, Message: "context_length exceeded"}}, nil, 1, false},

		{"forge-ticket transient exponential 1,2,4", "forge-ticket", 0, rep(httpErr(503), 4), secs(1, 2, 4), 4, false},
		{"forge-ticket api_error linear 1,2", "forge-ticket", 0, rep(httpErr(401), 3), secs(1, 2), 3, false},
		{"forge-ticket code_error one immediate retry", "forge-ticket", 0, rep(error(&provider.Error{Kind: provider.KindParse}), 2), secs(0), 2, false},

		{"anthropic-sdk 0.5s,1s × 0.875", "anthropic-sdk", half, rep(httpErr(529), 3), secs(0.4375, 0.875), 3, false},
		{"anthropic-sdk at rand 0: 0.5s,1s", "anthropic-sdk", 0, rep(httpErr(408), 3), secs(0.5, 1), 3, false},
		{"anthropic-sdk 409 retried", "anthropic-sdk", 0, []error{httpErr(409)}, secs(0.5), 2, true},
		{"anthropic-sdk retry-after-ms 1500", "anthropic-sdk", 0, []error{retryAfterErr(429, "", 1500*time.Millisecond)}, secs(1.5), 2, true},
		{"anthropic-sdk retry-after 61s falls back", "anthropic-sdk", 0, []error{retryAfterErr(429, "61", 61*time.Second)}, secs(0.5), 2, true},
		{"anthropic-sdk retry-after 0 falls back", "anthropic-sdk", 0, []error{retryAfterErr(429, "0", 0)}, secs(0.5), 2, true},
		{"anthropic-sdk x-should-retry false", "anthropic-sdk", 0, []error{&provider.Error{Kind: provider.KindHTTP, Status: 503, ShouldRetry: ptr(false)}}, nil, 1, false},
		{"anthropic-sdk x-should-retry true on 400", "anthropic-sdk", 0, []error{&provider.Error{Kind: provider.KindHTTP, Status: 400, ShouldRetry: ptr(true)}}, secs(0.5), 2, true},
		{"anthropic-sdk mid-stream errors not retried", "anthropic-sdk", 0, []error{sseErr("overloaded_error")}, nil, 1, false},
		{"openai-sdk same defaults", "openai-sdk", 0, rep(httpErr(500), 3), secs(0.5, 1), 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &Retrier{Policy: mustPreset(t, tt.preset), Provider: "anthropic", Model: "m", Rand: fixedRand(tt.rand)}
				got := doFake(t, r, tt.errs...)
				if diff := cmp.Diff(tt.gaps, got.gaps); diff != "" {
					t.Errorf("gaps mismatch (-want +got):\n%s", diff)
				}
				if len(got.models) != tt.attempts {
					t.Errorf("attempts = %d, want %d", len(got.models), tt.attempts)
				}
				if (got.err == nil) != tt.success {
					t.Errorf("err = %v, want success %v", got.err, tt.success)
				}
				if got.err != nil && !errors.Is(got.err, ErrExhausted) {
					t.Errorf("err %v is not ErrExhausted", got.err)
				}
			})
		})
	}
}
