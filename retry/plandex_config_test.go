package retry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestSeed001PlandexEnvironmentVariables: FromEnv applies the four
// variables of seed 001's table to a copy of the policy.
func TestSeed001PlandexEnvironmentVariables(t *testing.T) {
	t.Parallel()
	p := mustPreset(t, "plandex")
	q, err := FromEnv(p, envOf(map[string]string{
		EnvMaxRetryAttempts: "3", EnvMaxRetryDelayMs: "2000", EnvMaxProviderRetryAfterMs: " 30000 ", EnvRetryIrreversible: "true",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if q.MaxAttempts != 3 || q.MaxDelay != 2*time.Second || q.RetryAfter.Ceiling != 30*time.Second || !q.AllowIrreversible {
		t.Errorf("FromEnv = maxAttempts %d, maxDelay %v, ceiling %v, irreversible %t", q.MaxAttempts, q.MaxDelay, q.RetryAfter.Ceiling, q.AllowIrreversible)
	}
	// The caps lower the table: rate_limit 5 → 3 attempts, overloaded's
	// 120s cap → 2s; timeout's 2 attempts stay 2.
	if s := q.Strategy(RateLimit); s.MaxAttempts != 3 || s.MaxDelay != 2*time.Second {
		t.Errorf("rate_limit = %+v", s)
	}
	if s := q.Strategy(Timeout); s.MaxAttempts != 2 {
		t.Errorf("timeout attempts = %d, want 2 (a cap never raises)", s.MaxAttempts)
	}
	// p itself is untouched.
	if p.MaxAttempts != 0 || p.AllowIrreversible || p.RetryAfter.Ceiling != 10*time.Second {
		t.Errorf("FromEnv changed its argument: %+v", p)
	}
	// Unset variables change nothing.
	same, err := FromEnv(p, envOf(nil))
	if err != nil || same.String() != p.String() {
		t.Errorf("FromEnv with nothing set changed the policy: %v\n%s", err, same)
	}
}

// TestFromEnvBadValues: each bad value is an error naming the variable and
// the value, with a hint.
func TestFromEnvBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, value, want string
	}{
		{EnvMaxRetryAttempts, "three", `PLANDEX_MAX_RETRY_ATTEMPTS="three": not a whole number`},
		{EnvMaxRetryAttempts, "-1", `PLANDEX_MAX_RETRY_ATTEMPTS="-1": negative`},
		{EnvMaxRetryAttempts, "1e3", `PLANDEX_MAX_RETRY_ATTEMPTS="1e3": not a whole number`},
		{EnvMaxRetryAttempts, "1001", `PLANDEX_MAX_RETRY_ATTEMPTS="1001": above the largest value accepted, 1000`},
		{EnvMaxRetryDelayMs, "2s", `PLANDEX_MAX_RETRY_DELAY_MS="2s": not a whole number`},
		{EnvMaxProviderRetryAfterMs, "99999999999", `PLANDEX_MAX_PROVIDER_RETRY_AFTER_MS="99999999999": above the largest value accepted, 86400000`},
		{EnvRetryIrreversible, "yes", `PLANDEX_RETRY_IRREVERSIBLE="yes": not a boolean`},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			_, err := FromEnv(mustPreset(t, "plandex"), envOf(map[string]string{tt.name: tt.value}))
			var ee *EnvError
			if !errors.As(err, &ee) || err.Error() != tt.want || ee.Hint() == "" {
				t.Errorf("FromEnv error = %v, want %q with a hint", err, tt.want)
			}
		})
	}
}

// TestGlobalCapsOnlyLower is the regression test of `all: {maxAttempts: 4}`
// raising plandex's timeout from 2 attempts to 4: a top-level maxAttempts
// is a cap, which only lowers, while `all:` still sets every type.
func TestGlobalCapsOnlyLower(t *testing.T) {
	t.Parallel()
	capped, err := TestPolicies.Parse([]byte("preset: plandex\nmaxAttempts: 4\nmaxDelay: 10s\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	all, err := TestPolicies.Parse([]byte("preset: plandex\nall: {maxAttempts: 4}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ft                FailureType
		capped, overriden int
	}{
		{Timeout, 2, 4},
		{RateLimit, 4, 4},
		{Overloaded, 4, 4},
		{ServerError, 3, 4},
		{CacheError, 2, 4},
	}
	for _, tt := range tests {
		if got := capped.Strategy(tt.ft).MaxAttempts; got != tt.capped {
			t.Errorf("maxAttempts cap: %s has %d attempts, want %d", tt.ft, got, tt.capped)
		}
		if got := all.Strategy(tt.ft).MaxAttempts; got != tt.overriden {
			t.Errorf("all: %s has %d attempts, want %d", tt.ft, got, tt.overriden)
		}
	}
	if s := capped.Strategy(Overloaded); s.MaxDelay != 10*time.Second {
		t.Errorf("overloaded maxDelay = %v, want the 10s cap", s.MaxDelay)
	}
	if s := capped.Strategy(ConnectionError); s.MaxDelay != 5*time.Second {
		t.Errorf("connection_error maxDelay = %v, want its own 5s (below the cap)", s.MaxDelay)
	}
	// The caps render and parse back.
	back, err := TestPolicies.Parse([]byte(capped.String()), "back.yaml")
	if err != nil || back.String() != capped.String() || back.MaxAttempts != 4 || back.MaxDelay != 10*time.Second {
		t.Errorf("round trip: %v\n%s", err, capped)
	}
}

// TestGlobalMaxDelayCapsRetryAfter: the delay cap bounds a Retry-After
// wait too, after its padding (as Plandex's ComputeBackoffDelay does).
func TestGlobalMaxDelayCapsRetryAfter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, err := FromEnv(mustPreset(t, "plandex"), envOf(map[string]string{EnvMaxRetryDelayMs: "3000"}))
		if err != nil {
			t.Fatal(err)
		}
		r := &Retrier{Policy: p, Provider: "openai", Model: "gpt-4"}
		got := doFake(t, r, retryAfterErr(429, "8", 8*time.Second))
		if got.err != nil || !cmp.Equal(got.gaps, secs(3)) {
			t.Errorf("err %v, gaps %v; want one wait of 3s (8.8s capped)", got.err, got.gaps)
		}
	})
}

// TestGlobalMaxAttemptsCapsFallbacks: PLANDEX_MAX_RETRY_ATTEMPTS is a hard
// cap on the attempts of an operation, fallbacks included.
func TestGlobalMaxAttemptsCapsFallbacks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, err := FromEnv(mustPreset(t, "plandex"), envOf(map[string]string{EnvMaxRetryAttempts: "2"}))
		if err != nil {
			t.Fatal(err)
		}
		r := &Retrier{Policy: p, Provider: "openai", Model: "gpt-4", Fallbacks: Fallbacks{Error: "fb"}}
		got := doFake(t, r, httpErr(503), httpErr(503), httpErr(503))
		var ex *ExhaustedError
		if !errors.As(got.err, &ex) || ex.Attempts != 2 || ex.Reason != ReasonAttemptsExhausted {
			t.Errorf("err = %v, want 2 attempts in all", got.err)
		}
		if diff := cmp.Diff([]string{"gpt-4", "gpt-4"}, got.models); diff != "" {
			t.Errorf("models mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestPlandexRetryIrreversible: PLANDEX_RETRY_IRREVERSIBLE=true lets an
// irreversible operation be retried (seed 001's walkthrough 4 otherwise).
func TestPlandexRetryIrreversible(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, err := FromEnv(mustPreset(t, "plandex"), envOf(map[string]string{EnvRetryIrreversible: "true"}))
		if err != nil {
			t.Fatal(err)
		}
		r := &Retrier{Policy: p, Operation: ClassifyOperation("shell_exec")}
		if got := doFake(t, r, httpErr(503)); got.err != nil {
			t.Errorf("err = %v, want the retry to succeed", got.err)
		}
	})
}

// TestCacheErrorBodies: the providers' prompt-cache errors (the bodies
// isCacheError cites) are cache_error; Plandex retries them once, at once,
// and the retry's Attempt says why, so that the caller drops the cache
// parameters.
func TestCacheErrorBodies(t *testing.T) {
	t.Parallel()
	bodies := []*provider.Error{
		{Kind: provider.KindHTTP, Provider: "anthropic", Status: 400, ErrorType: "invalid_request_error",
			Message: "A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{Kind: provider.KindHTTP, Provider: "anthropic", Status: 400, ErrorType: "invalid_request_error",
			Message: "messages.38.content.4.text: cache_control cannot be set for empty text blocks"},
		{Kind: provider.KindHTTP, Provider: "anthropic", Status: 400, ErrorType: "invalid_request_error",
			Message: "messages.0.content.4.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`."},
		{Kind: provider.KindHTTP, Provider: "openai", Status: 400, ErrorType: "invalid_request_error", Code: "invalid_parameter",
			Message: "prompt_cache_retention is not supported on this model"},
	}
	for _, e := range bodies {
		if c := Classify(e); c.Type != CacheError || c.Class != Retryable {
			t.Errorf("Classify(%q) = %s, want cache_error", e.Message, c.Type)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "plandex"), Provider: "anthropic", Model: "m"}
		got := captureRun(t, r, func(call func(context.Context, Attempt) (string, error)) error {
			_, err := r.Run(context.Background(), call)
			return err
		}, nil, bodies[0])
		if got.err != nil || !cmp.Equal(got.gaps, secs(0)) {
			t.Fatalf("err %v, gaps %v; want one retry at once", got.err, got.gaps)
		}
		if prev := got.attempts[1].Previous; prev == nil || prev.Classification.Type != CacheError {
			t.Errorf("second attempt's Previous = %+v, want the cache_error", prev)
		}
	})
}

// TestBillingErrorBodies: Anthropic's billing_error (402 or 403) and OpenAI's
// billing_not_active (429) are billing_error (conditional), while a 402 or
// 429 about credits or quota stays quota_exhausted.
func TestBillingErrorBodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    *provider.Error
		want FailureType
	}{
		{&provider.Error{Kind: provider.KindHTTP, Status: 402, ErrorType: "billing_error", Message: "There's an issue with your billing or payment information."}, BillingError},
		{&provider.Error{Kind: provider.KindHTTP, Status: 429, ErrorType: "billing_not_active", Code: "billing_not_active",
			Message: "Your account is not active, please check your billing details on our website."}, BillingError},
		{&provider.Error{Kind: provider.KindHTTP, Status: 403, ErrorType: "billing_error", Message: "billing issue"}, BillingError},
		{&provider.Error{Kind: provider.KindSSEError, ErrorType: "billing_error", Streamed: true}, BillingError},
		{&provider.Error{Kind: provider.KindHTTP, Status: 402, Message: "Insufficient credits"}, QuotaExhausted},
		{&provider.Error{Kind: provider.KindHTTP, Status: 429, ErrorType: "insufficient_quota", Message: "You exceeded your current quota, please check your plan and billing details."}, QuotaExhausted},
		{&provider.Error{Kind: provider.KindHTTP, Status: 400, ErrorType: "invalid_request_error", Message: "Your credit balance is too low to access the Anthropic API."}, QuotaExhausted},
	}
	for _, tt := range tests {
		if c := Classify(tt.e); c.Type != tt.want {
			t.Errorf("Classify(%d %s %q) = %s, want %s", tt.e.Status, tt.e.ErrorType, tt.e.Message, c.Type, tt.want)
		}
	}
	if ClassOf(BillingError) != Conditional {
		t.Error("billing_error is not conditional")
	}
}

// TestConditionalOperationRollsBack: a conditional operation (file writes)
// is rolled back before each retry, with the attempt that failed; a
// rollback that fails stops the retries.
func TestConditionalOperationRollsBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rolled []int
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Operation: ClassifyOperation("file_write"),
			Rollback: func(ctx context.Context, a Attempt) error { rolled = append(rolled, a.Number); return nil }}
		got := doFake(t, r, httpErr(503), httpErr(503))
		if got.err != nil || !cmp.Equal(rolled, []int{1, 2}) {
			t.Errorf("err %v, rolled back after attempts %v; want 1, 2", got.err, rolled)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Operation: SafeAfterRollback,
			Rollback: func(context.Context, Attempt) error { return errors.New("checkpoint missing") }}
		got := doFake(t, r, httpErr(503))
		var ex *ExhaustedError
		if !errors.As(got.err, &ex) || ex.Attempts != 1 || ex.Reason != "rollback failed: checkpoint missing" ||
			!strings.Contains(ex.Report.Recovery[0].Text, "rollback") {
			t.Errorf("err = %v", got.err)
		}
		ra := eventsOf[trace.RetryAttempt](t, got.events, trace.TypeRetryAttempt)
		if len(ra) != 1 || ra[0].WillRetry {
			t.Errorf("RetryAttempt = %+v, want willRetry false", ra)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// A safe operation is never rolled back.
		r := &Retrier{Policy: mustPreset(t, "forgeflare"),
			Rollback: func(context.Context, Attempt) error { t.Error("rolled back a safe operation"); return nil }}
		doFake(t, r, httpErr(503))
	})
}
