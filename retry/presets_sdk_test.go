package retry

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// TestSDKPresetRetryAfterRule pins the Retry-After rule the SDK presets
// model, the Python SDKs': a value is used when 0 < value ≤ 60s, else the
// backoff is (the Node SDKs use other values too; see the doc comments).
func TestSDKPresetRetryAfterRule(t *testing.T) {
	t.Parallel()
	backoffLo, backoffHi := 375*time.Millisecond, 500*time.Millisecond // 0.5s × (1 − 0.25·rand)
	tests := []struct {
		name   string
		ra     time.Duration
		lo, hi time.Duration
	}{
		{"0: backoff", 0, backoffLo, backoffHi},
		{"1.5s: used", 1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"60s: used", 60 * time.Second, 60 * time.Second, 60 * time.Second},
		{"61s: backoff", 61 * time.Second, backoffLo, backoffHi},
	}
	for _, preset := range []string{"anthropic-sdk", "openai-sdk"} {
		p, err := TestPolicies.Get(preset)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			t.Run(preset+"/"+tt.name, func(t *testing.T) {
				lo, hi, ok := p.Envelope(RateLimit, 1, tt.ra, true)
				if !ok || lo != tt.lo || hi != tt.hi {
					t.Errorf("Envelope(rate_limit, 1, Retry-After %v) = [%v, %v] ok=%v, want [%v, %v]", tt.ra, lo, hi, ok, tt.lo, tt.hi)
				}
			})
		}
	}
}

// sdkPresets are the presets that model one SDK version each, in the order
// of the columns of the tables below.
var sdkPresets = []string{"anthropic-node", "anthropic-python", "anthropic-go", "openai-node", "openai-node-7", "openai-go", "openai-python",
	"anthropic-java", "openai-java"}

// headerErr is the error the provider client returns for an HTTP error
// response with these headers (name, value, ...), received at now.
func headerErr(status int, now time.Time, kv ...string) *provider.Error {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	e := httpErr(status)
	e.Header = h
	e.RetryAfter, e.RetryAfterRaw, e.HasRetryAfter = provider.ParseRetryAfter(h, now)
	switch h.Get("X-Should-Retry") {
	case "true":
		e.ShouldRetry = ptr(true)
	case "false":
		e.ShouldRetry = ptr(false)
	}
	return e
}

// firstWait runs one logical request under preset in fake time: the first
// attempt fails with the error mk builds (at the bubble's start time), the
// next one succeeds. It returns the first RetryAttempt event and the
// number of attempts made.
func firstWait(t *testing.T, preset string, mk func(now time.Time) error) (trace.RetryAttempt, int) {
	t.Helper()
	var ev trace.RetryAttempt
	var attempts int
	synctest.Test(t, func(t *testing.T) {
		got := doFake(t, &Retrier{Policy: mustPreset(t, preset)}, mk(time.Now()))
		evs := eventsOf[trace.RetryAttempt](t, got.events, trace.TypeRetryAttempt)
		if len(evs) == 0 {
			t.Fatal("no RetryAttempt event")
		}
		ev, attempts = evs[0], len(got.models)
	})
	return ev, attempts
}

// expect is what a preset does after the first failed attempt: "b" waits
// the backoff (500ms with the fixed random source: no jitter taken), "x"
// does not retry, anything else waits that many seconds of Retry-After.
func checkExpect(t *testing.T, want string, ev trace.RetryAttempt, attempts int) {
	t.Helper()
	switch want {
	case "x":
		if attempts != 1 || ev.WillRetry {
			t.Errorf("%d attempts, willRetry %v; want no retry", attempts, ev.WillRetry)
		}
	case "b":
		if attempts != 2 || ev.DelaySource != trace.DelayBackoff || ev.DelayMs != 500 {
			t.Errorf("%d attempts, waited %dms (%s); want the 500ms backoff", attempts, ev.DelayMs, ev.DelaySource)
		}
	default:
		s, err := strconv.ParseFloat(want, 64)
		if err != nil {
			t.Fatal(err)
		}
		ms := int64(s * 1000)
		if attempts != 2 || ev.DelaySource != trace.DelayRetryAfter || ev.DelayMs != ms {
			t.Errorf("%d attempts, waited %dms (%s); want the Retry-After, %dms", attempts, ev.DelayMs, ev.DelaySource, ms)
		}
	}
}

// checkEnvelope checks that Envelope, given what the policy reads from the
// headers, allows exactly what the Retrier does.
func checkEnvelope(t *testing.T, preset, want string, h http.Header, now time.Time, ft FailureType) {
	t.Helper()
	p := mustPreset(t, preset)
	ra, has := p.ReadRetryAfter(h, now)
	var sr *bool
	switch h.Get("X-Should-Retry") {
	case "true":
		sr = ptr(true)
	case "false":
		sr = ptr(false)
	}
	lo, hi, ok := p.EnvelopeShouldRetry(ft, 1, ra, has, sr)
	switch want {
	case "x":
		if ok {
			t.Errorf("Envelope = [%v, %v], want no retry", lo, hi)
		}
	case "b":
		if !ok || lo != 375*time.Millisecond || hi != 500*time.Millisecond {
			t.Errorf("Envelope = [%v, %v] ok=%v, want the backoff [375ms, 500ms]", lo, hi, ok)
		}
	default:
		s, _ := strconv.ParseFloat(want, 64)
		d := time.Duration(s * float64(time.Second))
		if !ok || lo != d || hi != d {
			t.Errorf("Envelope = [%v, %v] ok=%v, want exactly %v", lo, hi, ok, d)
		}
	}
}

// TestSDKPresetSchedules: 2 retries, 0.5s then 1s, each minus up to 25%.
func TestSDKPresetSchedules(t *testing.T) {
	t.Parallel()
	for _, preset := range sdkPresets {
		for _, tt := range []struct {
			name string
			rand uint64
			gaps []time.Duration
		}{
			{"no jitter taken", 0, secs(0.5, 1)},
			{"half the jitter", half, secs(0.4375, 0.875)},
			{"almost all the jitter", ^uint64(0), []time.Duration{375*time.Millisecond + 1, 750*time.Millisecond + 1}},
		} {
			t.Run(preset+"/"+tt.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					got := doFake(t, &Retrier{Policy: mustPreset(t, preset), Rand: fixedRand(tt.rand)}, httpErr(529), httpErr(529), httpErr(529))
					if len(got.models) != 3 || got.err == nil {
						t.Errorf("%d attempts, err %v; want 3 attempts and an error", len(got.models), got.err)
					}
					if diff := cmp.Diff(tt.gaps, got.gaps, cmpApprox(time.Nanosecond)); diff != "" {
						t.Errorf("gaps mismatch (-want +got):\n%s", diff)
					}
				})
			})
		}
	}
}

// cmpApprox compares durations to within d.
func cmpApprox(d time.Duration) cmp.Option {
	return cmp.Comparer(func(a, b time.Duration) bool { return a-b <= d && b-a <= d })
}

// TestSDKPresetRetryAfterValues: a 429 with retry-after: N, per preset
// (columns: sdkPresets). The Node 1.x and Python SDKs back off on 0; the Go
// SDKs and Node 6.x/7.x retry at once. Node 7.x and anthropic (Python) use
// at most 60s; openai-go and openai (Python) do not retry above 120s.
func TestSDKPresetRetryAfterValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		want  []string
	}{
		{"0", []string{"b", "b", "0", "0", "0", "0", "b", "b", "0"}},
		{"0.5", []string{"0.5", "0.5", "0.5", "0.5", "0.5", "0.5", "0.5", "0.5", "0.5"}},
		{"1", []string{"1", "1", "1", "1", "1", "1", "1", "1", "1"}},
		{"60", []string{"60", "60", "60", "60", "60", "60", "60", "60", "8"}},
		{"61", []string{"61", "b", "61", "61", "b", "61", "61", "61", "8"}},
		{"120", []string{"120", "b", "120", "120", "b", "120", "120", "120", "8"}},
		{"121", []string{"121", "b", "121", "121", "b", "x", "x", "121", "8"}},
		{"-5", []string{"b", "b", "0", "0", "b", "b", "b", "b", "0"}},
	}
	for _, tt := range tests {
		for i, preset := range sdkPresets {
			t.Run(preset+"/retry-after "+tt.value, func(t *testing.T) {
				mk := func(now time.Time) error { return headerErr(429, now, "Retry-After", tt.value) }
				ev, n := firstWait(t, preset, mk)
				checkExpect(t, tt.want[i], ev, n)
				h := http.Header{"Retry-After": {tt.value}}
				checkEnvelope(t, preset, tt.want[i], h, time.Now(), RateLimit)
			})
		}
	}
}

// TestSDKPresetRetryAfterMs: retry-after-ms is read before retry-after. A
// retry-after-ms of 0 yields to retry-after in the Node 1.x and 6.x SDKs
// only; a negative one is skipped by openai-go only.
func TestSDKPresetRetryAfterMs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kv   []string
		want []string
	}{
		{"ms 1500 and retry-after 5", []string{"Retry-After-Ms", "1500", "Retry-After", "5"}, []string{"1.5", "1.5", "1.5", "1.5", "1.5", "1.5", "1.5", "1.5", "1.5"}},
		{"ms 1500 alone", []string{"Retry-After-Ms", "1500"}, []string{"1.5", "1.5", "1.5", "1.5", "1.5", "1.5", "1.5", "1.5", "1.5"}},
		{"ms 0 and retry-after 5", []string{"Retry-After-Ms", "0", "Retry-After", "5"}, []string{"5", "b", "0", "5", "0", "0", "b", "b", "0"}},
		{"ms 0 alone", []string{"Retry-After-Ms", "0"}, []string{"b", "b", "0", "0", "0", "0", "b", "b", "0"}},
		{"ms -1500 and retry-after 5", []string{"Retry-After-Ms", "-1500", "Retry-After", "5"}, []string{"b", "b", "0", "0", "b", "5", "b", "b", "0"}},
		{"ms 121000", []string{"Retry-After-Ms", "121000"}, []string{"121", "b", "121", "121", "b", "x", "x", "121", "8"}},
		{"ms not a number, retry-after 2", []string{"Retry-After-Ms", "soon", "Retry-After", "2"}, []string{"2", "2", "2", "2", "2", "2", "2", "2", "2"}},
	}
	for _, tt := range tests {
		for i, preset := range sdkPresets {
			t.Run(preset+"/"+tt.name, func(t *testing.T) {
				mk := func(now time.Time) error { return headerErr(429, now, tt.kv...) }
				ev, n := firstWait(t, preset, mk)
				checkExpect(t, tt.want[i], ev, n)
				h := http.Header{}
				for j := 0; j+1 < len(tt.kv); j += 2 {
					h.Set(tt.kv[j], tt.kv[j+1])
				}
				checkEnvelope(t, preset, tt.want[i], h, time.Now(), RateLimit)
			})
		}
	}
	// The same through the real client and a real server, for the cases
	// that depend on reading both headers.
	for i, preset := range sdkPresets {
		t.Run(preset+"/wire", func(t *testing.T) {
			for _, tt := range tests[:3] {
				h := map[string]string{}
				for j := 0; j+1 < len(tt.kv); j += 2 {
					h[tt.kv[j]] = tt.kv[j+1]
				}
				evs := runWire(t, mustPreset(t, preset), wireAttempt{429, h})
				if len(evs) == 0 {
					t.Fatal("no RetryAttempt")
				}
				// The wire test takes jitter from a fixed source: as firstWait.
				checkExpect(t, tt.want[i], evs[0], len(evs)+1)
			}
		})
	}
}

// TestSDKPresetRetryAfterDate: retry-after as an HTTP-date, 30s ahead, 30s
// past, 150s ahead.
func TestSDKPresetRetryAfterDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		offset time.Duration
		want   []string
	}{
		{"30s ahead", 30 * time.Second, []string{"30", "30", "30", "30", "30", "30", "30", "30", "8"}},
		{"30s past", -30 * time.Second, []string{"b", "b", "0", "0", "b", "0", "b", "b", "0"}},
		{"150s ahead", 150 * time.Second, []string{"150", "b", "150", "150", "b", "x", "x", "150", "8"}},
	}
	for _, tt := range tests {
		for i, preset := range sdkPresets {
			t.Run(preset+"/"+tt.name, func(t *testing.T) {
				mk := func(now time.Time) error {
					return headerErr(429, now, "Retry-After", now.Add(tt.offset).UTC().Format(http.TimeFormat))
				}
				ev, n := firstWait(t, preset, mk)
				checkExpect(t, tt.want[i], ev, n)
				// A date has whole seconds: read it at a whole second.
				now := time.Now().Truncate(time.Second)
				h := http.Header{"Retry-After": {now.Add(tt.offset).UTC().Format(http.TimeFormat)}}
				checkEnvelope(t, preset, tt.want[i], h, now, RateLimit)
			})
		}
	}
}

// TestSDKPresetStatuses: 408, 409, 429, 500 and 529 are retried; 400, 404
// and 304 are not; x-should-retry decides over the status (and, in openai-go
// and openai Python, a Retry-After above 120s decides over x-should-retry).
func TestSDKPresetStatuses(t *testing.T) {
	t.Parallel()
	all := func(v string) []string { return []string{v, v, v, v, v, v, v, v, v} }
	tests := []struct {
		name   string
		status int
		kv     []string
		ft     FailureType
		want   []string
	}{
		{"408", 408, nil, Timeout, all("b")},
		{"409", 409, nil, Conflict, all("b")},
		{"429", 429, nil, RateLimit, all("b")},
		{"500", 500, nil, ServerError, all("b")},
		{"529", 529, nil, Overloaded, all("b")},
		{"400", 400, nil, InvalidRequest, all("x")},
		{"404", 404, nil, ModelNotFound, all("x")},
		{"304", 304, nil, Unknown, all("x")},
		{"400 x-should-retry true", 400, []string{"X-Should-Retry", "true"}, InvalidRequest, all("b")},
		{"429 x-should-retry false", 429, []string{"X-Should-Retry", "false"}, RateLimit, all("x")},
		{"529 x-should-retry false", 529, []string{"X-Should-Retry", "false"}, Overloaded, all("x")},
		{"400 x-should-retry true, retry-after 121", 400, []string{"X-Should-Retry", "true", "Retry-After", "121"}, InvalidRequest,
			[]string{"121", "b", "121", "121", "b", "x", "x", "121", "8"}},
	}
	for _, tt := range tests {
		for i, preset := range sdkPresets {
			t.Run(preset+"/"+tt.name, func(t *testing.T) {
				mk := func(now time.Time) error { return headerErr(tt.status, now, tt.kv...) }
				ev, n := firstWait(t, preset, mk)
				checkExpect(t, tt.want[i], ev, n)
				h := http.Header{}
				for j := 0; j+1 < len(tt.kv); j += 2 {
					h.Set(tt.kv[j], tt.kv[j+1])
				}
				checkEnvelope(t, preset, tt.want[i], h, time.Now(), tt.ft)
			})
		}
	}
}

// TestSDKPresetStreamAndTransport: nothing after the response headers is
// retried (an SSE error event, a cut stream, a malformed event); every
// error without a response is (a reset, a refused connection, a timeout, a
// TLS failure), except that openai-go does not retry its own request
// timeout (a scenario's client.timeout), while anthropic-go does.
func TestSDKPresetStreamAndTransport(t *testing.T) {
	t.Parallel()
	all := func(v string) []string { return []string{v, v, v, v, v, v, v, v, v} }
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"SSE overloaded_error", sseErr("overloaded_error"), all("x")},
		{"SSE api_error", sseErr("api_error"), all("x")},
		{"stream cut midway", &provider.Error{Kind: provider.KindIncomplete, Provider: "anthropic", Streamed: true}, all("x")},
		{"reset after content", &provider.Error{Kind: provider.KindReset, Provider: "anthropic", Streamed: true}, all("x")},
		{"malformed event", &provider.Error{Kind: provider.KindParse, Provider: "anthropic", Streamed: true}, all("x")},
		{"reset before the response", &provider.Error{Kind: provider.KindReset, Provider: "anthropic"}, all("b")},
		{"refused", &provider.Error{Kind: provider.KindRefused, Provider: "anthropic"}, all("b")},
		{"transport timeout before the response", &provider.Error{Kind: provider.KindTimeout, Provider: "anthropic"}, all("b")},
		{"TLS failure", &provider.Error{Kind: provider.KindNetwork, Provider: "anthropic", Err: errors.New("x509: certificate signed by unknown authority")}, all("b")},
		{"request timeout (client.timeout)", &provider.Error{Kind: provider.KindTimeout, Provider: "anthropic", AttemptTimeout: true},
			[]string{"b", "b", "b", "b", "b", "x", "b", "b", "b"}},
		{"canceled", &provider.Error{Kind: provider.KindCanceled, Provider: "anthropic", Err: context.Canceled}, all("x")},
	}
	for _, tt := range tests {
		for i, preset := range sdkPresets {
			t.Run(preset+"/"+tt.name, func(t *testing.T) {
				ev, n := firstWait(t, preset, func(time.Time) error { return tt.err })
				checkExpect(t, tt.want[i], ev, n)
			})
		}
	}
}

// TestSDKPresetTimeout: a request that hangs fails after the SDKs' default
// timeout of 10 minutes, and is retried.
func TestSDKPresetTimeout(t *testing.T) {
	t.Parallel()
	for _, preset := range sdkPresets {
		t.Run(preset, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				start := time.Now()
				err := (&Retrier{Policy: mustPreset(t, preset), Rand: fixedRand(0)}).Do(context.Background(), func(ctx context.Context, _ Attempt) error {
					calls++
					if calls == 1 {
						<-ctx.Done() // hang until the attempt's deadline
						return ctx.Err()
					}
					return nil
				})
				if err != nil || calls != 2 {
					t.Fatalf("err %v after %d calls; want success on the second", err, calls)
				}
				if el := time.Since(start); el != 10*time.Minute+500*time.Millisecond {
					t.Errorf("took %v, want 10m timeout + 500ms backoff", el)
				}
			})
		})
	}
}
