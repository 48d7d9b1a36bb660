package retry

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
)

// decideFault is one failure a harness serves: the error a client meets
// and the response headers it carries.
type decideFault struct {
	name string
	pe   provider.Error
	h    http.Header
}

func decideFaults(now time.Time) []decideFault {
	st := func(code int, h http.Header) provider.Error {
		return provider.Error{Kind: provider.KindHTTP, Provider: "anthropic", Status: code}
	}
	b := func(v bool) *bool { return &v }
	fs := []decideFault{}
	for _, code := range []int{400, 403, 404, 408, 409, 422, 429, 500, 503, 529} {
		fs = append(fs, decideFault{name: fmt.Sprint(code), pe: st(code, nil)})
	}
	ra := func(name, k, v string) decideFault {
		return decideFault{name: name, pe: st(429, nil), h: http.Header{k: {v}}}
	}
	should := func(code int, v bool) decideFault {
		pe := st(code, nil)
		pe.ShouldRetry = b(v)
		return decideFault{name: fmt.Sprintf("%d x-should-retry %t", code, v), pe: pe}
	}
	return append(fs,
		ra("429 retry-after 3", "Retry-After", "3"),
		ra("429 retry-after-ms 1700", "Retry-After-Ms", "1700"),
		ra("429 retry-after date", "Retry-After", now.Add(6*time.Second).UTC().Format(http.TimeFormat)),
		ra("429 retry-after 3600", "Retry-After", "3600"),
		should(400, true), should(503, false),
		decideFault{name: "sse overloaded_error", pe: provider.Error{Kind: provider.KindSSEError, Provider: "anthropic", ErrorType: "overloaded_error", Streamed: true}},
		decideFault{name: "drop", pe: provider.Error{Kind: provider.KindIncomplete, Provider: "anthropic", Streamed: true}},
		decideFault{name: "reset", pe: provider.Error{Kind: provider.KindReset, Provider: "anthropic"}},
	)
}

// TestDecideFirstIsTheLoop holds DecideFirst against Retrier.Do for every
// preset and fault: the loop retries exactly when DecideFirst says so,
// and its wait is inside the decision's envelope.
func TestDecideFirstIsTheLoop(t *testing.T) {
	for _, name := range TestPolicies.Names() {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pol, err := TestPolicies.Get(name)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range decideFaults(time.Now()) {
					d := pol.DecideFirstHeaders(f.pe, f.h, time.Now())
					pe := f.pe
					if f.h != nil {
						pe.Header = f.h
						pe.RetryAfter, pe.RetryAfterRaw, pe.HasRetryAfter = provider.ParseRetryAfter(f.h, time.Now())
					}
					r := doFake(t, &Retrier{Policy: pol}, &pe)
					retried := len(r.gaps) > 0
					if retried != d.Retry {
						t.Errorf("%s: the loop retried %t, DecideFirst %+v", f.name, retried, d)
						continue
					}
					if retried && (r.gaps[0] < d.Lo || r.gaps[0] > d.Hi) {
						t.Errorf("%s: the loop waited %v, DecideFirst %v–%v", f.name, r.gaps[0], d.Lo, d.Hi)
					}
				}
			})
		})
	}
}

// TestDecideFirst: the decisions the probe's conformance relies on.
func TestDecideFirst(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	faults := map[string]decideFault{}
	for _, f := range decideFaults(now) {
		faults[f.name] = f
	}
	tests := []struct {
		preset, fault string
		want          FirstDecision
	}{
		{"claude-code", "400", FirstDecision{Retry: true, Resend: true, Resends: 5, Source: "none"}},
		{"claude-code", "404", FirstDecision{Retry: true, Resend: true, Resends: 1, Source: "none"}},
		{"claude-code", "400 x-should-retry true", FirstDecision{Retry: true, Resend: true, Resends: 5, Source: "none"}},
		{"claude-code", "sse overloaded_error", FirstDecision{Retry: true, Resend: true, Resends: 1, Source: "none"}},
		{"claude-code", "503 x-should-retry false", FirstDecision{Retry: true, Source: "backoff", Lo: 500 * time.Millisecond, Hi: 625 * time.Millisecond}},
		{"claude-code", "429 retry-after 3", FirstDecision{Retry: true, Source: "retry-after", Lo: 3 * time.Second, Hi: 3750 * time.Millisecond}},
		{"claude-code", "429 retry-after 3600", FirstDecision{Reason: ReasonRetryAfterCeiling}},
		{"claude-code", "429 retry-after-ms 1700", FirstDecision{Retry: true, Source: "backoff", Lo: 500 * time.Millisecond, Hi: 625 * time.Millisecond}},
		{"codex-cli", "403", FirstDecision{Retry: true, Source: "backoff", Lo: 180 * time.Millisecond, Hi: 220 * time.Millisecond}},
		{"anthropic-sdk", "400", FirstDecision{Reason: ReasonNonRetryable}},
	}
	for _, tt := range tests {
		pol, err := TestPolicies.Get(tt.preset)
		if err != nil {
			t.Fatal(err)
		}
		f := faults[tt.fault]
		got := pol.DecideFirstHeaders(f.pe, f.h, now)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s, %s (-want +got):\n%s", tt.preset, tt.fault, diff)
		}
	}
}
