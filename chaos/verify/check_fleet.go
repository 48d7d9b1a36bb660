package verify

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/fleet"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/trace/analyze"
)

// FleetCheck is the check named fleet: expect.fleet against the fleet's
// figures. Survived and recoveredWithin are exact counts and times. The
// rates are gated as analyze's alerts are (analyze.ExactBounds at
// analyze.DefaultConfidence): a bound fails when the one-sided exact
// binomial bound of the rate is past it, so that a fleet of few retries
// does not fail on noise; it is inconclusive when only the measured rate
// is. Synchrony is the proportion Synchronized of Retries; amplification
// A = attempts ÷ requests is gated as the proportion of retries among
// attempts, 1 − 1/A, which grows with it.
func FleetCheck(ex *scenario.FleetExpect, f fleet.Figures) Check {
	c := Check{Name: "fleet", Where: "server.jsonl (every client's attempts)"}
	var want, got, bad, unsure []string
	noisy := false
	if ex.Survived != nil {
		want = append(want, fmt.Sprintf("survived >= %d", *ex.Survived))
		got = append(got, fmt.Sprintf("survived %d of %d", f.Survived, f.Clients))
		if f.Survived < *ex.Survived {
			bad = append(bad, fmt.Sprintf("%d clients failed", f.Clients-f.Survived))
		}
	}
	if a := ex.Amplification; a != nil {
		want = append(want, "amplification "+a.String())
		got = append(got, fmt.Sprintf("amplification %.4g (%d attempts ÷ %d requests)", f.Amplification, f.Attempts, f.Requests))
		share := func(v float64) float64 { return 1 - 1/math.Max(v, 1) }
		switch gate(*a, f.Amplification, share(a.Value), int64(f.Attempts-f.Requests), int64(f.Attempts)) {
		case StateFail:
			bad = append(bad, "amplification "+a.String()+" is not met")
		case StateInconclusive:
			unsure = append(unsure, "amplification")
		}
	}
	if s := ex.Synchrony; s != nil {
		want = append(want, "synchrony "+s.String())
		v := 0.0
		if f.Synchrony != nil {
			v = *f.Synchrony
			got = append(got, fmt.Sprintf("synchrony %.4g (%d of %d retries)", v, f.Synchronized, f.Retries))
		} else {
			got = append(got, "synchrony: no retries")
		}
		switch {
		case f.Retries == 0 && !s.Holds(0):
			bad = append(bad, "no retries to measure synchrony on")
		case f.Retries > 0:
			st := gate(*s, v, s.Value, int64(f.Synchronized), int64(f.Retries))
			if st == StateFail && !s.Below() {
				// The machine's noise delays arrivals, each its own way:
				// it spreads clients that retry together. A lower bound
				// not met fails only if it is not met either with the
				// window widened by the noise measured around the run.
				// (Noise that bunched spread clients would need a stall
				// of the whole machine: an upper bound is not adjusted.)
				k := f.SynchronizedWide
				if adj := float64(k) / float64(f.Retries); gate(*s, adj, s.Value, int64(k), int64(f.Retries)) != StateFail {
					st = StateInconclusive
					noisy = true
				}
			}
			switch st {
			case StateFail:
				bad = append(bad, "synchrony "+s.String()+" is not met")
			case StateInconclusive:
				unsure = append(unsure, "synchrony")
			}
		}
	}
	if w := ex.RecoveredWithin.D(); w > 0 {
		want = append(want, "recovered within "+w.String())
		if f.RecoveryMs == nil {
			got = append(got, "never recovered (metastable)")
			bad = append(bad, "the fleet never recovered")
		} else {
			r := time.Duration(*f.RecoveryMs) * time.Millisecond
			got = append(got, "recovered in "+r.String())
			if r > w {
				bad = append(bad, "recovery took longer than "+w.String())
			}
		}
	}
	c.Want, c.Got = strings.Join(want, ", "), strings.Join(got, ", ")
	switch {
	case len(bad) > 0:
		c.Got += ": " + strings.Join(bad, "; ")
		c.State = StateFail
		c.Hint = "fleet figures are in result.json's fleet; synchrony and amplification fail only when their exact bound at 95% is past the limit"
	case len(unsure) > 0:
		c.State = StateInconclusive
		c.Got += ": " + strings.Join(unsure, ", ") + " past the limit, but not beyond the 95% bound of so few samples"
		if noisy {
			c.Got += ", or not with the window moved by the scheduling noise measured around the run"
			c.Hint = "the machine's scheduling noise moved the clients' arrivals by as much as the 50ms synchrony window: run fewer scenarios at once (chaos run --parallel), or raise the scenario's timeScale"
		}
	default:
		c.State, c.Passed = StatePass, true
	}
	return c
}

// gate decides a rate bound as analyze's alerts decide theirs: v is the
// measured figure, t the threshold as a proportion, k of n the counts
// behind the proportion. The bound fails when the one-sided exact bound is
// past the threshold, is inconclusive when only the figure is, else
// passes.
func gate(c scenario.Comparison, v, t float64, k, n int64) string {
	if c.Holds(v) {
		return StatePass
	}
	lo, hi := analyze.ExactBounds(k, n, analyze.DefaultConfidence)
	if c.Below() && lo > t || !c.Below() && hi < t {
		return StateFail
	}
	// Strict bounds met exactly by the edge of the interval are no proof.
	return StateInconclusive
}
