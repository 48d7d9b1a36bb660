package probe

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFloorOf(t *testing.T) {
	exh := func(sample int, waits ...float64) Observation {
		return Observation{Fault: "529", Sample: sample, Served: 10, Attempts: len(waits) + 1, End: EndGaveUp, WaitsMs: waits, DeadlineMs: 120_000}
	}
	tests := []struct {
		name     string
		obs      []Observation
		scale    float64
		duration int64
		want     Floor
	}{
		{
			name:     "an SDK: the hang's deadline is the longest experiment",
			obs:      []Observation{exh(1, 500, 1000), exh(2, 450, 1050), {Fault: "hang", Attempts: 1, End: EndStopped, DeadlineMs: 15_000}, {Fault: "400", Attempts: 1, End: EndGaveUp}},
			duration: 17_000,
			want:     Floor{ExhaustionMs: 1500, ExperimentsMs: 15_000, ExperimentsBy: "hang: still running at its deadline, 15s", Ratio: 11.33, ExperimentsRatio: 1.13},
		},
		{
			name: "an agent: the exhaustion is",
			obs: []Observation{exh(1, 1000, 2000, 4000, 8000), exh(2, 1000, 2000, 4000, 8100),
				{Fault: "hang", Attempts: 2, End: EndGaveUp, FirstAttemptMs: 10_000, WaitsMs: []float64{1000}},
				{Fault: "429", Sample: 1, Outage: "429", Attempts: 5, End: EndGaveUp, WaitsMs: []float64{1000, 2000, 4000, 7000}}},
			duration: 32_000,
			want:     Floor{ExhaustionMs: 15_100, ExperimentsMs: 15_100, ExperimentsBy: "the exhaustion (529), 15.1s of waits", Ratio: 2.12, ExperimentsRatio: 2.12},
		},
		{
			name: "a Retry-After honoured in a ceiling round; checks and runs not run left out",
			obs: []Observation{exh(1, 400, 800),
				{Fault: "429 retry-after 28", Round: 2, RetryAfterMs: 28_000, Attempts: 2, End: EndSucceeded, WaitsMs: []float64{28_100}},
				{Fault: "529", Check: CheckShorter, Outage: "529", Attempts: 4, End: EndSucceeded, WaitsMs: []float64{90_000}},
				{Fault: "reset", End: EndNotRun, DeadlineMs: 120_000}},
			duration: 40_000,
			want:     Floor{ExhaustionMs: 1200, ExperimentsMs: 28_100, ExperimentsBy: "429 retry-after 28 (ceiling round 2): waited 28.1s", Ratio: 33.33, ExperimentsRatio: 1.42},
		},
		{
			name:     "waits in policy time are scaled to the wall clock",
			obs:      []Observation{exh(1, 10_000, 20_000)},
			scale:    0.1,
			duration: 6000,
			want:     Floor{ExhaustionMs: 3000, ExperimentsMs: 3000, ExperimentsBy: "the exhaustion (529), 3s of waits", Ratio: 2, ExperimentsRatio: 2},
		},
		{
			name:     "a client that never waits: no ratio",
			obs:      []Observation{{Fault: "529", Sample: 1, Attempts: 1, End: EndGaveUp}},
			duration: 5000,
			want:     Floor{},
		},
		{
			name:     "nothing observed",
			duration: 5000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FloorOf(tt.obs, tt.scale, tt.duration)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FloorOf (-want +got):\n%s", diff)
			}
		})
	}
}
