package battery

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/probe"
)

// TestFindingsOf: each experiment's findings, named by it, in the
// summary's order; an experiment without findings adds none.
func TestFindingsOf(t *testing.T) {
	t.Parallel()
	sum := &chaos.Summary{Scenarios: []chaos.Result{
		{Name: "probe-stall", Findings: []verify.Finding{{Code: "no_read_timeout", Attempts: []int{2}, Evidence: "attempt 2 stalled"}}},
		{Name: "probe-429"},
		{Name: "probe-exhaust-1", Findings: []verify.Finding{
			{Code: "no_jitter", Attempts: []int{1, 2}, Evidence: "identical"},
			{Code: "no_backoff", Attempts: []int{2, 3}, Evidence: "flat"},
		}},
	}}
	want := []probe.Finding{
		{Code: "no_read_timeout", Attempts: []int{2}, Evidence: "attempt 2 stalled", Probe: "probe-stall"},
		{Code: "no_jitter", Attempts: []int{1, 2}, Evidence: "identical", Probe: "probe-exhaust-1"},
		{Code: "no_backoff", Attempts: []int{2, 3}, Evidence: "flat", Probe: "probe-exhaust-1"},
	}
	if diff := cmp.Diff(want, findingsOf(sum)); diff != "" {
		t.Errorf("findingsOf() mismatch (-want +got):\n%s", diff)
	}
}
