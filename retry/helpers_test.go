package retry

import (
	"bytes"
	"context"
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// update rewrites the golden files in testdata/ (-update).
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// constSource is a rand.Source that always returns v, so jitter is at a bound:
// 0 gives Float64() == 0, ^uint64(0) gives Float64() just below 1.
type constSource uint64

func (s constSource) Uint64() uint64 { return uint64(s) }

func fixedRand(v uint64) *rand.Rand { return rand.New(constSource(v)) }

func httpErr(status int) *provider.Error {
	return &provider.Error{Kind: provider.KindHTTP, Provider: "anthropic", Status: status}
}

func retryAfterErr(status int, raw string, d time.Duration) *provider.Error {
	e := httpErr(status)
	e.RetryAfterRaw, e.RetryAfter, e.HasRetryAfter = raw, d, true
	return e
}

func sseErr(typ string) *provider.Error {
	return &provider.Error{Kind: provider.KindSSEError, Provider: "anthropic", ErrorType: typ, Message: "stream error", Streamed: true}
}

// run is the outcome of one Retrier.Do under fake time.
type run struct {
	err     error
	gaps    []time.Duration // time between the start of attempt k and of attempt k+1
	models  []string
	events  []trace.Event
	log     string
	elapsed time.Duration
	// attempts are the Attempts the call saw (captureRun only).
	attempts []Attempt
}

// doFake runs r.Do inside the caller's synctest bubble. The k-th attempt
// returns errs[k] (nil past the end: success).
func doFake(t *testing.T, r *Retrier, errs ...error) run {
	t.Helper()
	var buf, log bytes.Buffer
	r.Trace = trace.NewWriter(&buf, "test")
	r.Log = &log
	if r.Rand == nil {
		r.Rand = fixedRand(0)
	}
	var out run
	var last time.Time
	start := time.Now()
	i := 0
	out.err = r.Do(context.Background(), func(ctx context.Context, a Attempt) error {
		now := time.Now()
		if i > 0 {
			out.gaps = append(out.gaps, now.Sub(last))
		}
		last = now
		out.models = append(out.models, a.Model)
		if a.Number != i+1 {
			t.Errorf("attempt number = %d, want %d", a.Number, i+1)
		}
		i++
		if i-1 < len(errs) {
			return errs[i-1]
		}
		return nil
	})
	out.elapsed = time.Since(start)
	out.events = decodeEvents(t, buf.Bytes())
	out.log = log.String()
	return out
}

func decodeEvents(t *testing.T, data []byte) []trace.Event {
	t.Helper()
	var evs []trace.Event
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var ev trace.Event
		if err := jsonUnmarshal(line, &ev); err != nil {
			t.Fatalf("bad trace line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func eventsOf[T any](t *testing.T, evs []trace.Event, typ string) []T {
	t.Helper()
	var out []T
	for _, ev := range evs {
		if ev.Type != typ {
			continue
		}
		var p T
		if err := ev.Decode(&p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func secs(v ...float64) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, s := range v {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}

func mustPreset(t testing.TB, name string) *Policy {
	t.Helper()
	p, err := TestPolicies.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ptr[T any](v T) *T { return &v }

// TestPolicies gives this package's tests the presets (retry/preset) and
// the policy YAML (retry/policyfile), which import retry and so cannot be
// imported by its internal tests; policies_test.go (package retry_test)
// fills it in before any test runs.
var TestPolicies struct {
	Get   func(name string) (*Policy, error)
	Names func() []string
	Parse func(data []byte, file string) (*Policy, error)
}
