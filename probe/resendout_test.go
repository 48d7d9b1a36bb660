package probe

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLearntResends: which decision probes the learnt policy writes as a
// resends entry (sent again at once), and how often.
func TestLearntResends(t *testing.T) {
	backoff := Backoff{InitialMs: ptr(500.0), Jitter: &Jitter{MinFactor: 1, MaxFactor: 1.25}}
	fault := func(name string, end string, waits, noise []int64) FaultResult {
		return FaultResult{Fault: name, Retried: ptr(len(waits) > 0), Attempts: len(waits) + 1, WaitsMs: waits, NoiseMs: noise, End: end}
	}
	tests := []struct {
		name   string
		bo     Backoff
		faults []FaultResult
		want   string
	}{
		{name: "a 400 and a 404 at once, an in-stream error at once, a 503 backed off", bo: backoff,
			faults: []FaultResult{fault("400", EndSucceeded, []int64{8}, []int64{6}), fault("404", EndSucceeded, []int64{217}, []int64{320}),
				fault("sse overloaded_error", EndSucceeded, []int64{12}, []int64{18}), fault("503", EndSucceeded, []int64{560}, []int64{5})},
			want: "# resends: statuses 400, 404 sent again at once, 1 time(s); then it succeeded, so more re-sends are not known (--per-fault counts them)\n" +
				"# resends: in-stream failures overloaded sent again at once, 1 time(s); then it succeeded, so more re-sends are not known (--per-fault counts them)\n" +
				"resends:\n  - {statuses: [400, 404], maxRetries: 1, kind: none}\n  - {streamed: true, types: [overloaded], maxRetries: 1, kind: none}\n"},
		{name: "--per-fault: five re-sends, then it gave up", bo: backoff,
			faults: []FaultResult{fault("400", EndGaveUp, []int64{5, 3, 4, 6, 2}, nil)},
			want:   "# resends: statuses 400 sent again at once, 5 time(s)\nresends:\n  - {statuses: [400], maxRetries: 5, kind: none}\n"},
		{name: "a wait near the backoff's is not at once", bo: Backoff{InitialMs: ptr(200.0)},
			faults: []FaultResult{fault("400", EndSucceeded, []int64{120}, []int64{5})}},
		{name: "no backoff learnt: 250 ms at most, 50 ms past the noise", bo: Backoff{},
			faults: []FaultResult{fault("400", EndSucceeded, []int64{240}, []int64{200}), fault("404", EndSucceeded, []int64{90}, []int64{10})},
			want:   "# resends: statuses 400 sent again at once, 1 time(s); then it succeeded, so more re-sends are not known (--per-fault counts them)\nresends:\n  - {statuses: [400], maxRetries: 1, kind: none}\n"},
		{name: "a 429 with Retry-After, a reset and a header probe are not written", bo: backoff,
			faults: []FaultResult{fault("429 retry-after 3", EndSucceeded, []int64{3}, nil), fault("reset", EndSucceeded, []int64{3}, nil),
				fault("400 x-should-retry true", EndSucceeded, []int64{3}, nil)}},
		{name: "not retried", bo: backoff, faults: []FaultResult{fault("400", EndGaveUp, nil, nil)}},
	}
	prov, _ := LookupProvider("anthropic")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Profile{Faults: tt.faults, Policy: Policy{Backoff: tt.bo}}
			if diff := cmp.Diff(tt.want, resendsYAML(learntResends(p, prov))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
