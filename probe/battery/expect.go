package battery

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// The estimate said before the probe starts (estimate.go) is an upper
// bound: every scenario running to its kill deadline. It is honest and of
// little use: agent.py's battery is bounded by 21m30s and takes 30s. The
// expectation here is measured instead: each scenario is timed (chaos
// Runner.OnScenario), and what is still to run is expected to take as long
// as the scenarios of its kind that finished. The kinds:
//
//   - decision probes (one fault, then ok): the mean of those finished;
//   - exhaustion runs: the mean of those finished (their backoff waits,
//     the client's start and its give-up);
//   - long probes (the hang, Retry-After 3600s): the mean of those
//     finished, else their short deadline (they are bounded by it);
//   - ceiling probes of Retry-After V: V in wall time (V × time scale, the
//     value honoured), plus the decision probes' mean (the client's start
//     and one request), at most the probe's deadline.
//
// A scenario running is expected to take its kind's time, less what it
// has run (never less than 0); those waiting are placed on the slots in
// order as each frees (chaos starts them so). Until a kind still to run
// has a finished scenario, there is no expectation: only the bound is
// said. Phases not yet started (the exhaustion again, ceiling rounds) are
// not in it: each adds its scenarios when it starts.

// Kinds of scenario, for the expectation.
const (
	kindDecision   = "decision probe"
	kindExhaustion = "exhaustion run"
	kindLong       = "long probe"
	kindCeiling    = "ceiling probe"
)

// job is one scenario as the expectation sees it.
type job struct {
	kind     string
	deadline time.Duration // its kill deadline, wall time
	// wait is what a ceiling probe waits when the value is honoured,
	// wall time.
	wait          time.Duration
	started, done time.Time // zero: not yet
}

// jobOf is the job of probe p at time scale scale.
func jobOf(p Probe, scale float64) job {
	j := job{kind: kindDecision, deadline: p.Deadline}
	switch {
	case p.Sample > 0 || p.Outage != "":
		j.kind = kindExhaustion
	case p.Round > 0:
		j.kind = kindCeiling
		j.wait = time.Duration(float64(p.Fault.RetryAfterMs) * scale * float64(time.Millisecond))
	case p.Fault.Long:
		j.kind = kindLong
	}
	return j
}

// expectation is when the probe expects to end, and what that is based on.
type expectation struct {
	End   time.Time
	Basis string
}

// expectEnd works out when jobs end, run parallel at a time, as of now:
// a pure function of its arguments (no clock). ok is false while some
// kind still to run has no finished job to measure it by; why then says
// which.
func expectEnd(now time.Time, jobs []job, parallel int) (e expectation, ok bool, why string) {
	sum, n := map[string]time.Duration{}, map[string]int{}
	for _, j := range jobs {
		if !j.done.IsZero() && !j.started.IsZero() {
			sum[j.kind] += j.done.Sub(j.started)
			n[j.kind]++
		}
	}
	mean := func(k string) (time.Duration, bool) {
		if n[k] == 0 {
			return 0, false
		}
		return sum[k] / time.Duration(n[k]), true
	}
	expect := func(j job) (time.Duration, bool) {
		if m, ok := mean(j.kind); ok && j.kind != kindCeiling {
			return m, true
		}
		switch j.kind {
		case kindLong:
			return j.deadline, true
		case kindCeiling:
			m, ok := mean(kindDecision)
			return min(j.wait+m, j.deadline), ok
		}
		return 0, false
	}
	slots := []time.Duration{}
	var pending []time.Duration
	for _, j := range jobs {
		if !j.done.IsZero() {
			continue
		}
		d, ok := expect(j)
		if !ok {
			return expectation{}, false, "the first " + j.kind + " to finish"
		}
		if j.started.IsZero() {
			pending = append(pending, d)
			continue
		}
		slots = append(slots, max(d-now.Sub(j.started), 0))
	}
	for len(slots) < max(parallel, 1) {
		slots = append(slots, 0)
	}
	for _, d := range pending {
		slices.Sort(slots)
		slots[0] += d
	}
	end := time.Duration(0)
	for _, s := range slots {
		end = max(end, s)
	}
	return expectation{End: now.Add(end), Basis: basisOf(sum, n)}, true, ""
}

// basisOf says what the expectation was measured from.
func basisOf(sum map[string]time.Duration, n map[string]int) string {
	var parts []string
	for _, k := range []string{kindExhaustion, kindDecision, kindLong, kindCeiling} {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s(s) finished, %s each on average", n[k], k, fmtTenths(sum[k]/time.Duration(n[k]))))
		}
	}
	return strings.Join(parts, "; ")
}

// fmtTenths renders a duration to a tenth of a second: "15.2s".
func fmtTenths(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }

// pace times the scenarios of a probe as chaos runs them and works out
// the expectation. It is safe for concurrent use.
type pace struct {
	mu       sync.Mutex
	now      func() time.Time
	parallel int
	jobs     []job
	byName   map[string]int
	said     bool // the first expectation was said
}

func newPace(now func() time.Time, parallel int) *pace {
	return &pace{now: now, parallel: parallel, byName: map[string]int{}}
}

// add plans the probes of a phase about to run.
func (pc *pace) add(ps []Probe, scale float64) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for _, p := range ps {
		pc.byName[p.Scenario.Name] = len(pc.jobs)
		pc.jobs = append(pc.jobs, jobOf(p, scale))
	}
}

// mark records that scenario name started or ended (chaos.Runner.OnScenario).
// first is true once, when the first expectation can be said.
func (pc *pace) mark(name string, done bool) (e expectation, first bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	i, ok := pc.byName[name]
	if !ok {
		return expectation{}, false
	}
	if done {
		pc.jobs[i].done = pc.now()
	} else {
		pc.jobs[i].started, pc.jobs[i].done = pc.now(), time.Time{}
	}
	e, ok, _ = expectEnd(pc.now(), pc.jobs, pc.parallel)
	if !ok || pc.said {
		return e, false
	}
	pc.said = true
	return e, true
}

// expect is the expectation as of now.
func (pc *pace) expect() (expectation, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	e, ok, _ := expectEnd(pc.now(), pc.jobs, pc.parallel)
	return e, ok
}

// saidOnce reports whether the first expectation was said.
func (pc *pace) saidOnce() bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.said
}
