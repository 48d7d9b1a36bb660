package mock

import (
	"time"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/trace"
)

// decideLocked fixes the fault attempt n, which arrived then, meets: the
// scenario's attempts[n-1] while its attempts: list lasts, then, with an
// outage:, a draw from the phase of the attempt's policy time since
// attempt 1 arrived (scenario.Outage.Draw), else ok. It is recorded (met),
// so that the attempt's fault never changes once decided. e.mu is held.
//
// The outage's clock starts at the first attempt's arrival, not when the
// Env started: a client takes its own, varying time to start (an agent
// CLI loads for seconds), and counting from its first request makes the
// phase each attempt meets depend on the client's waits alone.
//
// In a fleet, k is the attempt's number among its client's own, which
// picks from attempts:; the outage's clock is the fleet's.
func (e *Env) decideLocked(n, k int, arrived time.Time) (scenario.Fault, *trace.OutageDraw) {
	sc := e.cfg.Scenario
	if n == 1 {
		e.outageT0 = arrived
	}
	var f scenario.Fault
	var draw *trace.OutageDraw
	switch {
	case k <= len(sc.Attempts):
		f = sc.Attempts[k-1]
	case sc.Outage != nil:
		at := e.policySince(arrived)
		var phase, entry int
		f, phase, entry = sc.Outage.Draw(sc.Outage.SeedOr(e.cfg.OutageSeed), n, at)
		draw = &trace.OutageDraw{Phase: phase, Entry: entry, AtMs: at.Milliseconds()}
	}
	e.met = append(e.met, f) // attempts are numbered in order, under e.mu
	return f, draw
}

// policySince is the policy time from the outage's start to t; 0 for a
// moment before it (an attempt numbered after attempt 1 whose first byte
// came earlier).
func (e *Env) policySince(t time.Time) time.Duration { return e.policyTime(e.outageT0, t) }

// policyTime is the policy time from t0 to t: wall time divided by the
// time scale (1 when unset); 0 when t is not after t0. The outage's clock
// and the account's buckets both run on it.
func (e *Env) policyTime(t0, t time.Time) time.Duration {
	wall := t.Sub(t0)
	if wall <= 0 {
		return 0
	}
	scale := e.cfg.TimeScale
	if scale <= 0 {
		scale = 1
	}
	return time.Duration(float64(wall) / scale)
}

// faultLocked returns the fault attempt n meets: the decided one once it
// arrived, else the planned one: attempts[n-1], or ok, which is all that
// matters of an outage attempt before it arrives (the mix has no kind that
// acts before its request: the loader rejects them). e.mu is held.
func (e *Env) faultLocked(n int) scenario.Fault {
	if i := n - 1 - e.metBase; n >= 1 && i >= 0 && i < len(e.met) {
		return e.met[i]
	}
	if a := e.cfg.Scenario.Attempts; n >= 1 && n <= len(a) {
		return a[n-1]
	}
	return scenario.Fault{}
}
