package preset

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/ticket"
)

// TestSeed002OneBaseDelay: the forge-ticket preset and Decide give one
// answer to seed 002: the same waits for the same category.
func TestSeed002OneBaseDelay(t *testing.T) {
	t.Parallel()
	p := ForgeTicket()
	decided := func(category string) []time.Duration {
		var out []time.Duration
		for n := 0; ; n++ {
			d := ticket.Decide(category, n)
			if !d.ShouldRetry {
				return out
			}
			out = append(out, d.NextDelay)
		}
	}
	tests := []struct {
		category string
		ft       retry.FailureType
	}{
		{ticket.CategoryTransient, retry.Overloaded},
		{ticket.CategoryAPIError, retry.AuthInvalid},
		{ticket.CategoryCodeError, retry.StreamParse},
		{ticket.CategoryCodeError, retry.LogicalFailure},
		{ticket.CategoryUnknown, retry.Unknown},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(decided(tt.category), p.Schedule(tt.ft)); diff != "" {
			t.Errorf("%s (%s): Decide and forge-ticket differ (-Decide +preset):\n%s", tt.category, tt.ft, diff)
		}
	}
}
