package battery

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/mock"
	chaosscenario "github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/probe"
)

// Runner runs a battery against a client with chaos.Runner and infers its
// profile. The caller owns Toxi and closes it.
type Runner struct {
	Toxi      *mock.Toxiproxy
	ToxiName  string
	Out       string // base folder of the run folder, default "runs"
	ClientCmd string // run with sh -c, as chaos run --client-cmd
	// ClientFile, instead of ClientCmd, is the client as a scenario file
	// describes it (scenario.LoadClient): every probe scenario runs it as
	// chaos run would run that file's client.
	ClientFile *chaosscenario.ClientFile
	Parallel   int // scenarios at once (0: all; external clients are bounded by chaos)
	Progress   io.Writer
	Live       bool
	Color      bool
	// Prior is the client's policy from an earlier profile (--against),
	// or nil: the estimate then says how long its exhaustion takes.
	Prior *probe.Policy
	// Now is the clock of the progress lines' elapsed time (default time.Now).
	Now func() time.Time
	// InheritEnv names variables of this environment the client gets
	// (--inherit-env, as chaos.Runner.InheritEnv).
	InheritEnv []string

	// Admit admits the client's processes by the CPU the running ones use
	// (client.Admission), shared by every phase of the probe (they
	// overlap); nil: Run makes one for this machine. A matrix run shares
	// one between its probes.
	Admit *client.Admission

	mu      sync.Mutex
	active  bool                // Run is running (Interim answers)
	o       Options             // the options of the phase last started, for Interim
	start   time.Time           // when Run began
	acc     done                // what the accepted phases learnt
	batches map[*batch]struct{} // the phases running, or ended and not yet accepted or dropped
	seq     int
	mainDir string                       // the run folder the profile names: the battery's (the pilot's before it)
	plan    *probe.PlanEstimate          // said before the run; set before the first phase starts
	warm    atomic.Pointer[probe.WarmUp] // whether the warm-up request is used, and why (Interim reads it)
	// journal is what the profile last returned by Run or Interim was
	// inferred from (Journal).
	journal atomic.Pointer[probe.Journal]
	pace    *pace // times the scenarios for the expectation (nil: no progress)
}

// Run plans the battery, runs it and returns the profile. The phases after
// the battery start as soon as what they depend on has finished (sched.go)
// and are taken only when they are what the whole battery asks for: the
// exhaustion runs are repeated when the noise measured around the
// backoff's waits made them unusable or the multiplier is unsure, the
// survival figures are checked, the Retry-After ceiling is bisected. When
// ctx ends (Ctrl-C) the scenarios still running are stopped and the
// profile holds what the finished ones showed (Profile.Interrupted). An
// error means no scenario could run at all.
func (r *Runner) Run(ctx context.Context, o Options) (*probe.Profile, error) {
	o = o.withDefaults()
	start := time.Now()
	r.mu.Lock()
	r.active, r.o, r.start, r.acc, r.batches, r.mainDir = true, o, start, done{}, map[*batch]struct{}{}, ""
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.active, r.batches = false, nil
		r.mu.Unlock()
	}()
	admit := r.Admit
	if admit == nil {
		admit = client.NewAdmission()
	}
	ps, err := plan(o, start)
	if err != nil {
		return nil, err
	}
	est := r.announce(o, ps, start)
	r.plan = &est
	if ew, ok := r.Progress.(*elapsedWriter); ok {
		stop := make(chan struct{})
		defer close(stop)
		go ew.heartbeat(stop, heartbeatEvery)
	}
	var pilot []probe.Observation
	off := warmUpOff
	r.warm.Store(&off)
	if !o.NoWarmUp {
		r.warm.Store(&probe.WarmUp{Used: true, Reason: "the first probe, run alone, had not finished"})
		var use bool
		var ph phase
		var warm probe.WarmUp
		pilot, ps, use, warm, ph = r.runPilot(ctx, o, ps, start, admit)
		r.warm.Store(&warm)
		switch {
		case ph.sum == nil:
			return nil, ph.err
		case ph.err != nil || ctx.Err() != nil:
			prof := probe.Infer(o.Provider, pilot)
			acc := r.accepted()
			r.finish(prof, o, r.runDir(), start, ctx.Err() != nil || ph.sum.Interrupted > 0, acc.findings, acc.obs)
			return prof, ph.err
		case !use:
			o.NoWarmUp = true
			r.setOptions(o)
			if ps, err = plan(o, time.Now()); err != nil {
				return nil, err
			}
		}
	}
	sp := newSpecs()
	defer func() {
		for _, p := range sp.drop() {
			r.dropPhase(p)
		}
		sp.wg.Wait()
	}()
	bat := r.runBattery(ctx, o, ps, pilot, start, admit, sp)
	if bat.sum == nil {
		return nil, bat.err
	}
	obs, err := bat.obs, bat.err
	r.acceptPhase(bat, true)
	if w, again := warmUpAfterBattery(pilot, obs, o); again && err == nil && ctx.Err() == nil {
		// The pilot sent nothing (a cold start, a first run that failed),
		// and the battery showed a one-request client: what it learnt is
		// nothing, so it runs again without the warm-up, and what was
		// started beside it is dropped.
		for _, p := range sp.drop() {
			r.dropPhase(p)
		}
		r.warm.Store(&w)
		o.NoWarmUp = true
		r.setOptions(o)
		if ps, err = plan(o, time.Now()); err != nil {
			return nil, err
		}
		r.progressf("the client made its warm-up request only in every run that reached the mock: probing it again without the warm-up request\n")
		r.extendBound(ps, o)
		pilot = nil
		r.mu.Lock()
		r.acc.obs = nil // what the first battery learnt is nothing; its findings stay
		r.mu.Unlock()
		again := r.runProbes(ctx, o, ps, start, admit, nil)
		if again.sum == nil {
			return nil, again.err
		}
		obs, err = again.obs, again.err
		r.acceptPhase(again, true)
	}
	sp.close()
	obs = append(pilot, obs...)
	prof := probe.Infer(o.Provider, obs)
	if why := probe.MoreSamples(prof, obs); err == nil && ctx.Err() == nil && why != "" {
		more, _ := exhaustion(o, o.Samples+1)
		wait, early := r.phaseOf(ctx, o, "more", more, start, admit, sp)
		if early {
			r.progressf("%s: the %d exhaustion runs started again as soon as the first ones were done are the ones needed\n", why, o.Samples)
		} else {
			r.progressf("%s: running the %d exhaustion runs again now that the battery is done\n", why, o.Samples)
		}
		if extra := wait(); extra.sum != nil {
			r.acceptPhase(extra, false)
			obs = append(obs, extra.obs...)
			prof = probe.Infer(o.Provider, obs)
			err = extra.err
		}
	} else if s, _ := sp.claim("more", ""); s != nil {
		r.dropPhase(s.wait())
	}
	if err == nil && ctx.Err() == nil {
		// The survival figures' checks run beside the first round of the
		// ceiling's bisection (or alone when none runs): both need the
		// battery's profile, neither the other's.
		checks, unchecked := r.survivalChecks(o, prof)
		var why string
		prof, why = r.bisectCeiling(ctx, o, obs, prof, start, checks, admit, sp)
		prof.NoteCeilingStop(why)
		prof.NoteSurvivalChecks(unchecked)
	}
	acc := r.accepted()
	r.finish(prof, o, r.runDir(), start, ctx.Err() != nil || bat.sum.Interrupted > 0, acc.findings, acc.obs)
	return prof, err
}

// runBattery runs the battery ps as one chaos run, and starts what depends
// on a group of it as soon as the group has ended (sched.go): once the
// exhaustion and survival runs have, the exhaustion again (when
// probe.MoreSamples asks for it from what has finished) and then the
// survival figures' checks; once the Retry-After probes have, the
// Retry-After ceiling's rounds, one after the other (from what has
// finished by then: the backoff's fit comes from the exhaustion runs).
func (r *Runner) runBattery(ctx context.Context, o Options, ps []Probe, pilot []probe.Observation, start time.Time, admit *client.Admission, sp *specs) phase {
	gs := newGroups(&sp.wg)
	for _, p := range ps {
		g := "decision"
		switch {
		case p.Sample > 0:
			g = "exhaustion"
		case p.Fault.Group == "retry-after":
			g = "retry-after" // the bracket the ceiling's rounds start from
		}
		gs.add(g, p.Scenario.Name)
	}
	var cr *chaos.Runner
	var crMu sync.Mutex
	finished := func(ended map[string]bool) []probe.Observation {
		crMu.Lock()
		c := cr
		crMu.Unlock()
		if c == nil {
			return nil
		}
		sum := c.Interim()
		if sum == nil {
			sum = c.Last()
		}
		if sum == nil {
			return nil
		}
		var sel []Probe
		for _, p := range ps {
			if ended[p.Scenario.Name] {
				sel = append(sel, p)
			}
		}
		return append(slices.Clone(pilot), observeAll(sel, sum, o)...)
	}
	gs.on("exhaustion", func(ended map[string]bool) {
		known := finished(ended)
		if known == nil || ctx.Err() != nil {
			return
		}
		prof := probe.Infer(o.Provider, known)
		if why := probe.MoreSamples(prof, known); why != "" {
			more, err := exhaustion(o, o.Samples+1)
			if err != nil {
				return
			}
			s := sp.start(ctx, "more", keyOf(more), func(ctx context.Context) phase { return r.runProbes(ctx, o, more, start, admit, nil) })
			if s == nil {
				return
			}
			r.progressf("%s: the exhaustion runs are done, so they run again now, beside the rest\n", why)
			extra := s.wait()
			if extra.sum == nil || extra.err != nil || ctx.Err() != nil {
				return
			}
			prof = probe.Infer(o.Provider, append(known, extra.obs...))
		}
		plans, _ := probe.SurvivalChecks(prof, o.Provider, o.Budget, o.TimeScale)
		checks, err := checkProbes(o, plans)
		if err != nil || len(checks) == 0 {
			return
		}
		if sp.start(ctx, "checks", keyOf(checks), func(ctx context.Context) phase { return r.runProbes(ctx, o, checks, start, admit, nil) }) != nil {
			r.progressf("the survival figures are known: checking them now, beside the rest\n")
		}
	})
	gs.on("retry-after", func(map[string]bool) {
		reach := probe.CeilingReach(o.Budget, o.TimeScale)
		var rounds []probe.Observation
		for round := 1; ctx.Err() == nil; round++ {
			// What has finished of the battery by now (the exhaustion runs
			// fit the backoff the rounds are read against), and the rounds.
			known := append(finished(gs.endedNow()), rounds...)
			prof := probe.Infer(o.Provider, known)
			values, _ := probe.NextCeilingRound(prof.Policy.RetryAfter, reach, round, o.CeilingRounds)
			if len(values) == 0 {
				return
			}
			cps, err := ceilingProbes(o, round, values)
			if err != nil {
				return
			}
			s := sp.start(ctx, fmt.Sprintf("round-%d", round), keyOf(cps), func(ctx context.Context) phase { return r.runProbes(ctx, o, cps, start, admit, nil) })
			if s == nil {
				return
			}
			r.progressf("Retry-After ceiling: round %d probes Retry-After %s now, beside the rest\n", round, secondsOf(values))
			res := s.wait()
			if res.sum == nil || res.err != nil {
				return
			}
			rounds = append(rounds, res.obs...)
		}
	})
	onResult := func(res chaos.Result) { gs.end(res.Name) }
	return r.runProbes(ctx, o, ps, start, admit, func(c *chaos.Runner) {
		crMu.Lock()
		cr = c
		crMu.Unlock()
		c.OnResult = onResult
	})
}

// client is the client as progress lines and the profile name it.
func (r *Runner) client() string {
	if r.ClientFile != nil {
		return r.ClientFile.String()
	}
	return r.ClientCmd
}

// runPilot runs one probe of ps alone (pilotIndex) to tell whether the
// client makes the two requests it is told (warmup.go). It returns the
// pilot's observation (none when the client will be probed without the
// warm-up: the pilot showed only the warm-up, and is run again), the
// probes still to run, whether they keep the warm-up, what the profile
// says of it, and the pilot's phase. An error, or ctx ending, stops the
// probe.
func (r *Runner) runPilot(ctx context.Context, o Options, ps []Probe, start time.Time, admit *client.Admission) ([]probe.Observation, []Probe, bool, probe.WarmUp, phase) {
	i := pilotIndex(ps)
	r.progressf("first, probe %q alone: does the client make the two requests it is told (RETRYLAB_REQUESTS=2, the first answered ok)?\n", ps[i].Fault.Name)
	ph := r.runProbes(ctx, o, ps[i:i+1], start, admit, nil)
	if ph.sum == nil || ph.err != nil || ctx.Err() != nil {
		r.acceptPhase(ph, true)
		return ph.obs, nil, true, probe.WarmUp{Used: true, Reason: "the probe was stopped during its first probe, run alone"}, ph
	}
	use, w := warmUpDecision(ph.obs[0])
	if !use {
		r.keepFindings(ph)
		r.dropPhase(ph)
		r.setRunDir(ph.sum.RunDir)
		r.progressf("the client made one request only: probing it without the warm-up request from now on\n")
		return nil, ps, false, w, ph
	}
	r.acceptPhase(ph, true)
	return ph.obs, slices.Delete(slices.Clone(ps), i, i+1), true, w, ph
}

// announce works out the estimate, says it on Progress (with the figures
// the deadlines may leave unknown), and from then on prefixes every
// progress line with the time elapsed against it.
func (r *Runner) announce(o Options, ps []Probe, start time.Time) probe.PlanEstimate {
	par := len(ps)
	if r.Parallel > 0 {
		par = r.Parallel
	}
	if r.ClientCmd != "" || r.ClientFile != nil {
		par = min(par, max(2, 2*runtime.GOMAXPROCS(0))) // chaos.Runner's bound on external clients
	}
	est := estimate(ps, o, par, r.Prior)
	if r.Progress == nil {
		return est
	}
	fmt.Fprintf(r.Progress, "probing %q (%s): it takes at most %s: %s\n",
		r.client(), o.Provider.Name, fmtDur(time.Duration(est.EstimatedMs)*time.Millisecond), est.Bound)
	for _, u := range est.Unknown {
		fmt.Fprintf(r.Progress, "  left unknown: %s\n", u)
	}
	fmt.Fprintf(r.Progress, "  an expected end, measured, follows once a scenario of each kind still to run has finished (the first exhaustion run: the client's whole backoff)\n")
	now := r.Now
	if now == nil {
		now = time.Now
	}
	r.pace = newPace(now, par)
	r.Progress = &elapsedWriter{w: r.Progress, start: start, now: now, est: time.Duration(est.EstimatedMs) * time.Millisecond,
		expect: r.pace.expect}
	return est
}

// bisectCeiling runs the rounds of the Retry-After ceiling's bisection,
// as probe.NextCeilingRound decides them, while the profile's bracket is
// wide and the budget reaches into it, and returns the profile with their
// observations, and why it stopped. A round already run, or running,
// beside the battery (sp) is taken when it is the round decided.
//
// checks (the survival figures' checks) run with the first round, or
// alone when there is none (or are taken from sp likewise).
func (r *Runner) bisectCeiling(ctx context.Context, o Options, obs []probe.Observation, prof *probe.Profile, start time.Time, checks []Probe, admit *client.Admission, sp *specs) (*probe.Profile, string) {
	reach := probe.CeilingReach(o.Budget, o.TimeScale)
	for round := 1; ; round++ {
		values, why := probe.NextCeilingRound(prof.Policy.RetryAfter, reach, round, o.CeilingRounds)
		if len(values) == 0 || ctx.Err() != nil {
			if n := len(obs); len(checks) > 0 && ctx.Err() == nil {
				wait, _ := r.phaseOf(ctx, o, "checks", checks, start, admit, sp)
				if ph := wait(); ph.sum != nil {
					r.acceptPhase(ph, false)
					obs = append(obs, ph.obs...)
				}
				if len(obs) > n {
					prof = probe.Infer(o.Provider, obs)
				}
			}
			return prof, why
		}
		br := prof.Policy.RetryAfter.CeilingBracketMs
		ps, err := ceilingProbes(o, round, values)
		if err != nil {
			return prof, "stopped: " + err.Error()
		}
		waitChecks := func() phase { return phase{} }
		if len(checks) > 0 {
			waitChecks, _ = r.phaseOf(ctx, o, "checks", checks, start, admit, sp)
			checks = nil
		}
		wait, early := r.phaseOf(ctx, o, fmt.Sprintf("round-%d", round), ps, start, admit, sp)
		how := ""
		if early {
			how = " (started beside the battery)"
		}
		r.progressf("Retry-After ceiling between %s and %s: round %d of at most %d probes Retry-After %s%s\n",
			probe.FormatMs(float64(br[0])), probe.FormatMs(float64(br[1])), round, o.CeilingRounds, secondsOf(values), how)
		ph, ch := wait(), waitChecks()
		if ch.sum != nil {
			r.acceptPhase(ch, false)
		}
		if ph.sum == nil {
			if ph.err == nil {
				ph.err = context.Cause(ctx)
			}
			return prof, "stopped: " + ph.err.Error()
		}
		r.acceptPhase(ph, false)
		obs = append(append(obs, ph.obs...), ch.obs...)
		prof = probe.Infer(o.Provider, obs)
		if ctx.Err() != nil {
			return prof, "stopped: interrupted"
		}
		if ph.err != nil {
			return prof, "stopped: " + ph.err.Error()
		}
	}
}

// phaseOf returns a function that waits for the phase of ps in slot (call
// it once): the speculation's, when it ran ps (early), else a run of ps
// started now; a speculation that ran something else is stopped and
// dropped.
func (r *Runner) phaseOf(ctx context.Context, o Options, slot string, ps []Probe, start time.Time, admit *client.Admission, sp *specs) (wait func() phase, early bool) {
	s, ok := sp.claim(slot, keyOf(ps))
	if ok {
		return s.wait, true
	}
	if s != nil {
		r.dropPhase(s.wait())
	}
	ch := make(chan phase, 1)
	go func() { ch <- r.runProbes(ctx, o, ps, start, admit, nil) }()
	return func() phase { return <-ch }, false
}

func secondsOf(vs []int64) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%ds", v/1000)
	}
	return strings.Join(out, ", ")
}

// finish fills in what a profile says beside the inference, the findings
// of the experiments that finished among it, and the floor the client's
// waits in obs (the observations it was inferred from) impose.
func (r *Runner) finish(prof *probe.Profile, o Options, runDir string, start time.Time, interrupted bool, findings []probe.Finding, obs []probe.Observation) {
	r.keep(o.Provider, obs)
	prof.Findings = slices.Clone(findings)
	prof.Client = r.client()
	prof.Model = o.Model
	prof.TimeScale = o.TimeScale
	prof.RunDir = runDir
	prof.DurationMs = time.Since(start).Milliseconds()
	floor := probe.FloorOf(obs, o.TimeScale, prof.DurationMs)
	prof.Floor = &floor
	prof.Interrupted = interrupted
	prof.Plan = r.plan
	prof.WarmUp = r.warm.Load()
	prof.Conformance = probe.Conform(prof, o.Provider)
	_, prof.Unmodelled, _ = probe.LearntPolicy(prof, o.Provider)
}

// runProbes runs probes with chaos.Runner (its external clients admitted
// by admit; set, when not nil, is called with it before it runs) and
// observes each. The phase's batch is held for Interim until
// acceptPhase or dropPhase.
func (r *Runner) runProbes(ctx context.Context, o Options, ps []Probe, start time.Time, admit *client.Admission, set func(*chaos.Runner)) phase {
	scs := make([]*chaosscenario.Scenario, len(ps))
	for i, p := range ps {
		if r.ClientFile != nil {
			r.ClientFile.Apply(p.Scenario)
		}
		scs[i] = p.Scenario
	}
	cr := &chaos.Runner{Toxi: r.Toxi, ToxiName: r.ToxiName, Out: r.Out, Parallel: r.Parallel, TimeScale: o.TimeScale,
		ClientCmd: r.ClientCmd, InheritEnv: r.InheritEnv, Progress: r.Progress, Live: r.Live, Color: r.Color, Confirm: 0, StartGrace: o.StartGrace,
		Admit: admit}
	r.timeScenarios(cr, ps, o, start)
	if set != nil {
		set(cr)
	}
	b := r.hold(cr, ps, o)
	sum, err := cr.Run(ctx, scs)
	if sum == nil {
		r.release(b)
		return phase{err: err}
	}
	r.mu.Lock()
	b.obs, b.findings, b.final = observeAll(ps, sum, o), findingsOf(sum), true
	r.mu.Unlock()
	return phase{obs: b.obs, b: b, sum: sum, err: err}
}

// timeScenarios has cr time each scenario of ps for the expectation, and
// says it: when it is first known, and again as a phase after the first
// starts with it known.
func (r *Runner) timeScenarios(cr *chaos.Runner, ps []Probe, o Options, start time.Time) {
	if r.pace == nil {
		return
	}
	r.pace.add(ps, o.TimeScale)
	say := func(e expectation, what string) {
		r.progressf("expected end %s (in each line's prefix): each scenario still to run takes as long as the finished ones of its kind (%s)\n", what, e.Basis)
	}
	if e, ok := r.pace.expect(); ok && r.pace.saidOnce() {
		say(e, fmt.Sprintf("now with these %d scenarios", len(ps)))
	}
	cr.OnScenario = func(name string, done bool) {
		if e, first := r.pace.mark(name, done); first {
			say(e, "measured")
		}
	}
}

// observeAll observes each probe of ps in sum.
func observeAll(ps []Probe, sum *chaos.Summary, o Options) []probe.Observation {
	byName := map[string]chaos.Result{}
	for _, res := range sum.Scenarios {
		byName[res.Name] = res
	}
	obs := make([]probe.Observation, 0, len(ps))
	for _, p := range ps {
		obs = append(obs, Observe(p, byName[p.Scenario.Name], o.TimeScale))
	}
	return obs
}

// findingsOf are the findings each experiment of sum raised (chaos
// run's detectors over its journal), named by the experiment.
func findingsOf(sum *chaos.Summary) []probe.Finding {
	var out []probe.Finding
	for _, res := range sum.Scenarios {
		for _, f := range res.Findings {
			out = append(out, probe.Finding{Code: f.Code, Attempts: slices.Clone(f.Attempts), Evidence: f.Evidence, Probe: res.Name})
		}
	}
	return out
}

// heartbeatEvery is how long the progress may stay silent before a line
// says the probe is still running.
const heartbeatEvery = 30 * time.Second

func (r *Runner) progressf(format string, args ...any) {
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, format, args...)
	}
}

// extendBound adds to the bound said before the start the bound of ps, a
// battery the plan did not hold (it is run again without the warm-up),
// and says it: the bound stays an upper bound on the wall time.
func (r *Runner) extendBound(ps []Probe, o Options) {
	if r.plan == nil {
		return
	}
	par := len(ps)
	if r.Parallel > 0 {
		par = r.Parallel
	}
	if r.ClientCmd != "" || r.ClientFile != nil {
		par = min(par, max(2, 2*runtime.GOMAXPROCS(0)))
	}
	more := estimate(ps, o, par, r.Prior)
	r.plan.EstimatedMs += more.EstimatedMs
	r.plan.Bound += "; then the battery again without the warm-up: " + more.Bound
	if ew, ok := r.Progress.(*elapsedWriter); ok {
		ew.mu.Lock()
		ew.est += time.Duration(more.EstimatedMs) * time.Millisecond
		ew.mu.Unlock()
	}
	r.progressf("the bound is now %s: %s more for the battery again\n",
		fmtDur(time.Duration(r.plan.EstimatedMs)*time.Millisecond), fmtDur(time.Duration(more.EstimatedMs)*time.Millisecond))
}

// Journal is the provider and the observations the profile last returned
// by Run or Interim was inferred from: what `chaos probe --observations`
// writes (probe.Journal). Empty before either returned a profile.
func (r *Runner) Journal() probe.Journal {
	if j := r.journal.Load(); j != nil {
		return *j
	}
	return probe.Journal{Observations: []probe.Observation{}}
}

// keep records obs as the journal of the profile about to be returned.
func (r *Runner) keep(prov probe.Provider, obs []probe.Observation) {
	r.journal.Store(&probe.Journal{Provider: prov.Name, Observations: append([]probe.Observation{}, obs...)})
}
