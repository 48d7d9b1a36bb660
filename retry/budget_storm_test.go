package retry

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrylab/retrylab/retry/provider"
)

// A retry storm: stormClients clients, each with its own Retrier, share one
// Budget (or none) and send their requests to a provider that fails every
// attempt with a 529. The tests run under synctest's fake clock, so the
// policies' real waits (seconds) cost nothing and the counts do not depend
// on the machine; BenchmarkRetryStorm does the same over real HTTP in real
// time.

const (
	stormClients  = 100
	stormRequests = 10 // logical requests per client, one after another
	// stormLatency is how long one fake attempt takes.
	stormLatency = 50 * time.Millisecond
	// stormStagger starts client i at i × stormStagger, so that no two
	// clients fail at the same fake instant while the budget drains, and
	// the number of retries it lets through is exact.
	stormStagger = time.Millisecond
)

// stormCounts are what the fake provider saw. An attempt is counted as
// drained when the budget refused retries at the moment it started.
type stormCounts struct {
	firsts, attempts               atomic.Int64
	drainedFirsts, drainedAttempts atomic.Int64
	successes                      atomic.Int64
}

func (c *stormCounts) retries() int64 { return c.attempts.Load() - c.firsts.Load() }

// amplification is attempts / first attempts.
func amplification(attempts, firsts int64) float64 {
	if firsts == 0 {
		return 0
	}
	return float64(attempts) / float64(firsts)
}

// overloaded is the 529 the fake provider answers while it fails.
func overloaded() error {
	return &provider.Error{Kind: provider.KindHTTP, Provider: "anthropic", Status: 529,
		ErrorType: "overloaded_error", Message: "Overloaded"}
}

// storm runs stormClients clients of requests logical requests each, inside
// the caller's synctest bubble, under policy p and the shared budget b (nil:
// none). Every attempt takes stormLatency and fails while failing() is true.
// It returns when every client is done.
func storm(p *Policy, b *Budget, requests int, failing func() bool) *stormCounts {
	c := &stormCounts{}
	var wg sync.WaitGroup
	for i := range stormClients {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * stormStagger)
			r := &Retrier{Policy: p, Provider: "anthropic", Model: "claude-haiku-4-5", Budget: b,
				Rand: rand.New(rand.NewPCG(uint64(i), 1))}
			for range requests {
				_ = r.Do(context.Background(), func(ctx context.Context, a Attempt) error {
					drained := b != nil && !b.AllowRetry()
					c.attempts.Add(1)
					if drained {
						c.drainedAttempts.Add(1)
					}
					if a.Number == 1 {
						c.firsts.Add(1)
						if drained {
							c.drainedFirsts.Add(1)
						}
					}
					time.Sleep(stormLatency)
					if failing() {
						return overloaded()
					}
					c.successes.Add(1)
					return nil
				})
			}
		})
	}
	wg.Wait()
	return c
}

func always() bool { return true }

// TestBudgetHoldsRetryStorm: 100 clients sharing a gRPC-default budget
// (10 tokens, ratio 0.1) against a provider failing 100 % make at most 10 %
// more attempts than first attempts once the budget is drained, and exactly
// maxTokens/2 − 1 = 4 retries in all (the failures that left more than 5
// tokens); without a budget every request makes the policy's max attempts.
func TestBudgetHoldsRetryStorm(t *testing.T) {
	t.Parallel()
	for _, preset := range []string{"forgeflare", "plandex", "orchestrator", "anthropic-sdk", "openai-python"} {
		t.Run(preset, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := mustPreset(t, preset)
				maxAttempts := p.Strategy(Overloaded).MaxAttempts

				none := storm(p, nil, stormRequests, always)
				if got, want := none.firsts.Load(), int64(stormClients*stormRequests); got != want {
					t.Fatalf("no budget: first attempts = %d, want %d", got, want)
				}
				ampNone := amplification(none.attempts.Load(), none.firsts.Load())
				if ampNone != float64(maxAttempts) {
					t.Errorf("no budget: amplification = %.3f (%d attempts / %d first), want the policy's max attempts %d",
						ampNone, none.attempts.Load(), none.firsts.Load(), maxAttempts)
				}

				b := NewBudget(10, 0.1)
				with := storm(p, b, stormRequests, always)
				if got := with.retries(); got != 4 {
					t.Errorf("budget: %d retries in all, want 4 (failures 1-4 leave 9..6 tokens > 5; the 5th leaves 5)", got)
				}
				if with.drainedFirsts.Load() < stormClients*stormRequests*9/10 {
					t.Fatalf("budget: only %d of %d first attempts started with the budget drained", with.drainedFirsts.Load(), with.firsts.Load())
				}
				ampDrained := amplification(with.drainedAttempts.Load(), with.drainedFirsts.Load())
				if ampDrained > 1.10 {
					t.Errorf("budget: amplification once drained = %.3f (%d attempts / %d first), want ≤ 1.10",
						ampDrained, with.drainedAttempts.Load(), with.drainedFirsts.Load())
				}
				ampWith := amplification(with.attempts.Load(), with.firsts.Load())
				if ampWith > 1.10 {
					t.Errorf("budget: amplification = %.3f, want ≤ 1.10", ampWith)
				}
				t.Logf("amplification: %.3f without budget (%d/%d), %.4f with (%d/%d), %.4f once drained (%d/%d)",
					ampNone, none.attempts.Load(), none.firsts.Load(), ampWith, with.attempts.Load(), with.firsts.Load(),
					ampDrained, with.drainedAttempts.Load(), with.drainedFirsts.Load())
			})
		})
	}
}

// TestBudgetRecoversAfterStorm: once the failures stop, successes refill
// the drained budget (0.1 token each; 51 lift it above half of 10), retries
// are allowed again, and a second storm gets its 4 retries, no more.
func TestBudgetRecoversAfterStorm(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := mustPreset(t, "forgeflare")
		b := NewBudget(10, 0.1)
		var failing atomic.Bool
		failing.Store(true)

		first := storm(p, b, stormRequests, failing.Load)
		if b.AllowRetry() || b.Tokens() != 0 {
			t.Fatalf("after the storm: tokens = %v, allow = %v; want a drained budget", b.Tokens(), b.AllowRetry())
		}
		if first.retries() != 4 {
			t.Errorf("first storm: %d retries, want 4", first.retries())
		}

		failing.Store(false)
		calm := storm(p, b, 1, failing.Load)
		if got := calm.successes.Load(); got != stormClients {
			t.Fatalf("calm: %d successes, want %d", got, stormClients)
		}
		if calm.retries() != 0 {
			t.Errorf("calm: %d retries of successful requests", calm.retries())
		}
		if !b.AllowRetry() || b.Tokens() < 9.99 {
			t.Fatalf("after %d successes: tokens = %v, allow = %v; want about 10 and retries allowed", stormClients, b.Tokens(), b.AllowRetry())
		}

		// One transient failure is retried again.
		calls := 0
		err := (&Retrier{Policy: p, Budget: b}).Do(context.Background(), func(context.Context, Attempt) error {
			calls++
			if calls == 1 {
				return overloaded()
			}
			return nil
		})
		if err != nil || calls != 2 {
			t.Fatalf("after recovery: %d attempts, err %v; want a retry that succeeds", calls, err)
		}

		failing.Store(true)
		second := storm(p, b, stormRequests, failing.Load)
		if second.retries() != 4 {
			t.Errorf("second storm: %d retries, want 4 (the refilled budget drains as the first did)", second.retries())
		}
	})
}

// TestBudgetRefillCount pins how many successes lift a drained gRPC-default
// budget back above half: 51 (5.1 tokens > 5), not 50, even though 0.1 is
// not exact in binary (50 × 0.1 sums to just under 5).
func TestBudgetRefillCount(t *testing.T) {
	t.Parallel()
	b := NewBudget(10, 0.1)
	for range 10 {
		b.OnFailure()
	}
	n := 0
	for !b.AllowRetry() {
		b.OnSuccess()
		n++
	}
	if n != 51 {
		t.Errorf("retries allowed again after %d successes, want 51", n)
	}
}

// BenchmarkRetryStorm: 100 concurrent clients, each a Retrier with
// forgeflare's policy (5 attempts, 2s·2ⁿ waits scaled by 1/1000 to 2, 4, 8,
// 16 ms) over real HTTP to a server that answers every request 529. It
// reports attempts per first attempt, overall and over the attempts that
// started with the budget drained. b.N is the number of logical requests;
// run with a fixed count, e.g.
//
//	go test ./retry -run '^$' -bench RetryStorm -benchtime 5000x -count 5
func BenchmarkRetryStorm(b *testing.B) {
	for _, bc := range []struct {
		name   string
		budget func() *Budget
	}{
		{"budget=none", func() *Budget { return nil }},
		{"budget=10,0.1", func() *Budget { return NewBudget(10, 0.1) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var served atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				served.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("request-id", fmt.Sprintf("req_storm%d", served.Load()))
				w.WriteHeader(529)
				_, _ = io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`+"\n")
			}))
			defer srv.Close()
			// A shared pool, as one process's clients would have; a new
			// connection per attempt would run the loopback out of ports.
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: stormClients, DisableCompression: true}}
			defer hc.CloseIdleConnections()
			client := provider.NewAnthropic(provider.Config{BaseURL: srv.URL, APIKey: "sk-ant-storm", HTTPClient: hc})
			p := mustPreset(b, "forgeflare")
			budget := bc.budget()
			req := provider.Request{Model: "claude-haiku-4-5", Messages: []provider.Message{{Role: "user", Content: "hi"}}}

			var c stormCounts
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for i := range stormClients {
				wg.Go(func() {
					r := &Retrier{Policy: p, Provider: "anthropic", Model: req.Model, Budget: budget,
						Rand: rand.New(rand.NewPCG(uint64(i), 2)), TimeScale: 0.001}
					for next.Add(1) <= int64(b.N) {
						_ = r.Do(context.Background(), func(ctx context.Context, a Attempt) error {
							drained := budget != nil && !budget.AllowRetry()
							c.attempts.Add(1)
							if drained {
								c.drainedAttempts.Add(1)
							}
							if a.Number == 1 {
								c.firsts.Add(1)
								if drained {
									c.drainedFirsts.Add(1)
								}
							}
							_, err := client.Stream(ctx, req)
							return err
						})
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if got := served.Load(); got != c.attempts.Load() {
				b.Fatalf("server saw %d requests, clients made %d attempts", got, c.attempts.Load())
			}
			b.ReportMetric(amplification(c.attempts.Load(), c.firsts.Load()), "attempts/first")
			b.ReportMetric(float64(c.retries()), "retries")
			if budget != nil {
				b.ReportMetric(amplification(c.drainedAttempts.Load(), c.drainedFirsts.Load()), "drained-attempts/first")
			}
			b.ReportMetric(float64(c.attempts.Load())/b.Elapsed().Seconds(), "attempts/s")
		})
	}
}
