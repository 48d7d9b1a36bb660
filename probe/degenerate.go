package probe

import (
	"fmt"
	"math"
	"strings"

	"github.com/retrylab/retrylab/chaos/mock"
)

// Observations that say little: a client that never reached the mock (it
// exited at once, failed before its first request, or hung until it was
// killed), a run with one attempt or none, and journals whose figures do
// not add up (a file edited by hand, a client killed mid-write). Infer
// reads every one of them without failing and says what it saw.

// maxWaitMs bounds a wait Infer reads (11.6 days of policy time): larger,
// the figures are not milliseconds of a retry loop.
const maxWaitMs = 1e9

// saneAll is sane of each observation.
func saneAll(obs []Observation) []Observation {
	out := make([]Observation, len(obs))
	for i, o := range obs {
		out[i] = sane(o)
	}
	return out
}

// sane makes an observation safe to read: counts not negative, at most
// one wait per attempt after the first, every figure finite and inside
// [0, maxWaitMs], and one noise figure per wait (the run's NoiseMs for
// those missing).
func sane(o Observation) Observation {
	o.Attempts, o.Served = max(0, o.Attempts), max(0, o.Served)
	o.FirstAttemptMs, o.DeadlineMs, o.RetryAfterMs = max(0, o.FirstAttemptMs), max(0, o.DeadlineMs), max(0, o.RetryAfterMs)
	o.NoiseMs = clampMs(o.NoiseMs)
	if math.IsNaN(o.DateLeadMs) || math.IsInf(o.DateLeadMs, 0) {
		o.DateLeadMs = 0
	}
	o.DateLeadMs = max(-maxWaitMs, min(o.DateLeadMs, maxWaitMs))
	// A wait is the gap after a failed attempt before the next: n
	// attempts have at most n − 1 (more is a journal that does not add up).
	if n := max(0, o.Attempts-1); len(o.WaitsMs) > n {
		o.WaitsMs = o.WaitsMs[:n]
	}
	waits := make([]float64, len(o.WaitsMs))
	for i, w := range o.WaitsMs {
		waits[i] = clampMs(w)
	}
	o.WaitsMs = waits
	if len(o.WaitNoiseMs) > 0 {
		noise := make([]float64, len(waits))
		for i := range noise {
			noise[i] = o.NoiseMs
			if i < len(o.WaitNoiseMs) {
				noise[i] = clampMs(o.WaitNoiseMs[i])
			}
		}
		o.WaitNoiseMs = noise
	}
	return o
}

// clampMs reads a figure in ms: NaN is 0, the rest inside [0, maxWaitMs].
func clampMs(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return max(0, min(v, maxWaitMs))
}

// unreached says what a run whose client sent no probed attempt showed:
// how the client ended and the end of its stderr. "" when an attempt
// reached the mock or the run did not run.
func (o Observation) unreached() string {
	if o.Attempts > 0 || o.End == EndNotRun {
		return ""
	}
	s := "the client never reached the mock"
	switch {
	case o.WarmUpOnly:
		s = "the client sent its warm-up request only, no probed one"
	case len(o.Unserved) > 0:
		shown := o.Unserved
		if len(shown) > 3 {
			shown = append(shown[:3:3], fmt.Sprintf("… (%d in all)", len(o.Unserved)))
		}
		s = fmt.Sprintf("the client reached the mock on a path the format does not serve (%s, answered 404/405; the mock serves %s: is its base URL right?)",
			strings.Join(shown, ", "), mock.ServedRoutes())
	}
	if o.Client != "" {
		s += ": " + o.Client
	}
	if o.Stderr != "" {
		s += "; stderr: " + o.Stderr
	}
	return s
}

// unreachedAll says what the runs of obs showed when every one that ran
// saw no attempt (the first such run's account, and how many), else "".
func unreachedAll(obs []Observation) string {
	first, ran := "", 0
	for _, o := range obs {
		if o.End == EndNotRun {
			continue
		}
		why := o.unreached()
		if why == "" {
			return ""
		}
		ran++
		if first == "" {
			first = why
		}
	}
	if ran == 0 {
		return ""
	}
	if ran == 1 {
		return first
	}
	return fmt.Sprintf("%s (and so in each of the %d runs)", first, ran)
}

// noteUnreached marks a profile whose client reached the mock in no run:
// Unreached says what was seen, and every figure is inconclusive for that
// reason (the reasons worked out from zero attempts would only repeat it
// less clearly).
func (p *Profile) noteUnreached(obs []Observation) {
	why := unreachedAll(obs)
	if why == "" {
		return
	}
	p.Unreached = why
	for i := range p.Inconclusive {
		p.Inconclusive[i].Reason = why
	}
	for fig := range p.Confidence {
		p.Inconclusive = append(p.Inconclusive, Inconclusive{Figure: fig, Reason: why})
		delete(p.Confidence, fig)
	}
}

// dropNonFinite turns a figure that is not a finite number (waits of 0
// give ratios of 0/0) into an inconclusive one: a profile is JSON, which
// has no NaN, and the probe never guesses.
func (p *Profile) dropNonFinite() {
	bo := &p.Policy.Backoff
	for _, f := range []struct {
		fig string
		v   **float64
	}{{figInitial, &bo.InitialMs}, {figMultiplier, &bo.Multiplier}, {figMax, &bo.MaxMs}} {
		if *f.v != nil && !finite(**f.v) {
			*f.v = nil
			p.nonFinite(f.fig)
		}
	}
	if j := bo.Jitter; j != nil && (!finite(j.MinFactor) || !finite(j.MaxFactor)) {
		bo.Jitter = nil
		p.nonFinite(figJitter)
	}
}

func (p *Profile) nonFinite(fig string) {
	delete(p.Confidence, fig)
	p.Inconclusive = append(p.Inconclusive, Inconclusive{Figure: fig,
		Reason: "the waits give no finite figure (waits of 0 ms, or too few to divide)"})
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// learntNothing says why no decision and no figure could be told from the
// profile's runs, or "" when one was (or when Unreached already says why
// nothing was): how the runs ended, each way with its count and the first
// note. A profile of nothing must never read as a result (the CLI exits 2
// with this reason).
func learntNothing(p *Profile) string {
	if p.Unreached != "" || p.Nondeterministic != "" || len(p.Faults) == 0 {
		return ""
	}
	for _, f := range p.Faults {
		if f.Retried != nil {
			return ""
		}
	}
	pol, ra := p.Policy, p.Policy.RetryAfter
	if pol.MaxRetries != nil || pol.Backoff.InitialMs != nil || pol.TimeoutMs != nil ||
		ra.Seconds != nil || ra.Ms != nil || ra.HTTPDate != nil || ra.CeilingMs != nil {
		return ""
	}
	count, note := map[string]int{}, map[string]string{}
	var order []string
	for _, f := range p.Faults {
		if count[f.End] == 0 {
			order = append(order, f.End)
		}
		count[f.End]++
		if note[f.End] == "" {
			note[f.End] = f.Note
		}
	}
	parts := make([]string, 0, len(order))
	for _, end := range order {
		s := fmt.Sprintf("%d %s", count[end], end)
		if note[end] != "" {
			s += " (" + note[end] + ")"
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("no decision and no figure could be told from the %d runs: %s", len(p.Faults), strings.Join(parts, "; "))
}
