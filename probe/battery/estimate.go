package battery

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/retrylab/retrylab/probe"
)

// scenarioOverhead is the time a scenario takes beyond its client's kill
// deadline, at most: its mock and proxy set up, the client's process
// group reaped, its journal read (milliseconds on an idle machine).
const scenarioOverhead = 2 * time.Second

// estimate works out, before anything runs, an upper bound on the wall
// time of the pilot (one probe alone, unless o.NoWarmUp: warmup.go) and
// of the battery ps run parallel scenarios at a time (the slots that
// --parallel and the bound on external clients leave), followed by the
// exhaustion runs once more (the probe repeats them when their waits were
// unreadable) and by o.CeilingRounds rounds of the Retry-After ceiling.
// prior is the client's earlier policy (--against), or nil. It is a pure
// function of its arguments.
func estimate(ps []Probe, o Options, parallel int, prior *probe.Policy) probe.PlanEstimate {
	o = o.withDefaults()
	parallel = max(1, min(parallel, len(ps)))
	e := probe.PlanEstimate{Scenarios: len(ps), Parallel: parallel, BudgetMs: o.Budget.Milliseconds(), Unknown: []string{}}
	var ds []time.Duration
	hang, ceiling := time.Duration(0), false
	for _, p := range ps {
		// With a start grace, a client runs up to the grace before its
		// first request, then its deadline.
		ds = append(ds, p.Deadline+o.StartGrace)
		e.LongestMs = max(e.LongestMs, (p.Deadline + o.StartGrace).Milliseconds())
		if p.Fault.Name == "hang" {
			hang = p.Deadline
		}
		ceiling = ceiling || (p.Fault.Group == "retry-after" && p.Fault.Long)
	}
	battery := makespan(ds, parallel)
	total := battery
	var parts []string
	if !o.NoWarmUp && len(ps) > 0 {
		// The pilot runs alone first (warmup.go); counted again in the
		// battery, where it runs once more when it turned the warm-up off.
		pilot := ps[pilotIndex(ps)].Deadline + o.StartGrace + scenarioOverhead
		total += pilot
		parts = append(parts, fmt.Sprintf("one probe alone first, to tell whether the client makes the two requests it is told: %s", fmtDur(pilot)))
	}
	stopped := "each stopped at its deadline"
	if o.StartGrace > 0 {
		stopped = fmt.Sprintf("each stopped at its deadline after its first request, which may take %s to come", fmtDur(o.StartGrace))
	}
	parts = append(parts, fmt.Sprintf("%d scenarios, %d at a time, %s (longest %s) plus %s of set-up: at most %s (Σ/P + (1 − 1/P) × longest)",
		len(ps), parallel, stopped, fmtDur(time.Duration(e.LongestMs)*time.Millisecond), scenarioOverhead, fmtDur(battery)))
	again := makespan(repeatDur(o.Budget+o.StartGrace, o.Samples), min(parallel, o.Samples))
	total += again
	parts = append(parts, fmt.Sprintf("the %d exhaustion runs once more if their waits were unreadable: %s", o.Samples, fmtDur(again)))
	reach := probe.CeilingReach(o.Budget, o.TimeScale)
	if ceiling && o.CeilingRounds > 0 && reach > 0 {
		dl := probe.CeilingDeadline(reach, o.TimeScale, o.Budget)
		round := makespan(repeatDur(dl+o.StartGrace, probe.CeilingPoints), min(parallel, probe.CeilingPoints))
		total += time.Duration(o.CeilingRounds) * round
		parts = append(parts, fmt.Sprintf("up to %d Retry-After ceiling round(s) of %d probes stopped at %s: %s each", o.CeilingRounds, probe.CeilingPoints, fmtDur(dl), fmtDur(round)))
	}
	if n := survivalCheckCount(ps, o); n > 0 {
		// Beside the first ceiling round or alone: counted as if alone.
		checks := makespan(repeatDur(o.Budget+o.StartGrace, n), min(parallel, n))
		total += checks
		parts = append(parts, fmt.Sprintf("up to %d outage(s) checking the survival figures, each stopped within --budget: %s", n, fmtDur(checks)))
	}
	e.EstimatedMs = total.Milliseconds()
	e.Bound = strings.Join(parts, "; ")
	e.Unknown = unknownPastBudget(o, prior, &e, hang, ceiling, reach)
	return e
}

// survivalCheckCount is how many outages may check the survival figures
// of the kinds ps measures: two per kind (probe.SurvivalChecks).
func survivalCheckCount(ps []Probe, o Options) int {
	kinds := map[string]bool{}
	for _, p := range ps {
		if p.Outage != "" {
			kinds[p.Outage] = true
		}
	}
	for _, k := range probe.OutageKinds(o.Provider) {
		if k.FromExhaustion && slices.ContainsFunc(ps, func(p Probe) bool { return p.Sample > 0 && p.Outage == "" }) {
			kinds[k.Key] = true
		}
	}
	return 2 * len(kinds)
}

// unknownPastBudget lists the figures the plan's deadlines leave unknown
// for a client slower than them.
func unknownPastBudget(o Options, prior *probe.Policy, e *probe.PlanEstimate, hang time.Duration, ceiling bool, reach int64) []string {
	var out []string
	exh := fmt.Sprintf("policy.maxRetries and policy.backoff.maxMs, if the client is still retrying its %d failures at --budget %s", o.Repeat, fmtDur(o.Budget))
	if prior != nil {
		if w, ok := exhaustionMs(*prior, o.Repeat); ok {
			expected := int64(math.Round(w * o.TimeScale))
			e.ExpectedExhaustionMs = &expected
			verdict := "within it"
			if time.Duration(*e.ExpectedExhaustionMs)*time.Millisecond > o.Budget {
				verdict = "more than the budget: raise --budget"
			}
			exh += fmt.Sprintf(" (the earlier profile's waits add up to %s: %s)", fmtDur(time.Duration(*e.ExpectedExhaustionMs)*time.Millisecond), verdict)
		}
	}
	out = append(out, exh)
	if hang > 0 {
		out = append(out, fmt.Sprintf("policy.timeoutMs, if the client waits on a hung attempt longer than %s", fmtDur(hang)))
	}
	switch {
	case !ceiling:
	case o.CeilingRounds <= 0:
		out = append(out, "policy.retryAfter.ceilingMs: not bisected (--ceiling-rounds 0)")
	case reach == 0:
		out = append(out, fmt.Sprintf("policy.retryAfter.ceilingMs: --budget %s is too short to bisect it", fmtDur(o.Budget)))
	default:
		out = append(out, fmt.Sprintf("policy.retryAfter.ceilingMs, if it is above %s (the largest Retry-After whose wait fits in --budget)", probe.FormatMs(float64(reach))))
	}
	return out
}

// exhaustionMs is the sum of the waits of one exhaustion run of repeat
// failures by pol (at the top of its jitter band), policy time; false
// when pol does not say enough.
func exhaustionMs(pol probe.Policy, repeat int) (float64, bool) {
	b := pol.Backoff
	if pol.MaxRetries == nil || b.InitialMs == nil || b.Multiplier == nil {
		return 0, false
	}
	top := 1.0
	if b.Jitter != nil {
		top = max(top, b.Jitter.MaxFactor)
	}
	sum := 0.0
	for k := range min(*pol.MaxRetries, repeat) {
		w := *b.InitialMs * math.Pow(*b.Multiplier, float64(k))
		if b.MaxMs != nil {
			w = min(w, *b.MaxMs)
		}
		sum += w * top
	}
	return sum, true
}

// makespan bounds the wall time of jobs of at most the durations ds (plus
// scenarioOverhead each) started in order on p slots as each frees: all at
// once when they fit, else Graham's bound for list scheduling,
// Σ/p + (1 − 1/p) × longest, which holds whatever the jobs' real lengths.
func makespan(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	p = max(p, 1)
	var sum, longest time.Duration
	for _, d := range ds {
		sum += d + scenarioOverhead
		longest = max(longest, d+scenarioOverhead)
	}
	if len(ds) <= p {
		return longest
	}
	return sum/time.Duration(p) + longest - longest/time.Duration(p)
}

func repeatDur(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// fmtDur renders a duration to the second: "3m40s", "15s".
func fmtDur(d time.Duration) string {
	return d.Round(time.Second).String()
}

// elapsedWriter prefixes each line written through it with the time since
// start against the estimate: "[0:42 of ≤ 3:40] ". It is safe for
// concurrent use (chaos writes progress from each scenario).
type elapsedWriter struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	now   func() time.Time
	est   time.Duration
	line  []byte
	last  time.Time // when the last line was written (zero: start)
	// expect, if set, is the measured expectation (expect.go); the
	// prefix says it once it is known.
	expect func() (expectation, bool)
}

func (e *elapsedWriter) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := strings.IndexByte(string(p), '\n')
		if i < 0 {
			e.line = append(e.line, p...)
			break
		}
		e.line = append(e.line, p[:i+1]...)
		p = p[i+1:]
		out := append([]byte(e.prefix()), e.line...)
		e.line = e.line[:0]
		e.last = e.now()
		if _, err := e.w.Write(out); err != nil {
			return n - len(p), err
		}
	}
	return n, nil
}

// idle writes a line with the time elapsed when no line was written for
// d (a client honouring a long Retry-After is silent meanwhile).
func (e *elapsedWriter) idle(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	last := e.last
	if last.IsZero() {
		last = e.start
	}
	if e.now().Sub(last) < d || len(e.line) > 0 {
		return
	}
	e.last = e.now()
	fmt.Fprintf(e.w, "%sstill probing: no progress line for %s (a client waiting out a backoff or a Retry-After)\n", e.prefix(), clock(e.now().Sub(last)))
}

// heartbeat calls idle every tick until stop is closed.
func (e *elapsedWriter) heartbeat(stop <-chan struct{}, d time.Duration) {
	t := time.NewTicker(d / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			e.idle(d)
		}
	}
}

func (e *elapsedWriter) prefix() string {
	if e.expect != nil {
		if x, ok := e.expect(); ok {
			end := min(x.End.Sub(e.start), e.est)
			return fmt.Sprintf("[%s, expected end ~%s, at most %s] ", clock(e.now().Sub(e.start)), clock(end), clock(e.est))
		}
	}
	return fmt.Sprintf("[%s of ≤ %s] ", clock(e.now().Sub(e.start)), clock(e.est))
}

// clock renders a duration as m:ss.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
