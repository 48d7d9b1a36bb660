package retry

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestJitterStatistics draws many waits per jitter kind and checks that each
// lies in the Envelope and that their mean is near the expected one.
func TestJitterStatistics(t *testing.T) {
	t.Parallel()
	base := Strategy{Retry: true, MaxAttempts: 10, InitialDelay: time.Second, MaxDelay: 30 * time.Second, Multiplier: 2, Kind: Exponential}
	tests := []struct {
		name   string
		jitter Jitter
		frac   float64
		k      int
		mean   float64 // expected mean as a fraction of the nominal wait
	}{
		{"none", NoJitter, 0, 2, 1},
		{"full", FullJitter, 0, 2, 0.5},
		{"equal", EqualJitter, 0, 2, 0.75},
		{"proportional ±10%", ProportionalJitter, 0.1, 2, 1},
		{"proportional ±50%", ProportionalJitter, 0.5, 3, 1},
		{"sdk −25%", SDKJitter, 0, 2, 0.875},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			s.Jitter, s.JitterFraction = tt.jitter, tt.frac
			p := &Policy{Enabled: true, Default: s}
			lo, hi, ok := p.Envelope(Unknown, tt.k+1, 0, false)
			if !ok {
				t.Fatal("Envelope not ok")
			}
			r := rand.New(rand.NewPCG(1, 2))
			d := p.nominal(s, tt.k)
			const n = 20000
			var sum float64
			for i := 0; i < n; i++ {
				w := jitter(s, d, 0, r)
				if w < lo || w > hi {
					t.Fatalf("draw %v outside [%v, %v]", w, lo, hi)
				}
				sum += float64(w)
			}
			mean := sum / n / float64(d)
			if mean < tt.mean-0.02 || mean > tt.mean+0.02 {
				t.Errorf("mean = %.3f × nominal, want %.3f ± 0.02", mean, tt.mean)
			}
		})
	}
}

func TestDecorrelatedJitter(t *testing.T) {
	t.Parallel()
	s := Strategy{Retry: true, MaxAttempts: 10, InitialDelay: time.Second, MaxDelay: 20 * time.Second, Jitter: DecorrelatedJitter}
	p := &Policy{Enabled: true, Default: s}
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 2000; trial++ {
		var prev time.Duration
		for k := 0; k < 6; k++ {
			w := jitter(s, p.nominal(s, k), prev, r)
			lo, hi, _ := p.Envelope(Unknown, k+1, 0, false)
			if w < lo || w > hi {
				t.Fatalf("retry %d: %v outside [%v, %v]", k, w, lo, hi)
			}
			prev = w
		}
	}
}

// TestJitterBounds stubs the random source at 0 and just below 1.
func TestJitterBounds(t *testing.T) {
	t.Parallel()
	d := 4 * time.Second
	s := func(j Jitter, f float64) Strategy {
		return Strategy{InitialDelay: time.Second, MaxDelay: 10 * time.Second, Jitter: j, JitterFraction: f}
	}
	tests := []struct {
		name   string
		s      Strategy
		lo, hi time.Duration
	}{
		{"none", s(NoJitter, 0), d, d},
		{"full", s(FullJitter, 0), 0, d},
		{"equal", s(EqualJitter, 0), 2 * time.Second, d},
		{"proportional", s(ProportionalJitter, 0.1), 3600 * time.Millisecond, 4400 * time.Millisecond},
		{"sdk", s(SDKJitter, 0), 3 * time.Second, d},
		{"decorrelated (prev 2s)", s(DecorrelatedJitter, 0), time.Second, 6 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo := jitter(tt.s, d, 2*time.Second, fixedRand(0))
			hi := jitter(tt.s, d, 2*time.Second, fixedRand(^uint64(0)))
			// Just below 1 loses at most a nanosecond to rounding.
			if lo != tt.lo && tt.s.Jitter != SDKJitter {
				t.Errorf("at 0: %v, want %v", lo, tt.lo)
			}
			if tt.s.Jitter == SDKJitter && lo != tt.hi {
				t.Errorf("sdk at 0: %v, want %v", lo, tt.hi)
			}
			edge := tt.hi
			if tt.s.Jitter == SDKJitter {
				edge = tt.lo
			}
			if diff := hi - edge; diff < -time.Microsecond || diff > time.Microsecond {
				t.Errorf("at ~1: %v, want %v", hi, edge)
			}
		})
	}
}

func TestEnvelope(t *testing.T) {
	t.Parallel()
	type env struct {
		Lo, Hi time.Duration
		OK     bool
	}
	tests := []struct {
		name    string
		preset  string
		ft      FailureType
		attempt int
		ra      time.Duration
		hasRA   bool
		want    env
	}{
		{"forgeflare first wait", "forgeflare", Overloaded, 1, 0, false, env{2 * time.Second, 2 * time.Second, true}},
		{"forgeflare fourth wait", "forgeflare", Overloaded, 4, 0, false, env{16 * time.Second, 16 * time.Second, true}},
		{"forgeflare after the fifth attempt", "forgeflare", Overloaded, 5, 0, false, env{}},
		{"forgeflare retry-after", "forgeflare", RateLimit, 1, 7 * time.Second, true, env{7 * time.Second, 7 * time.Second, true}},
		{"forgeflare permanent", "forgeflare", InvalidRequest, 1, 0, false, env{}},
		{"plandex rate_limit full jitter", "plandex", RateLimit, 1, 0, false, env{0, 2 * time.Second, true}},
		{"plandex overloaded capped", "plandex", Overloaded, 4, 0, false, env{0, 80 * time.Second, true}},
		{"plandex retry-after padded", "plandex", RateLimit, 1, 10 * time.Second, true, env{11 * time.Second, 11 * time.Second, true}},
		{"plandex retry-after over ceiling", "plandex", RateLimit, 1, 12 * time.Second, true, env{}},
		{"orchestrator ±10% at cap", "orchestrator", ServerError, 3, 0, false, env{3600 * time.Millisecond, 4400 * time.Millisecond, true}},
		{"orchestrator quota 429 by status", "orchestrator", QuotaExhausted, 1, 0, false, env{900 * time.Millisecond, 1100 * time.Millisecond, true}},
		{"epic 503 by status", "escalation-epic", Overloaded, 2, 0, false, env{2 * time.Second, 2 * time.Second, true}},
		{"sdk second wait", "anthropic-sdk", RateLimit, 2, 0, false, env{750 * time.Millisecond, time.Second, true}},
		{"sdk retry-after 90s unusable", "openai-sdk", RateLimit, 1, 90 * time.Second, true, env{375 * time.Millisecond, 500 * time.Millisecond, true}},
		{"canceled never", "forge-ticket", Canceled, 1, 0, false, env{}},
		{"claude-code first wait plus up to 25%", "claude-code", Overloaded, 1, 0, false, env{500 * time.Millisecond, 625 * time.Millisecond, true}},
		{"claude-code capped at 32s", "claude-code", Overloaded, 8, 0, false, env{32 * time.Second, 40 * time.Second, true}},
		{"claude-code gives up after 11 attempts", "claude-code", ServerError, 11, 0, false, env{}},
		{"claude-code retry-after plus up to 25%", "claude-code", RateLimit, 1, 3 * time.Second, true, env{3 * time.Second, 3750 * time.Millisecond, true}},
		{"claude-code retry-after under the backoff: the backoff", "claude-code", RateLimit, 4, time.Second, true, env{4 * time.Second, 5 * time.Second, true}},
		{"claude-code retry-after 0: the backoff", "claude-code", RateLimit, 3, 0, true, env{2 * time.Second, 2500 * time.Millisecond, true}},
		{"claude-code 401 retried", "claude-code", AuthInvalid, 1, 0, false, env{500 * time.Millisecond, 625 * time.Millisecond, true}},
		{"claude-code 400 not retried", "claude-code", InvalidRequest, 1, 0, false, env{}},
		{"codex-cli third wait ±10%", "codex-cli", ServerError, 3, 0, false, env{720 * time.Millisecond, 880 * time.Millisecond, true}},
		{"codex-cli gives up after 5 attempts", "codex-cli", Overloaded, 5, 0, false, env{}},
		{"codex-cli 429 without retry-after not retried", "codex-cli", RateLimit, 1, 0, false, env{}},
		{"codex-cli 429 retry-after", "codex-cli", RateLimit, 1, 2 * time.Second, true, env{2 * time.Second, 2 * time.Second, true}},
		{"vercel-ai-sdk second wait", "vercel-ai-sdk", ServerError, 2, 0, false, env{4 * time.Second, 4 * time.Second, true}},
		{"vercel-ai-sdk gives up after 3 attempts", "vercel-ai-sdk", ServerError, 3, 0, false, env{}},
		{"langchain-js randomized 1-2s", "langchain-js", ServerError, 1, 0, false, env{time.Second, 2 * time.Second, true}},
		{"langchain-js 429 without retry-after thrown", "langchain-js", RateLimit, 1, 0, false, env{}},
		{"langchain-js 429 retry-after above the backoff", "langchain-js", RateLimit, 1, 5 * time.Second, true, env{5 * time.Second, 5 * time.Second, true}},
		{"langchain-js 429 retry-after over 60s thrown", "langchain-js", RateLimit, 1, 61 * time.Second, true, env{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi, ok := mustPreset(t, tt.preset).Envelope(tt.ft, tt.attempt, tt.ra, tt.hasRA)
			if diff := cmp.Diff(tt.want, env{lo, hi, ok}); diff != "" {
				t.Errorf("Envelope mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSchedule(t *testing.T) {
	t.Parallel()
	got := mustPreset(t, "forgeflare").Schedule(Overloaded)
	if diff := cmp.Diff(secs(2, 4, 8, 16), got); diff != "" {
		t.Errorf("Schedule mismatch (-want +got):\n%s", diff)
	}
	got = mustPreset(t, "escalation-epic").Schedule(RateLimit)
	if diff := cmp.Diff(secs(1, 2, 4), got); diff != "" {
		t.Errorf("Schedule mismatch (-want +got):\n%s", diff)
	}
}
