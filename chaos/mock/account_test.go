package mock

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// TestBucketRefill checks the continuous refill: a minute's worth per
// minute, in proportion in between, never above the capacity, and the wait
// for what a bucket lacks.
func TestBucketRefill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		perMinute int
		take      float64       // taken at 0
		at        time.Duration // refilled to
		want      float64       // tokens then
		wait      time.Duration // until it holds 1
	}{
		{"full at start", 60, 0, 0, 60, 0},
		{"empty waits a token's time", 60, 60, 0, 0, time.Second},
		{"a second refills one of 60/min", 60, 60, time.Second, 1, 0},
		{"half a second half a token", 60, 60, 500 * time.Millisecond, 0.5, 500 * time.Millisecond},
		{"never above capacity", 60, 60, time.Hour, 60, 0},
		{"a debt is waited out", 60, 90, 30 * time.Second, 0, time.Second},
		{"3 a minute: 20 s a token", 3, 3, 0, 0, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBucket(wire.BucketRequests, tc.perMinute)
			b.tokens -= tc.take
			b.refill(tc.at)
			if d := b.tokens - tc.want; d > 1e-9 || d < -1e-9 {
				t.Errorf("tokens at %v = %v, want %v", tc.at, b.tokens, tc.want)
			}
			if w := b.wait(1); w != tc.wait {
				t.Errorf("wait(1) = %v, want %v", w, tc.wait)
			}
		})
	}
	if newBucket("requests", 0) != nil {
		t.Error("a limit of 0 made a bucket; 0 is unlimited")
	}
}

// TestAccountBurst: a full account admits a minute's requests at once, then
// refuses the next with the requests bucket and the wait for one token;
// input tokens refuse by their own bucket; the one that waits longest is
// named.
func TestAccountBurst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		limits  scenario.Account
		in      int
		admits  int
		limited string
		wait    time.Duration
	}{
		{"requests", scenario.Account{RequestsPerMinute: 5}, 10, 5, wire.BucketRequests, 12 * time.Second},
		{"input tokens", scenario.Account{RequestsPerMinute: 100, InputTokensPerMinute: 1000}, 300, 3, wire.BucketInputTokens, 12 * time.Second},
		{"input first", scenario.Account{RequestsPerMinute: 3, InputTokensPerMinute: 60}, 25, 2, wire.BucketInputTokens, 15 * time.Second},
		{"the longer wait names the bucket", scenario.Account{RequestsPerMinute: 2, InputTokensPerMinute: 60}, 25, 2, wire.BucketRequests, 30 * time.Second},
		{"concurrency", scenario.Account{Concurrency: 2}, 10, 2, wire.Concurrency, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccount(&tc.limits)
			for i := range tc.admits {
				if ad := a.admit(0, tc.in); ad.limited != "" {
					t.Fatalf("request %d refused by %s", i+1, ad.limited)
				}
			}
			ad := a.admit(0, tc.in)
			if ad.limited != tc.limited || ad.wait != tc.wait {
				t.Errorf("request %d: limited %q wait %v, want %q %v", tc.admits+1, ad.limited, ad.wait, tc.limited, tc.wait)
			}
			if a.inFlight != tc.admits {
				t.Errorf("in flight = %d, want %d: a refused request is not in flight", a.inFlight, tc.admits)
			}
		})
	}
}

// TestAccountRetryAfterHonest is the promise of the 429's retry-after: a
// client that waits exactly that long (whole seconds) is admitted, for
// every limit and request size; and one that comes back a second earlier
// (when the retry-after is above 1) is not, so it is not padded.
func TestAccountRetryAfterHonest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		limits scenario.Account
		in     int
	}{
		{"50 rpm", scenario.Account{RequestsPerMinute: 50}, 10},
		{"7 rpm", scenario.Account{RequestsPerMinute: 7}, 10},
		{"itpm", scenario.Account{InputTokensPerMinute: 20000}, 1733},
		{"itpm over the bucket", scenario.Account{InputTokensPerMinute: 1000}, 1500},
		{"all three", scenario.Account{RequestsPerMinute: 50, InputTokensPerMinute: 20000, OutputTokensPerMinute: 8000}, 900},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccount(&tc.limits)
			now := time.Duration(0)
			limited := 0
			for i := 0; i < 200; i++ {
				ad := a.admit(now, tc.in)
				if ad.limited == "" {
					a.release()
					a.serve(now, 150) // the answer's output tokens
					now += 10 * time.Millisecond
					continue
				}
				limited++
				ra := time.Duration(wire.RetryAfterSeconds(ad.wait)) * time.Second
				if ra < ad.wait || ra-ad.wait >= time.Second {
					t.Fatalf("retry-after %v for a wait of %v: not the wait rounded up to the second", ra, ad.wait)
				}
				if ra > time.Second {
					early := *a
					early.requests, early.input, early.output = cloneBucket(a.requests), cloneBucket(a.input), cloneBucket(a.output)
					if e := early.admit(now+ra-time.Second, tc.in); e.limited == "" {
						t.Fatalf("request %d admitted a second before its retry-after of %v", i+1, ra)
					}
				}
				now += ra
				if ad := a.admit(now, tc.in); ad.limited != "" {
					t.Fatalf("request %d waited its retry-after %v and was refused again by %s (wait %v)", i+1, ra, ad.limited, ad.wait)
				}
				a.release()
				a.serve(now, 150)
			}
			if limited == 0 {
				t.Fatal("no request was limited: the test proves nothing")
			}
		})
	}
}

func cloneBucket(b *bucket) *bucket {
	if b == nil {
		return nil
	}
	c := *b
	return &c
}

// TestAccountOutputCharged: output tokens are charged when the answer is
// served, into debt if need be; the next request waits the debt out.
func TestAccountOutputCharged(t *testing.T) {
	t.Parallel()
	a := newAccount(&scenario.Account{OutputTokensPerMinute: 600})
	if ad := a.admit(0, 10); ad.limited != "" {
		t.Fatalf("refused by %s", ad.limited)
	}
	a.release()
	a.serve(0, 900) // 300 past the bucket
	ad := a.admit(0, 10)
	if ad.limited != wire.BucketOutputTokens || ad.wait != 30*time.Second+100*time.Millisecond {
		t.Errorf("after a debt of 300 at 600/min: limited %q wait %v, want output-tokens 30.1s", ad.limited, ad.wait)
	}
	if ad.state.Buckets[0].Remaining != 0 {
		t.Errorf("remaining = %d in debt, want 0", ad.state.Buckets[0].Remaining)
	}
}

// TestAccountState: what an answer reports: the limit, the whole units
// left, the time until full, the buckets in order.
func TestAccountState(t *testing.T) {
	t.Parallel()
	a := newAccount(&scenario.Account{RequestsPerMinute: 60, OutputTokensPerMinute: 6000})
	a.admit(0, 40)
	ad := a.admit(500*time.Millisecond, 40)
	want := &wire.RateLimit{Buckets: []wire.Bucket{
		{Name: wire.BucketRequests, Limit: 60, Remaining: 58, Reset: 1500 * time.Millisecond, Requested: 1},
		{Name: wire.BucketOutputTokens, Limit: 6000, Remaining: 6000, Requested: 1},
	}}
	if diff := cmp.Diff(want, ad.state); diff != "" {
		t.Errorf("state mismatch (-want +got):\n%s", diff)
	}
	if newAccount(&scenario.Account{}) != nil || newAccount(nil) != nil {
		t.Error("an empty limits: made an account")
	}
}

// TestLimitFault: the fault a refused attempt meets, and the same rebuilt
// from its journal record.
func TestLimitFault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		provider string
		ad       admission
		want     string
	}{
		{wire.ProviderAnthropic, admission{limited: wire.BucketRequests, wait: 1200 * time.Millisecond}, "429 retry-after=2"},
		{wire.ProviderOpenAI, admission{limited: wire.BucketInputTokens, wait: 3 * time.Second}, "429 retry-after=3"},
		{wire.ProviderAnthropic, admission{limited: wire.Concurrency}, "529"},
		{wire.ProviderGemini, admission{limited: wire.Concurrency}, "503"},
	} {
		f := limitFault(tc.provider, tc.ad)
		if got := DescribeFault(f); got != tc.want {
			t.Errorf("%s %+v: %q, want %q", tc.provider, tc.ad, got, tc.want)
		}
		status := f.Kind.(fault.Status).Status
		back, ok := LimitFault(ServerAttempt{Status: status, Limited: journalLimited(tc.ad)})
		if !ok || DescribeFault(back) != tc.want {
			t.Errorf("rebuilt from the journal: %q, want %q", DescribeFault(back), tc.want)
		}
	}
	if _, ok := LimitFault(ServerAttempt{Status: 429}); ok {
		t.Error("an attempt the account admitted rebuilt as limited")
	}
}

// TestLimitsGolden pins the account's answers byte for byte, per format: the
// 429 (headers, body, retry-after), the overloaded answer and a success's
// rate-limit headers.
func TestLimitsGolden(t *testing.T) {
	t.Parallel()
	state := func(limited string) *wire.RateLimit {
		return &wire.RateLimit{Limited: limited, Wait: 1200 * time.Millisecond, Buckets: []wire.Bucket{
			{Name: wire.BucketRequests, Limit: 50, Remaining: 0, Reset: 61*time.Second + 300*time.Millisecond, Requested: 1},
			{Name: wire.BucketInputTokens, Limit: 20000, Remaining: 19650, Reset: 1050 * time.Millisecond, Requested: 30},
			{Name: wire.BucketOutputTokens, Limit: 8000, Remaining: 7200, Reset: 6 * time.Second, Requested: 1},
		}}
	}
	with := func(provider string, ad admission) *response {
		p := goldenParams(provider, limitFault(provider, ad))
		p.rate = ad.state
		return errorResponse(p)
	}
	ok := func(provider string) *response {
		p := goldenParams(provider, scenario.Fault{Kind: fault.OK{Text: goldenText}})
		p.rate = state("")
		return streamResponse(p)
	}
	for _, tc := range []struct {
		name string
		r    *response
	}{
		{"limits_anthropic_429.golden", with(wire.ProviderAnthropic, admission{limited: wire.BucketRequests, wait: 1200 * time.Millisecond, state: state(wire.BucketRequests)})},
		{"limits_anthropic_529.golden", with(wire.ProviderAnthropic, admission{limited: wire.Concurrency, state: state(wire.Concurrency)})},
		{"limits_anthropic_ok.golden", ok(wire.ProviderAnthropic)},
		{"limits_openai_429.golden", with(wire.ProviderOpenAI, admission{limited: wire.BucketRequests, wait: 1200 * time.Millisecond, state: state(wire.BucketRequests)})},
		{"limits_openai_429_tokens.golden", with(wire.ProviderOpenAI, admission{limited: wire.BucketInputTokens, wait: 1200 * time.Millisecond, state: state(wire.BucketInputTokens)})},
		{"limits_openai_503.golden", with(wire.ProviderOpenAI, admission{limited: wire.Concurrency, state: state(wire.Concurrency)})},
		{"limits_responses_429.golden", with(wire.ProviderResponses, admission{limited: wire.BucketOutputTokens, wait: 1200 * time.Millisecond, state: state(wire.BucketOutputTokens)})},
		{"limits_gemini_429.golden", with(wire.ProviderGemini, admission{limited: wire.BucketRequests, wait: 1200 * time.Millisecond, state: state(wire.BucketRequests)})},
		{"limits_gemini_503.golden", with(wire.ProviderGemini, admission{limited: wire.Concurrency, state: state(wire.Concurrency)})},
	} {
		golden(t, tc.name, tc.r.Bytes())
	}
}

// TestEnvLimits serves a scenario with limits: through the proxy, on a fake
// clock: a burst of the minute's requests is admitted, the next is
// answered 429 with the retry-after, headers and journal record of the
// requests bucket; a request sent exactly retry-after later is admitted.
func TestEnvLimits(t *testing.T) {
	t.Parallel()
	toxi := startToxi(t)
	var mu sync.Mutex
	clock := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	sc := &scenario.Scenario{Name: "limits", Provider: wire.ProviderAnthropic, Limits: &scenario.Account{RequestsPerMinute: 2}}
	e := startEnvWith(t, EnvConfig{Scenario: sc, Toxi: toxi, Now: now, TimeScale: 0.5})
	var got []string
	var last *http.Response
	for i, wait := range []time.Duration{0, 0, 0, 15 * time.Second} {
		advance(wait)
		resp, _, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		waitAttempts(t, e, i+1)
		got = append(got, strconv.Itoa(resp.StatusCode)+" retry-after="+resp.Header.Get("retry-after")+
			" remaining="+resp.Header.Get("anthropic-ratelimit-requests-remaining"))
		last = resp
	}
	// 2 a minute: a token every 30 s of policy time, 15 s of wall time at
	// a time scale of 0.5.
	want := []string{"200 retry-after= remaining=1", "200 retry-after= remaining=0", "429 retry-after=30 remaining=0", "200 retry-after= remaining=0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers mismatch (-want +got):\n%s", diff)
	}
	if last.Header.Get("anthropic-ratelimit-requests-limit") != "2" {
		t.Errorf("requests-limit = %q, want 2", last.Header.Get("anthropic-ratelimit-requests-limit"))
	}
	as := e.Attempts()
	if l := as[2].Limited; l == nil || l.Limit != wire.BucketRequests || l.RetryAfter != "30" || l.WaitMs != 30000 {
		t.Errorf("attempt 3 journaled limited %+v, want requests, retry-after 30, 30000 ms", l)
	}
	if as[0].Limited != nil || as[3].Limited != nil {
		t.Errorf("admitted attempts journaled as limited: %+v, %+v", as[0].Limited, as[3].Limited)
	}
	if !strings.Contains(readFile(t, e.journalPath), `"limited":{"limit":"requests","retryAfter":"30","waitMs":30000}`) {
		t.Errorf("server.jsonl lacks the limited record")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzAccount drives an account with any limits through any sequence of
// requests, answers and waits: a bucket never holds more than its limit,
// what an answer reports stays within the limit (a bucket not full resets
// later than now: in debt, possibly much later), and a request refused by a
// bucket fits once its wait has passed (nothing else happening meanwhile).
func FuzzAccount(f *testing.F) {
	f.Add(uint32(50), uint32(20000), uint32(8000), uint8(4), []byte{0, 10, 1, 200, 2, 3, 0, 255})
	f.Add(uint32(1), uint32(0), uint32(0), uint8(0), []byte{0, 0, 0, 0, 3, 9})
	f.Add(uint32(0), uint32(7), uint32(3), uint8(1), []byte{0, 250, 1, 250, 0, 1})
	f.Fuzz(func(t *testing.T, rpm, itpm, otpm uint32, conc uint8, ops []byte) {
		limits := scenario.Account{RequestsPerMinute: int(rpm % (scenario.MaxRequestsPerMinute + 1)),
			InputTokensPerMinute: int(itpm), OutputTokensPerMinute: int(otpm), Concurrency: int(conc)}
		a := newAccount(&limits)
		if a == nil {
			if !limits.Empty() {
				t.Fatal("no account for limits that limit")
			}
			return
		}
		now := time.Duration(0)
		for i := 0; i+1 < len(ops) && i < 400; i += 2 {
			arg := int(ops[i+1])
			switch ops[i] % 4 {
			case 0: // a request of arg×7 input tokens
				ad := a.admit(now, arg*7)
				for _, b := range ad.state.Buckets {
					if b.Remaining < 0 || b.Remaining > b.Limit || b.Reset < 0 || b.Remaining < b.Limit && b.Reset == 0 {
						t.Fatalf("reported %+v", b)
					}
				}
				if ad.limited != "" && ad.limited != wire.Concurrency {
					probe := *a
					probe.requests, probe.input, probe.output = cloneBucket(a.requests), cloneBucket(a.input), cloneBucket(a.output)
					if again := probe.admit(now+ad.wait, arg*7); again.limited != "" && again.limited != wire.Concurrency {
						t.Fatalf("refused by %s (wait %v), then refused by %s after the wait", ad.limited, ad.wait, again.limited)
					}
				}
			case 1: // an answer of arg×11 output tokens ends
				if a.inFlight > 0 {
					a.release()
					a.serve(now, arg*11)
				}
			default: // time passes
				now += time.Duration(arg) * 37 * time.Millisecond
			}
			for _, b := range a.buckets() {
				if b.tokens > b.capacity+1e-6 {
					t.Fatalf("%s holds %v, above its limit %v", b.name, b.tokens, b.capacity)
				}
			}
		}
	})
}

// TestEnvConcurrency: with concurrency: 1, a request that arrives while
// another's answer is in flight (a stream stalled after its first event) is
// answered 529 overloaded_error and journaled as limited by concurrency;
// once the stalled attempt ends, the next request is admitted.
func TestEnvConcurrency(t *testing.T) {
	t.Parallel()
	toxi := startToxi(t)
	sc := &scenario.Scenario{Name: "concurrency", Provider: wire.ProviderAnthropic,
		Attempts: []scenario.Fault{{Kind: fault.Stall{AfterEvents: 1}}}, Limits: &scenario.Account{Concurrency: 1}}
	e := startEnvWith(t, EnvConfig{Scenario: sc, Toxi: toxi})
	// The first answer's head has arrived, so its attempt is in flight.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.BaseURL()+wire.PathAnthropic,
		strings.NewReader(`{"model":"claude-haiku-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	first, err := c.Do(req)
	if err != nil || first.StatusCode != 200 {
		t.Fatalf("first request: %v %v", first, err)
	}
	resp, body, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 529 || !strings.Contains(string(body), `"overloaded_error"`) {
		t.Errorf("second request while the first is in flight: %d %s, want 529 overloaded_error", resp.StatusCode, body)
	}
	first.Body.Close()
	waitAttempts(t, e, 2)
	resp, _, err = post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Errorf("third request after the first ended: %d, want 200", resp.StatusCode)
	}
	as := waitAttempts(t, e, 3)
	if l := as[1].Limited; l == nil || l.Limit != wire.Concurrency || l.RetryAfter != "" {
		t.Errorf("attempt 2 journaled limited %+v, want concurrency without retry-after", l)
	}
	if as[0].Limited != nil || as[2].Limited != nil {
		t.Errorf("admitted attempts journaled limited: %+v %+v", as[0].Limited, as[2].Limited)
	}
}
