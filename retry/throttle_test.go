package retry

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrylab/retrylab/trace"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestThrottleProbability checks the SRE book's formula over the window:
// max(0, (requests − K·accepts) / (requests + 1)), and that counts older
// than the window no longer count.
func TestThrottleProbability(t *testing.T) {
	t.Parallel()
	type rec struct {
		after    time.Duration // moved before recording
		accepted bool
		n        int
	}
	for _, tc := range []struct {
		name string
		k    float64
		recs []rec
		want float64
	}{
		{"empty", 2, nil, 0},
		{"all accepted", 2, []rec{{0, true, 10}}, 0},
		{"none accepted", 2, []rec{{0, false, 10}}, 10.0 / 11},
		{"a third accepted, K=2", 2, []rec{{0, true, 3}, {0, false, 7}}, 4.0 / 11},
		{"half accepted, K=2: nothing rejected", 2, []rec{{0, true, 5}, {0, false, 5}}, 0},
		{"half accepted, K=1.1", 1.1, []rec{{0, true, 5}, {0, false, 5}}, (10 - 5.5) / 11},
		{"the window slides past old refusals", 2, []rec{{0, false, 10}, {2*time.Minute + time.Second, false, 1}}, 1.0 / 2},
		{"within the window they count", 2, []rec{{0, false, 10}, {119 * time.Second, false, 1}}, 11.0 / 12},
		{"as many accepts as refusals: back to 0", 2, []rec{{0, false, 20}, {time.Second, true, 20}}, 0},
		{"fewer accepts: still rejecting", 2, []rec{{0, false, 20}, {time.Second, true, 10}}, 10.0 / 31},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)}
			th := NewThrottle(tc.k, 2*time.Minute, clk.now)
			for _, r := range tc.recs {
				clk.add(r.after)
				for range r.n {
					th.Record(r.accepted)
				}
			}
			if got := th.Probability(); got < tc.want-1e-12 || got > tc.want+1e-12 {
				t.Errorf("Probability = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestThrottleAllow: a healthy throttle allows without drawing; a refusing
// one rejects when the draw is below the probability, and counts the
// rejected request (so the probability grows while the backend stays down);
// a nil Throttle allows everything.
func TestThrottleAllow(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)}
	th := NewThrottle(2, time.Minute, clk.now)
	th.Record(true)
	if !th.Allow(func() float64 { t.Fatal("drew with a probability of 0"); return 0 }) {
		t.Fatal("healthy throttle rejected")
	}
	for range 9 {
		th.Record(false)
	}
	p := th.Probability() // (10 - 2) / 11
	if th.Allow(func() float64 { return p - 0.01 }) {
		t.Errorf("allowed with a draw below p = %v", p)
	}
	if req, _ := th.Counts(); req != 11 {
		t.Errorf("requests = %d after a local rejection, want 11", req)
	}
	if !th.Allow(func() float64 { return th.probabilityLocked() + 0.01 }) {
		t.Error("rejected with a draw above p")
	}
	var none *Throttle
	if !none.Allow(nil) || none.Probability() != 0 {
		t.Error("a nil Throttle throttles")
	}
	none.Record(false)
}

// probabilityLocked is Probability for a draw function called while the
// lock is held (Allow holds it).
func (t *Throttle) probabilityLocked() float64 { return t.probability() }

// TestThrottleHoldsStorm: clients each with their own Throttle (K = 2, 2
// minutes) against a provider that answers 529 to everything for a long
// storm make about one attempt per request — first attempts go out, the
// retries are held back locally — where the same clients without it make
// the policy's maximum; once the storm ends they are admitted again and
// their retries flow.
func TestThrottleHoldsStorm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		throttle bool
		maxAmp   float64
		minAmp   float64
	}{
		{"no throttle", false, 5, 5},
		{"adaptive throttling", true, 1.1, 1.0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := mustPreset(t, "forgeflare") // 5 attempts on overloaded
				var failing atomic.Bool
				failing.Store(true)
				var attempts, requests, throttled atomic.Int64
				var wg sync.WaitGroup
				const clients, perClient = 20, 60
				for i := range clients {
					wg.Go(func() {
						time.Sleep(time.Duration(i) * time.Millisecond)
						r := &Retrier{Policy: p, Provider: "anthropic", Model: "claude-haiku-4-5", Rand: rand.New(rand.NewPCG(uint64(i), 2))}
						if tc.throttle {
							r.Throttle = NewThrottle(DefaultThrottleK, DefaultThrottleWindow, nil)
						}
						for range perClient {
							requests.Add(1)
							err := r.Do(context.Background(), func(ctx context.Context, a Attempt) error {
								attempts.Add(1)
								time.Sleep(stormLatency)
								if failing.Load() {
									return overloaded()
								}
								return nil
							})
							var ex *ExhaustedError
							if errors.As(err, &ex) && ex.Reason == ReasonThrottled {
								throttled.Add(1)
							}
						}
					})
				}
				wg.Wait()
				amp := float64(attempts.Load()) / float64(requests.Load())
				if amp > tc.maxAmp || amp < tc.minAmp {
					t.Errorf("amplification %.3f (%d attempts / %d requests), want in [%v, %v]", amp, attempts.Load(), requests.Load(), tc.minAmp, tc.maxAmp)
				}
				if tc.throttle && throttled.Load() < clients*perClient*9/10 {
					t.Errorf("%d requests gave up throttled, want most of %d", throttled.Load(), clients*perClient)
				}
				t.Logf("%s: amplification %.3f (%d/%d), %d throttled", tc.name, amp, attempts.Load(), requests.Load(), throttled.Load())
			})
		})
	}
	// Recovery: after the storm, successes are accepts; a throttle whose
	// window holds twice as many accepts as refusals rejects nothing.
	synctest.Test(t, func(t *testing.T) {
		th := NewThrottle(DefaultThrottleK, DefaultThrottleWindow, nil)
		for range 100 {
			th.Record(false)
		}
		if th.Probability() < 0.9 {
			t.Fatalf("after 100 refusals p = %v", th.Probability())
		}
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Throttle: th, Rand: rand.New(rand.NewPCG(1, 1))}
		for range 100 {
			if err := r.Do(context.Background(), func(context.Context, Attempt) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if p := th.Probability(); p != 0 {
			t.Errorf("after 100 successes p = %v, want 0", p)
		}
		// A later failure is retried again.
		n := 0
		_ = r.Do(context.Background(), func(context.Context, Attempt) error {
			n++
			if n == 1 {
				return overloaded()
			}
			return nil
		})
		if n != 2 {
			t.Errorf("after recovery a 529 was tried %d times, want 2 (retried)", n)
		}
	})
}

// TestPolicyLimiters: a Retrier without a Budget or Throttle of its own
// makes them once from its policy's budget and adaptiveThrottling; its own
// fields win; a policy without them gives none.
func TestPolicyLimiters(t *testing.T) {
	t.Parallel()
	p := mustPreset(t, "forgeflare").Clone()
	if b, th := (&Retrier{Policy: p}).limiters(); b != nil || th != nil {
		t.Fatalf("a policy without budget or adaptiveThrottling gave %v, %v", b, th)
	}
	p.Budget = BudgetConfig{MaxTokens: 10, TokenRatio: 0.1}
	p.Throttling = ThrottleConfig{K: 2, Window: time.Minute}
	r := &Retrier{Policy: p, TimeScale: 0.5}
	b, th := r.limiters()
	if b == nil || th == nil || b.Tokens() != 10 {
		t.Fatalf("limiters = %v, %v", b, th)
	}
	if th.slot != 30*time.Second/throttleSlots {
		t.Errorf("slot = %v, want the 1m window at time scale 0.5 cut in %d", th.slot, throttleSlots)
	}
	if b2, th2 := r.limiters(); b2 != b || th2 != th {
		t.Error("limiters made twice")
	}
	shared := NewBudget(3, 1)
	if b, _ := (&Retrier{Policy: p, Budget: shared}).limiters(); b != shared {
		t.Error("the Retrier's own Budget lost to the policy's")
	}
}

// BenchmarkThrottle is one Allow and one Record, the throttle's cost per
// attempt, from many goroutines sharing it.
func BenchmarkThrottle(b *testing.B) {
	th := NewThrottle(DefaultThrottleK, DefaultThrottleWindow, nil)
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(1, 2))
		i := 0
		for pb.Next() {
			if th.Allow(rng.Float64) {
				th.Record(i%3 == 0)
			}
			i++
		}
	})
}

// TestThrottledTrace: a retry the throttle holds back is not sent; the
// trace says so with what it has: the failed attempt's RetryAttempt with
// willRetry false, and the ErrorReport's reason "throttled locally".
func TestThrottledTrace(t *testing.T) {
	t.Parallel()
	th := NewThrottle(DefaultThrottleK, DefaultThrottleWindow, nil)
	for range 100_000 {
		th.Record(false)
	}
	var buf bytes.Buffer
	r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Model: "claude-haiku-4-5", Throttle: th,
		Trace: trace.NewWriter(&buf, "r-test"), Rand: rand.New(rand.NewPCG(1, 1))}
	calls := 0
	err := r.Do(context.Background(), func(context.Context, Attempt) error { calls++; return overloaded() })
	var ex *ExhaustedError
	if !errors.As(err, &ex) || ex.Reason != ReasonThrottled || calls != 1 {
		t.Fatalf("Do = %v after %d calls, want ExhaustedError %q after 1", err, calls, ReasonThrottled)
	}
	out := buf.String()
	for _, want := range []string{`"willRetry":false`, `"reason":"throttled locally"`} {
		if !strings.Contains(out, want) {
			t.Errorf("trace lacks %s:\n%s", want, out)
		}
	}
}
