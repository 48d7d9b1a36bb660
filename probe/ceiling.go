package probe

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The Retry-After ceiling is bisected after the battery when the battery
// brackets it: a small Retry-After in seconds was honoured and the large
// one (3600s) was ignored or made the client give up. Each round probes
// CeilingPoints values between the bracket's ends, spaced evenly in log
// space and run in parallel; each value honoured raises the bracket's
// low end, each ignored one lowers its high end. A value the client would
// have to wait longer than --budget allows is never probed: a ceiling
// above the budget's reach is said inconclusive, with that reason. What a
// round probes is decided here (NextCeilingRound); the runner
// (probe/battery) runs it.
const (
	// CeilingPoints is how many values one round probes (in parallel).
	CeilingPoints = 3
	// ceilingSlack is the part of a ceiling probe's deadline that is not
	// the honoured wait: the client's start, the warm-up request, the
	// answer after the wait.
	ceilingSlack = 10 * time.Second
	// ceilingMargin is how much longer than the value an honoured wait may
	// be: Claude Code adds up to 25%.
	ceilingMargin = 1.25
	// ceilingPinned is the bracket hi/lo at which bisecting stops: the
	// ceiling is known to 10%.
	ceilingPinned = 1.1
	// ceilingUsable is the widest bracket hi/lo for which ceilingMs is
	// reported (confidence low above 1.5); wider is inconclusive.
	ceilingUsable = 2.0
)

// CeilingReach is the largest Retry-After (whole seconds, in ms of policy
// time) a ceiling probe may carry: the client honouring it must still
// finish inside budget. 0: the budget allows none above a second.
func CeilingReach(budget time.Duration, scale float64) int64 {
	if scale <= 0 {
		scale = 1
	}
	s := math.Floor(ms(budget-ceilingSlack) / (ceilingMargin * scale) / 1000)
	if s < 1 {
		return 0
	}
	return int64(s) * 1000
}

// CeilingDeadline is the kill deadline of the probe of a Retry-After of v
// ms (policy time): the longest honoured wait and the slack, at most budget.
func CeilingDeadline(v int64, scale float64, budget time.Duration) time.Duration {
	if scale <= 0 {
		scale = 1
	}
	d := time.Duration(float64(v)*scale*ceilingMargin)*time.Millisecond + ceilingSlack
	return min(d, budget).Round(time.Second)
}

// nextCeiling returns the values of the next round, in ms, whole seconds,
// strictly between lo and hi, at most n of them, spaced evenly in log
// space. None is above reach; when hi is above it, reach itself is the
// last value (whether the ceiling is within the budget's reach is then
// the first thing to learn).
func nextCeiling(lo, hi, reach int64, n int) []int64 {
	if lo <= 0 || hi <= lo || n <= 0 {
		return nil
	}
	top, steps := float64(hi), float64(n+1)
	if hi > reach {
		top, steps = float64(reach), float64(n)
	}
	if top <= float64(lo) {
		return nil
	}
	var out []int64
	for i := 1; i <= n; i++ {
		v := float64(lo) * math.Pow(top/float64(lo), float64(i)/steps)
		s := int64(math.Round(v/1000)) * 1000
		if s > lo && s < hi && s <= max(reach, lo) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// NextCeilingRound decides the next round of the bisection from the
// profile so far: the values to probe, or none and why it stops. round is
// the 1-based round about to run, rounds the most allowed, reach the
// largest value the budget allows (CeilingReach).
func NextCeilingRound(ra RetryAfter, reach int64, round, rounds int) ([]int64, string) {
	br := ra.CeilingBracketMs
	switch {
	case rounds <= 0:
		return nil, "off (--ceiling-rounds 0)"
	case len(br) != 2:
		return nil, "" // the battery did not bracket it: ceilingReason says why
	case br[0] >= br[1]:
		return nil, "stopped: the answers are not monotone"
	case float64(br[1]) <= ceilingPinned*float64(br[0]) || br[1]-br[0] <= 1000:
		return nil, fmt.Sprintf("done after %d round(s)", round-1)
	case round > rounds:
		return nil, fmt.Sprintf("stopped after %d round(s) (--ceiling-rounds)", rounds)
	}
	vs := nextCeiling(br[0], br[1], reach, CeilingPoints)
	if len(vs) == 0 {
		return nil, fmt.Sprintf("stopped: --budget allows Retry-After probes up to %s (an honoured wait of up to %.0f%% more, plus %s for the client's start, must fit in it); raise --budget to bisect above",
			FormatMs(float64(reach)), (ceilingMargin-1)*100, ceilingSlack)
	}
	return vs, ""
}

// CeilingFault is the fault of a ceiling probe of v ms.
func CeilingFault(prov Provider, v int64) Fault {
	f := status(prov.Name, 429)
	f.Name = fmt.Sprintf("429 retry-after %d", v/1000)
	f.Group, f.RetryAfterMs = "ceiling", v
	f.Attempt = fmt.Sprintf(`{status: 429, retryAfter: "%d"}`, v/1000)
	return f
}

// ceilingSide is where a probed value lies against the ceiling.
type ceilingSide int

const (
	sideUnknown ceilingSide = iota
	sideBelow               // honoured (or still waiting for it when stopped)
	sideAbove               // ignored (the backoff) or the client gave up
)

// sideOf reads a ceiling probe: which side of the ceiling its value is on.
func sideOf(o Observation, fit Fit) (ceilingSide, string) {
	v := float64(o.RetryAfterMs)
	switch {
	case o.End == EndNotRun:
		return sideUnknown, "not run: " + o.Note
	case o.Attempts == 1 && o.End == EndStopped:
		return sideBelow, fmt.Sprintf("%s: still waiting when stopped at %s", FormatMs(v), FormatMs(float64(o.DeadlineMs)))
	case o.Attempts == 1:
		return sideAbove, fmt.Sprintf("%s: gave up at once", FormatMs(v))
	case o.Attempts < 1:
		return sideUnknown, fmt.Sprintf("%s: no attempt reached the mock", FormatMs(v))
	}
	h, _, why := honoured(o, v, fit)
	switch {
	case h == nil:
		return sideUnknown, FormatMs(v) + ": " + why
	case *h:
		return sideBelow, fmt.Sprintf("%s: honoured (waited %s)", FormatMs(v), FormatMs(o.WaitsMs[0]))
	}
	return sideAbove, fmt.Sprintf("%s: ignored (waited %s)", FormatMs(v), FormatMs(o.WaitsMs[0]))
}

// inferCeiling pins the ceiling from the battery's bracket (the seconds
// value honoured, the large one not) and the bisection's probes. ceilingMs
// is the smallest value seen not honoured, when the bracket is narrow
// enough; its confidence comes from the bracket's width.
func (p *Profile) inferCeiling(prov Provider, ceil []Observation, fit Fit) {
	const fig = "policy.retryAfter.ceilingMs"
	ra := &p.Policy.RetryAfter
	secs := secondsFault(prov)
	if secs.RetryAfterMs <= 0 || ra.Seconds == nil || !*ra.Seconds || (ra.Large != "backoff" && ra.Large != "gave up") {
		p.add(fig, "", ceilingReason(ra))
		return
	}
	lo, hi := secs.RetryAfterMs, ra.LargeMs
	var lines []string
	var below, above []int64
	for _, o := range ceil {
		side, why := sideOf(o, fit)
		lines = append(lines, why)
		switch side {
		case sideBelow:
			below = append(below, o.RetryAfterMs)
			lo = max(lo, o.RetryAfterMs)
		case sideAbove:
			above = append(above, o.RetryAfterMs)
			hi = min(hi, o.RetryAfterMs)
		}
	}
	ra.CeilingBracketMs = []int64{lo, hi}
	seen := fmt.Sprintf("%s honoured, %s %s", FormatMs(float64(lo)), FormatMs(float64(hi)), map[string]string{"backoff": "ignored", "gave up": "not waited"}[ra.Large])
	if len(lines) > 0 {
		seen += fmt.Sprintf(" (%d bisection probe(s): %s)", len(ceil), joinAll(lines))
	}
	if lo >= hi {
		mixed := fmt.Sprintf("honoured up to %s but not %s", FormatMs(float64(slices.Max(below))), FormatMs(float64(slices.Min(above))))
		p.add(fig, "", "the answers are not monotone: "+mixed+"; "+seen)
		return
	}
	width := float64(hi) / float64(lo)
	if len(ceil) == 0 || width > ceilingUsable {
		p.add(fig, "", fmt.Sprintf("between %s and %s: %s", FormatMs(float64(lo)), FormatMs(float64(hi)), seen))
		return
	}
	ra.CeilingMs = ptr(hi)
	level := Low
	switch {
	case width <= ceilingPinned || hi-lo <= 1000:
		level = High
	case width <= 1.5:
		level = Medium
	}
	p.add(fig, level, fmt.Sprintf("bracket [%s, %s]: %s", FormatMs(float64(lo)), FormatMs(float64(hi)), seen))
}

// secondsFault is the battery's Retry-After in seconds ("429 retry-after 3"):
// the low end of the bracket when it is honoured.
func secondsFault(prov Provider) Fault {
	for _, f := range prov.Faults {
		if f.Group == "retry-after" && !f.HTTPDate && !f.Long && !strings.Contains(f.Name, "retry-after-ms") {
			return f
		}
	}
	return Fault{}
}

// NoteCeilingStop adds why the bisection stopped to the ceiling's reason
// when it is left inconclusive.
func (p *Profile) NoteCeilingStop(why string) {
	if why == "" {
		return
	}
	for i, in := range p.Inconclusive {
		if in.Figure == "policy.retryAfter.ceilingMs" {
			p.Inconclusive[i].Reason += "; bisection " + why
		}
	}
}

func joinAll(xs []string) string {
	out := ""
	for _, x := range xs {
		out = join(out, x)
	}
	return out
}
