package retry

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

func TestTraceEventsForgeflare(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Model: "claude-haiku-4-5"}
		e429 := retryAfterErr(429, "5", 5*time.Second)
		e429.Message, e429.RequestID = "rate limited", "req_1"
		e529 := httpErr(529)
		e529.Message = "Overloaded"
		got := doFake(t, r, e429, e529, sseErr("overloaded_error"))
		if got.err != nil {
			t.Fatal(got.err)
		}
		want := []trace.RetryAttempt{
			{Provider: "anthropic", Model: "claude-haiku-4-5", Attempt: 1, MaxAttempts: 5, FailureType: "rate_limit", Status: 429,
				ErrorMessage: "rate limited", WillRetry: true, DelayMs: 5000, DelaySource: "retry-after", RetryAfterMs: ptr(int64(5000)), RequestID: "req_1"},
			{Provider: "anthropic", Model: "claude-haiku-4-5", Attempt: 2, MaxAttempts: 5, FailureType: "overloaded", Status: 529,
				ErrorMessage: "Overloaded", WillRetry: true, DelayMs: 4000, DelaySource: "backoff"},
			{Provider: "anthropic", Model: "claude-haiku-4-5", Attempt: 3, MaxAttempts: 5, FailureType: "overloaded",
				ErrorMessage: "stream error", WillRetry: true, DelayMs: 8000, DelaySource: "backoff"},
		}
		if diff := cmp.Diff(want, eventsOf[trace.RetryAttempt](t, got.events, trace.TypeRetryAttempt)); diff != "" {
			t.Errorf("RetryAttempt mismatch (-want +got):\n%s", diff)
		}
		wantFin := []trace.ProviderRequestFinished{{Provider: "anthropic", Model: "claude-haiku-4-5", DurationMs: 17000, Success: true, Retries: 3}}
		if diff := cmp.Diff(wantFin, eventsOf[trace.ProviderRequestFinished](t, got.events, trace.TypeProviderRequestFinished)); diff != "" {
			t.Errorf("ProviderRequestFinished mismatch (-want +got):\n%s", diff)
		}
		// Seed 000 R4's lines, each attempt's followed by its error message (R3).
		wantLog := "[retry] Using retry-after: 5s\n" +
			"[retry] Attempt 1/4: 429 — waiting 5s — rate limited\n" +
			"[retry] Attempt 2/4: 529 — waiting 4s — Overloaded\n" +
			"[retry] Attempt 3/4: overloaded — waiting 8s — stream error\n" +
			"[retry] Retrying from beginning of response...\n"
		if diff := cmp.Diff(wantLog, got.log); diff != "" {
			t.Errorf("log mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestTraceEventsFailure(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Model: "m"}
		e := httpErr(400)
		e.Message, e.RequestID = "bad request", "req_9"
		got := doFake(t, r, e)
		var ex *ExhaustedError
		if !errors.As(got.err, &ex) || ex.Attempts != 1 || ex.Classification.Type != InvalidRequest || !errors.Is(got.err, e) {
			t.Fatalf("err = %#v", got.err)
		}
		want := []trace.RetryAttempt{{Provider: "anthropic", Model: "m", Attempt: 1, MaxAttempts: 1, FailureType: "invalid_request",
			Status: 400, ErrorMessage: "bad request", WillRetry: false, DelayMs: 0, DelaySource: "none", RequestID: "req_9"}}
		if diff := cmp.Diff(want, eventsOf[trace.RetryAttempt](t, got.events, trace.TypeRetryAttempt)); diff != "" {
			t.Errorf("RetryAttempt mismatch (-want +got):\n%s", diff)
		}
		wantFin := []trace.ProviderRequestFinished{{Provider: "anthropic", Model: "m", Success: false, Retries: 0,
			Error: e.Error(), FailureType: "invalid_request", RequestID: "req_9"}}
		if diff := cmp.Diff(wantFin, eventsOf[trace.ProviderRequestFinished](t, got.events, trace.TypeProviderRequestFinished)); diff != "" {
			t.Errorf("ProviderRequestFinished mismatch (-want +got):\n%s", diff)
		}
		if got.log != "" {
			t.Errorf("log = %q, want nothing for a permanent error", got.log)
		}
	})
}

func TestCancelMidWaitReturnsPromptly(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Trace: trace.NewWriter(&buf, "t"), Rand: fixedRand(0)}
		calls := 0
		start := time.Now()
		go func() {
			time.Sleep(3 * time.Second) // inside the bubble: fake time
			cancel()
		}()
		err := r.Do(ctx, func(context.Context, Attempt) error { calls++; return httpErr(529) })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if el := time.Since(start); el != 3*time.Second {
			t.Errorf("returned after %v, want 3s (cancel during the 4s wait)", el)
		}
		if calls != 2 {
			t.Errorf("calls = %d, want 2", calls)
		}
		fin := eventsOf[trace.ProviderRequestFinished](t, decodeEvents(t, buf.Bytes()), trace.TypeProviderRequestFinished)
		if len(fin) != 1 || fin[0].Success || fin[0].FailureType != "canceled" || fin[0].DurationMs != 3000 {
			t.Errorf("finished = %+v", fin)
		}
	})
}

func TestCanceledAttemptNeverRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		r := &Retrier{Policy: mustPreset(t, "forge-ticket")}
		calls := 0
		err := r.Do(ctx, func(ctx context.Context, _ Attempt) error {
			calls++
			cancel()
			return &provider.Error{Kind: provider.KindCanceled, Err: ctx.Err()}
		})
		if !errors.Is(err, context.Canceled) || calls != 1 {
			t.Fatalf("err = %v, calls = %d", err, calls)
		}
	})
}

func TestAttemptTimeoutIsTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := mustPreset(t, "forgeflare")
		p.AttemptTimeout = 5 * time.Second
		r := &Retrier{Policy: p}
		calls := 0
		got := doFakeCall(t, r, func(ctx context.Context, a Attempt) error {
			calls++
			if calls == 1 {
				<-ctx.Done() // a hung attempt
				return ctx.Err()
			}
			return nil
		})
		if got.err != nil {
			t.Fatal(got.err)
		}
		ra := eventsOf[trace.RetryAttempt](t, got.events, trace.TypeRetryAttempt)
		if len(ra) != 1 || ra[0].FailureType != "timeout" || ra[0].DelayMs != 2000 {
			t.Errorf("RetryAttempt = %+v", ra)
		}
		if got.elapsed != 7*time.Second {
			t.Errorf("elapsed = %v, want 5s timeout + 2s wait", got.elapsed)
		}
	})
}

// doFakeCall is doFake with a custom call.
func doFakeCall(t *testing.T, r *Retrier, call func(context.Context, Attempt) error) run {
	var buf, log bytes.Buffer
	r.Trace, r.Log = trace.NewWriter(&buf, "t"), &log
	start := time.Now()
	err := r.Do(context.Background(), call)
	return run{err: err, events: decodeEvents(t, buf.Bytes()), log: log.String(), elapsed: time.Since(start)}
}

func TestTimeScale(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), TimeScale: 0.1}
		got := doFake(t, r, httpErr(529), httpErr(529))
		if diff := cmp.Diff(secs(0.2, 0.4), got.gaps); diff != "" {
			t.Errorf("slept gaps mismatch (-want +got):\n%s", diff)
		}
		var delays []int64
		for _, ra := range eventsOf[trace.RetryAttempt](t, got.events, trace.TypeRetryAttempt) {
			delays = append(delays, ra.DelayMs)
		}
		if diff := cmp.Diff([]int64{2000, 4000}, delays); diff != "" {
			t.Errorf("recorded delays mismatch (-want +got):\n%s", diff)
		}
		fin := eventsOf[trace.ProviderRequestFinished](t, got.events, trace.TypeProviderRequestFinished)
		if fin[0].DurationMs != 6000 {
			t.Errorf("durationMs = %d, want 6000 (policy time)", fin[0].DurationMs)
		}
	})
}

func TestBudgetStopsRetryStorm(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(10, 0.1)
		calls := 0
		for i := 0; i < 5; i++ {
			r := &Retrier{Policy: mustPreset(t, "forgeflare"), Budget: b, Rand: fixedRand(0)}
			r.Do(context.Background(), func(context.Context, Attempt) error { calls++; return httpErr(503) })
		}
		// Failures 1..5 leave 5 tokens; the 5th failure is not retried (5 ≤ 10/2),
		// and every later request gets exactly one attempt.
		if calls != 9 {
			t.Errorf("calls = %d, want 9 (5 + one each for 4 throttled requests)", calls)
		}
		if b.AllowRetry() {
			t.Error("budget still allows retries")
		}
		for i := 0; i < 60; i++ {
			b.OnSuccess()
		}
		if !b.AllowRetry() {
			t.Error("successes did not refill the budget")
		}
	})
}

func TestIrreversibleNotRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "plandex"), Operation: ClassifyOperation("shell_exec")}
		got := doFake(t, r, httpErr(503))
		if !errors.Is(got.err, ErrIrreversible) || len(got.models) != 1 {
			t.Fatalf("err = %v after %d attempts", got.err, len(got.models))
		}
		if !strings.Contains(got.err.Error(), "operation is irreversible; retry not permitted") {
			t.Errorf("err = %q", got.err)
		}
		p := mustPreset(t, "plandex")
		p.AllowIrreversible = true
		r = &Retrier{Policy: p, Operation: Irreversible}
		if got := doFake(t, r, httpErr(503)); got.err != nil {
			t.Errorf("allowed irreversible retry failed: %v", got.err)
		}
	})
}

func TestMaxElapsed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := mustPreset(t, "forgeflare")
		p.MaxElapsed = 10 * time.Second
		got := doFake(t, &Retrier{Policy: p}, httpErr(529), httpErr(529), httpErr(529))
		// 2s + 4s = 6s; the next 8s wait would end at 14s > 10s.
		if diff := cmp.Diff(secs(2, 4), got.gaps); diff != "" || got.err == nil {
			t.Errorf("gaps mismatch (-want +got):\n%s err=%v", diff, got.err)
		}
	})
}

func TestDisabled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := mustPreset(t, "escalation-epic")
		p.Enabled = false
		got := doFake(t, &Retrier{Policy: p, Ladder: []string{"a", "b"}}, httpErr(503))
		if len(got.models) != 1 || got.err == nil {
			t.Errorf("disabled policy made %d attempts", len(got.models))
		}
	})
}

func TestLadderEscalation(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ladder := []string{"claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-1"}
		r := &Retrier{Policy: mustPreset(t, "escalation-epic"), Provider: "anthropic", Ladder: ladder}
		errs := make([]error, 6)
		for i := range errs {
			errs[i] = httpErr(503)
		}
		got := doFake(t, r, errs...)
		if got.err != nil {
			t.Fatal(got.err)
		}
		wantModels := []string{ladder[0], ladder[0], ladder[0], ladder[0], ladder[1], ladder[1], ladder[1]}
		if diff := cmp.Diff(wantModels, got.models); diff != "" {
			t.Errorf("models mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(secs(1, 2, 4, 0, 1, 2), got.gaps); diff != "" {
			t.Errorf("gaps mismatch (-want +got):\n%s", diff)
		}
		want := []trace.RunEscalated{{From: ladder[0], To: ladder[1], Reason: "auto_after_retries", AfterRetries: ptr(3), CostEstimate: ptr(0.01)}}
		if diff := cmp.Diff(want, eventsOf[trace.RunEscalated](t, got.events, trace.TypeRunEscalated)); diff != "" {
			t.Errorf("RunEscalated mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestLadderContextLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "escalation-epic"), Ladder: []string{"claude-sonnet-4-5", "claude-opus-4-1"}}
		e := &provider.Error{Kind: provider.KindHTTP, Status: 400, Message: "prompt exceeds context_length"}
		got := doFake(t, r, e)
		want := []trace.RunEscalated{{From: "claude-sonnet-4-5", To: "claude-opus-4-1", Reason: "context_limit", CostEstimate: ptr(0.06)}}
		if diff := cmp.Diff(want, eventsOf[trace.RunEscalated](t, got.events, trace.TypeRunEscalated)); diff != "" {
			t.Errorf("RunEscalated mismatch (-want +got):\n%s", diff)
		}
		if got.err != nil || len(got.models) != 2 {
			t.Errorf("err = %v after %d attempts", got.err, len(got.models))
		}
	})
}

// TestPlandexFallbackChain replays seed 001's scenario 3: stream interrupted,
// 503, 503 → ErrorFallback, success on the fallback model.
func TestPlandexFallbackChain(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "plandex"), Provider: "openai", Model: "gpt-4",
			Fallbacks: Fallbacks{Error: "claude-3-haiku"}, Rand: fixedRand(half)}
		drop := &provider.Error{Kind: provider.KindEOF, Streamed: true}
		got := doFake(t, r, drop, httpErr(503), httpErr(503))
		if got.err != nil {
			t.Fatal(got.err)
		}
		if diff := cmp.Diff([]string{"gpt-4", "gpt-4", "gpt-4", "claude-3-haiku"}, got.models); diff != "" {
			t.Errorf("models mismatch (-want +got):\n%s", diff)
		}
		// 1s×1.5¹×0.5, 5s×2²×0.5, then the switch at once.
		if diff := cmp.Diff(secs(0.75, 10, 0), got.gaps); diff != "" {
			t.Errorf("gaps mismatch (-want +got):\n%s", diff)
		}
		esc := eventsOf[trace.RunEscalated](t, got.events, trace.TypeRunEscalated)
		if len(esc) != 1 || esc[0].Reason != "error_fallback" || esc[0].To != "claude-3-haiku" {
			t.Errorf("RunEscalated = %+v", esc)
		}
	})
}

// TestPlandexFallbackFromLadder: a scenario file names models only through
// client.escalation, so seed 001's walkthrough 3 written from DESIGN.md has a
// ladder [gpt-4, claude-3-haiku] and no fallback chain. The ladder's next model
// is then the fallback, taken after MAX_RETRIES_WITHOUT_FALLBACK (3), not after
// the overloaded strategy's 5 attempts.
func TestPlandexFallbackFromLadder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "plandex"), Provider: "openai", Model: "gpt-4",
			Ladder: []string{"gpt-4", "claude-3-haiku"}, Rand: fixedRand(half)}
		drop := &provider.Error{Kind: provider.KindEOF, Streamed: true}
		got := doFake(t, r, drop, httpErr(503), httpErr(503), httpErr(503))
		if diff := cmp.Diff([]string{"gpt-4", "gpt-4", "gpt-4", "claude-3-haiku"}, got.models); diff != "" {
			t.Errorf("models mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(secs(0.75, 10, 0), got.gaps); diff != "" {
			t.Errorf("gaps mismatch (-want +got):\n%s", diff)
		}
		var reasons []string
		for _, e := range eventsOf[trace.RunEscalated](t, got.events, trace.TypeRunEscalated) {
			reasons = append(reasons, e.From+">"+e.To+":"+e.Reason)
		}
		if diff := cmp.Diff([]string{"gpt-4>claude-3-haiku:error_fallback"}, reasons); diff != "" {
			t.Errorf("RunEscalated mismatch (-want +got):\n%s", diff)
		}
		// The fallback gets one attempt; at the top of the ladder it gives up.
		if !errors.Is(got.err, ErrExhausted) {
			t.Errorf("err = %v, want ErrExhausted", got.err)
		}
	})
}

func TestPlandexFallbackCascade(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fb      Fallbacks
		errs    []error
		models  []string
		reasons []string
		success bool
	}{
		{"context_too_long goes to the large-context model",
			Fallbacks{LargeContext: "big", Error: "err"},
			[]error{&provider.Error{Kind: provider.KindHTTP, Status: 413}},
			[]string{"m", "big"}, []string{"context_limit"}, true},
		{"non-retryable with error fallback",
			Fallbacks{Error: "err"},
			[]error{httpErr(401)},
			[]string{"m", "err"}, []string{"error_fallback"}, true},
		{"error fallback fails once, then provider fallback, then give up",
			Fallbacks{Error: "err", Provider: "openrouter", ProviderModel: "x"},
			[]error{httpErr(401), httpErr(401), httpErr(401)},
			[]string{"m", "err", "x"}, []string{"error_fallback", "provider_fallback"}, false},
		{"no fallback configured fails fast",
			Fallbacks{},
			[]error{httpErr(401)},
			[]string{"m"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &Retrier{Policy: mustPreset(t, "plandex"), Provider: "anthropic", Model: "m", Fallbacks: tt.fb}
				got := doFake(t, r, tt.errs...)
				if diff := cmp.Diff(tt.models, got.models); diff != "" {
					t.Errorf("models mismatch (-want +got):\n%s", diff)
				}
				var reasons []string
				for _, e := range eventsOf[trace.RunEscalated](t, got.events, trace.TypeRunEscalated) {
					reasons = append(reasons, e.Reason)
				}
				if diff := cmp.Diff(tt.reasons, reasons); diff != "" {
					t.Errorf("reasons mismatch (-want +got):\n%s", diff)
				}
				if (got.err == nil) != tt.success {
					t.Errorf("err = %v", got.err)
				}
			})
		})
	}
}

// TestPlandexRetryAfterCeilingFallsBack: a Retry-After above the ceiling is
// non-retryable, and a non-retryable failure with a fallback configured
// switches to it.
func TestPlandexRetryAfterCeilingFallsBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "plandex"), Provider: "anthropic", Model: "m",
			Fallbacks: Fallbacks{Provider: "openrouter", ProviderModel: "anthropic/m"}}
		got := doFake(t, r, retryAfterErr(429, "30", 30*time.Second))
		if got.err != nil {
			t.Fatal(got.err)
		}
		esc := eventsOf[trace.RunEscalated](t, got.events, trace.TypeRunEscalated)
		want := []trace.RunEscalated{{From: "anthropic/m", To: "openrouter/anthropic/m", Reason: "provider_fallback"}}
		if diff := cmp.Diff(want, esc); diff != "" {
			t.Errorf("RunEscalated mismatch (-want +got):\n%s", diff)
		}
		ra := eventsOf[trace.RetryAttempt](t, got.events, trace.TypeRetryAttempt)
		if len(ra) != 1 || !ra[0].WillRetry || ra[0].DelaySource != "none" || *ra[0].RetryAfterMs != 30000 {
			t.Errorf("RetryAttempt = %+v", ra)
		}
	})
}

func TestBudgetTokens(t *testing.T) {
	t.Parallel()
	b := NewBudget(4, 0.5)
	b.OnFailure()
	b.OnFailure()
	if b.Tokens() != 2 || b.AllowRetry() {
		t.Errorf("tokens = %v, allow = %v", b.Tokens(), b.AllowRetry())
	}
	b.OnSuccess()
	if b.Tokens() != 2.5 || !b.AllowRetry() {
		t.Errorf("tokens = %v, allow = %v", b.Tokens(), b.AllowRetry())
	}
	var nb *Budget
	nb.OnFailure()
	if !nb.AllowRetry() {
		t.Error("nil budget refused")
	}
}

func TestExhaustedError(t *testing.T) {
	t.Parallel()
	last := httpErr(503)
	var err error = &ExhaustedError{Attempts: 3, Last: last, Classification: Classification{Type: Overloaded}, Reason: "attempts exhausted"}
	if !errors.Is(err, ErrExhausted) || errors.Is(err, ErrIrreversible) || !errors.Is(err, last) {
		t.Errorf("Is/Unwrap wrong for %v", err)
	}
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Status != 503 {
		t.Error("errors.As does not reach the provider error")
	}
	want := "giving up after 3 attempt(s) (overloaded, attempts exhausted): anthropic: HTTP 503: Service Unavailable"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestSeconds(t *testing.T) {
	t.Parallel()
	got := []string{seconds(0), seconds(2 * time.Second), seconds(1500 * time.Millisecond), seconds(13200 * time.Millisecond), seconds(437500 * time.Microsecond)}
	if diff := cmp.Diff([]string{"0", "2", "1.5", "13.2", "0.437"}, got); diff != "" {
		t.Errorf("seconds mismatch (-want +got):\n%s", diff)
	}
}

func TestNilPolicyOneAttempt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		got := doFake(t, &Retrier{}, httpErr(503))
		if len(got.models) != 1 || !errors.Is(got.err, ErrExhausted) {
			t.Errorf("attempts = %d, err = %v", len(got.models), got.err)
		}
	})
}

// Seed 000 R1: a DNS resolution failure for a bad URL or a TLS certificate
// error is permanent for forgeflare (regression: it was classified as a
// connection_error and retried four times). The SDKs retry every transport
// error, these included.
func TestPermanentNetworkErrors(t *testing.T) {
	t.Parallel()
	dns := &provider.Error{Kind: provider.KindNetwork, Provider: "anthropic",
		Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "api.example.invalid", IsNotFound: true}}}
	tests := []struct {
		preset   string
		attempts int
	}{
		{"forgeflare", 1},
		{"orchestrator", 1},
		{"escalation-epic", 1},
		{"anthropic-sdk", 3},
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				errs := make([]error, tt.attempts+1)
				for i := range errs {
					errs[i] = dns
				}
				got := doFake(t, &Retrier{Policy: mustPreset(t, tt.preset)}, errs...)
				if got.err == nil || len(got.models) != tt.attempts {
					t.Errorf("%d attempts, err %v; want %d attempts and an error", len(got.models), got.err, tt.attempts)
				}
			})
		})
	}
}

// TestOnSleep: each wait is reported as slept, in real time (TimeScale
// applied), and a retry at once as a wait of 0, so that a harness can tell
// the client's own lateness from a wrong wait.
func TestOnSleep(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var got []Sleep
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Model: "m", TimeScale: 0.5,
			OnSleep: func(s Sleep) { got = append(got, s) }}
		start := time.Now()
		if res := doFake(t, r, httpErr(529), retryAfterErr(429, "0", 0), httpErr(503)); res.err != nil {
			t.Fatal(res.err)
		}
		// 529: 2s × 0.5; retry-after 0: at once; 503 (third failure): 8s × 0.5.
		want := []Sleep{
			{Attempt: 1, Planned: time.Second, Start: start, End: start.Add(time.Second)},
			{Attempt: 2, Planned: 0, Start: start.Add(time.Second), End: start.Add(time.Second)},
			{Attempt: 3, Planned: 4 * time.Second, Start: start.Add(time.Second), End: start.Add(5 * time.Second)},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("OnSleep mismatch (-want +got):\n%s", diff)
		}
	})
}
