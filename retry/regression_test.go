package retry

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/trace"
)

// wait is the part of a RetryAttempt that says how long the client waited
// and why.
type wait struct {
	DelayMs      int64
	Source       string
	RetryAfterMs *int64
}

func waitsOf(evs []trace.RetryAttempt) []wait {
	var out []wait
	for _, ev := range evs {
		if ev.WillRetry {
			out = append(out, wait{ev.DelayMs, ev.DelaySource, ev.RetryAfterMs})
		}
	}
	return out
}

// TestForgeflareIgnoresRetryAfterMs: seed 000 parses the retry-after header
// only. Regression: forgeflare read retry-after-ms first, as the SDKs do, so
// a 429 with only retry-after-ms: 3000 waited 3s (the seed: the 2s backoff)
// and one with retry-after: 5 and retry-after-ms: 1500 waited 1.5s (the
// seed: 5s). The SDK presets still read retry-after-ms first.
func TestForgeflareIgnoresRetryAfterMs(t *testing.T) {
	tests := []struct {
		name    string
		preset  string
		headers map[string]string
		want    wait
	}{
		{"retry-after-ms alone: backoff", "forgeflare", map[string]string{"Retry-After-Ms": "3000"},
			wait{2000, trace.DelayBackoff, nil}},
		{"retry-after and retry-after-ms: retry-after", "forgeflare", map[string]string{"Retry-After": "5", "Retry-After-Ms": "1500"},
			wait{5000, trace.DelayRetryAfter, ptr(int64(5000))}},
		{"retry-after alone", "forgeflare", map[string]string{"Retry-After": "5"},
			wait{5000, trace.DelayRetryAfter, ptr(int64(5000))}},
		{"anthropic-sdk reads retry-after-ms first", "anthropic-sdk", map[string]string{"Retry-After": "5", "Retry-After-Ms": "1500"},
			wait{1500, trace.DelayRetryAfter, ptr(int64(1500))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := waitsOf(runWire(t, mustPreset(t, tt.preset), wireAttempt{429, tt.headers}))
			if diff := cmp.Diff([]wait{tt.want}, got); diff != "" {
				t.Errorf("waits mismatch (-want +got):\n%s", diff)
			}
			// A harness that has only the headers reads the same value, and
			// the envelope for it is the wait the client made.
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			p := mustPreset(t, tt.preset)
			ra, has := p.ReadRetryAfter(h, time.Now())
			lo, hi, ok := p.Envelope(RateLimit, 1, ra, has)
			w := time.Duration(tt.want.DelayMs) * time.Millisecond
			if !ok || lo > w || hi < w {
				t.Errorf("Envelope(ReadRetryAfter) = [%v, %v] ok=%v, want it to hold %v", lo, hi, ok, w)
			}
		})
	}
}
