package retry

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/trace"
)

// TestRetryAfterFloorAndJitter: Claude Code waits max(retry-after × (1 + up
// to 25%), the backoff), and every wait the loop draws stays inside the
// envelope the checks use.
func TestRetryAfterFloorAndJitter(t *testing.T) {
	t.Parallel()
	p := mustPreset(t, "claude-code")
	tests := []struct {
		name     string
		onTarget int
		ra       time.Duration
		source   string
	}{
		{"retry-after above the backoff", 1, 3 * time.Second, trace.DelayRetryAfter},
		{"retry-after below the backoff", 5, time.Second, trace.DelayBackoff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi, ok := p.Envelope(RateLimit, tt.onTarget, tt.ra, true)
			if !ok {
				t.Fatal("Envelope: not retried")
			}
			l := &loop{p: p, rng: rand.New(rand.NewPCG(1, 2)), onTarget: tt.onTarget}
			for i := 0; i < 200; i++ {
				d, src := l.retryAfterDelay(p.Strategy(RateLimit), tt.ra)
				if d < lo || d > hi {
					t.Fatalf("wait %s outside the envelope [%s, %s]", d, lo, hi)
				}
				if diff := cmp.Diff(tt.source, src); diff != "" {
					t.Fatalf("source mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}
