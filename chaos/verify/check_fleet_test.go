package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/fleet"
	"github.com/retrylab/retrylab/chaos/scenario"
)

func TestFleetCheck(t *testing.T) {
	t.Parallel()
	le := func(v float64) *scenario.Comparison { return &scenario.Comparison{Op: "<=", Value: v} }
	ge := func(v float64) *scenario.Comparison { return &scenario.Comparison{Op: ">=", Value: v} }
	n := func(v int) *int { return &v }
	f64 := func(v float64) *float64 { return &v }
	i64 := func(v int64) *int64 { return &v }
	// figures: a fleet of 10, 10 requests; retries and synchronized as given.
	figs := func(attempts, synced, retries int) fleet.Figures {
		f := fleet.Figures{Clients: 10, Survived: 10, Requests: 10, Attempts: attempts,
			Amplification: float64(attempts) / 10, Retries: retries, Synchronized: synced, SynchronizedWide: synced}
		if retries > 0 {
			f.Synchrony = f64(float64(synced) / float64(retries))
		}
		return f
	}
	noisy := func(f fleet.Figures, wide int) fleet.Figures {
		f.SynchronizedWide = wide
		return f
	}
	tests := []struct {
		name  string
		ex    scenario.FleetExpect
		f     fleet.Figures
		state string
		got   string // in Got
	}{
		{"all met", scenario.FleetExpect{Survived: n(10), Amplification: le(1.5), Synchrony: le(0.3)}, figs(12, 0, 2), StatePass, "survived 10 of 10"},
		{"a client failed", scenario.FleetExpect{Survived: n(10)}, fleet.Figures{Clients: 10, Survived: 9}, StateFail, "1 clients failed"},
		// 19 of 20 retries in lockstep: the lower bound is far above 0.3.
		{"lockstep against a spread bound", scenario.FleetExpect{Synchrony: le(0.3)}, figs(30, 19, 20), StateFail, "synchrony <= 0.3 is not met"},
		// 2 of 4 retries: 0.5 > 0.3, but 4 samples cannot show it.
		{"few samples: inconclusive", scenario.FleetExpect{Synchrony: le(0.3)}, figs(14, 2, 4), StateInconclusive, "not beyond the 95% bound"},
		{"spread against a lockstep bound", scenario.FleetExpect{Synchrony: ge(0.9)}, figs(30, 5, 20), StateFail, "synchrony >= 0.9"},
		{"lockstep bound met", scenario.FleetExpect{Synchrony: ge(0.9)}, figs(30, 19, 20), StatePass, "19 of 20"},
		// 40 attempts for 10 requests (4×): 30 retries of 40 attempts,
		// far above the 1/3 that amplification 1.5 allows.
		{"storm against an amplification bound", scenario.FleetExpect{Amplification: le(1.5)}, figs(40, 0, 30), StateFail, "40 attempts ÷ 10 requests"},
		// 14 of 20 in lockstep fails >= 0.9 (upper bound 0.87); with the
		// window widened by the noise 19 are: inconclusive, not fail.
		{"noise hides lockstep: inconclusive", scenario.FleetExpect{Synchrony: ge(0.9)}, noisy(figs(30, 14, 20), 19), StateInconclusive, "scheduling noise"},
		{"noise does not hide it: fail", scenario.FleetExpect{Synchrony: ge(0.9)}, noisy(figs(30, 14, 20), 15), StateFail, "synchrony >= 0.9 is not met"},
		// Noise does not excuse lockstep against an upper bound.
		{"noise and an upper bound: fail", scenario.FleetExpect{Synchrony: le(0.3)}, noisy(figs(30, 19, 20), 20), StateFail, "synchrony <= 0.3 is not met"},
		{"no retries to measure synchrony", scenario.FleetExpect{Synchrony: ge(0.9)}, figs(10, 0, 0), StateFail, "no retries"},
		{"no retries: a spread bound holds", scenario.FleetExpect{Synchrony: le(0.3)}, figs(10, 0, 0), StatePass, "no retries"},
		{"metastable", scenario.FleetExpect{RecoveredWithin: scenario.Duration(20 * time.Second)}, fleet.Figures{}, StateFail, "never recovered"},
		{"recovered in time", scenario.FleetExpect{RecoveredWithin: scenario.Duration(20 * time.Second)}, fleet.Figures{RecoveryMs: i64(19_999)}, StatePass, "recovered in 19.999s"},
		{"recovered late", scenario.FleetExpect{RecoveredWithin: scenario.Duration(20 * time.Second)}, fleet.Figures{RecoveryMs: i64(20_001)}, StateFail, "longer than 20s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := FleetCheck(&tt.ex, tt.f)
			if c.Name != "fleet" || c.State != tt.state || c.Passed != (tt.state == StatePass) || !strings.Contains(c.Got, tt.got) {
				t.Errorf("FleetCheck() = %+v; want state %s with %q in got", c, tt.state, tt.got)
			}
		})
	}
}
