package battery

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/retrylab/retrylab/chaos"
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

	cur  atomic.Pointer[batch] // the battery running, for Interim and Flush
	done atomic.Pointer[done]  // what the batteries that returned learnt, for Interim between them
	plan *probe.PlanEstimate   // said before the run; set before cur is first stored
	// findings are those of the batteries that returned (Run's goroutine
	// alone reads and writes it; Interim reads the copies in batch and done).
	findings []probe.Finding
	warm     atomic.Pointer[probe.WarmUp] // whether the warm-up request is used, and why (Interim reads it)
	pace     *pace                        // times the scenarios for the expectation (nil: no progress)
	// journal is what the profile last returned by Run or Interim was
	// inferred from (Journal).
	journal atomic.Pointer[probe.Journal]
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

// Run plans the battery, runs it and returns the profile. When the noise
// measured around the backoff's waits made them unusable, the exhaustion
// runs are repeated once more after the battery, when the machine is
// quieter (its other clients have exited). When ctx ends (Ctrl-C) the
// scenarios still running are stopped and the profile holds what the
// finished ones showed (Profile.Interrupted). An error means no scenario
// could run at all.
func (r *Runner) Run(ctx context.Context, o Options) (*probe.Profile, error) {
	defer r.done.Store(nil)
	r.findings = nil
	o = o.withDefaults()
	start := time.Now()
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
		var psum *chaos.Summary
		var warm probe.WarmUp
		pilot, ps, use, warm, psum, err = r.runPilot(ctx, o, ps, start)
		r.warm.Store(&warm)
		switch {
		case psum == nil:
			return nil, err
		case err != nil || ctx.Err() != nil:
			prof := probe.Infer(o.Provider, pilot)
			r.keep(o.Provider, pilot)
			r.finish(prof, o, psum.RunDir, start, ctx.Err() != nil || psum.Interrupted > 0, r.findings)
			return prof, err
		case !use:
			o.NoWarmUp = true
			if ps, err = plan(o, time.Now()); err != nil {
				return nil, err
			}
		}
	}
	obs, sum, err := r.runProbes(ctx, o, ps, pilot, start)
	if sum == nil {
		return nil, err
	}
	if w, again := warmUpAfterBattery(pilot, obs, o); again && err == nil && ctx.Err() == nil {
		// The pilot sent nothing (a cold start, a first run that failed),
		// and the battery showed a one-request client: what it learnt is
		// nothing, so it runs again without the warm-up.
		r.warm.Store(&w)
		o.NoWarmUp = true
		if ps, err = plan(o, time.Now()); err != nil {
			return nil, err
		}
		r.progressf("the client made its warm-up request only in every run that reached the mock: probing it again without the warm-up request\n")
		r.extendBound(ps, o)
		pilot = nil
		if obs, sum, err = r.runProbes(ctx, o, ps, nil, start); sum == nil {
			return nil, err
		}
	}
	obs = append(pilot, obs...)
	prof := probe.Infer(o.Provider, obs)
	if why := probe.MoreSamples(prof, obs); err == nil && ctx.Err() == nil && why != "" {
		r.progressf("%s: running the %d exhaustion runs again now that the battery is done\n", why, o.Samples)
		more, _ := exhaustion(o, o.Samples+1)
		if extra, s2, err2 := r.runProbes(ctx, o, more, obs, start); s2 != nil {
			obs = append(obs, extra...)
			prof = probe.Infer(o.Provider, obs)
			err = err2
		}
	}
	if err == nil && ctx.Err() == nil {
		// The survival figures' checks run beside the first round of the
		// ceiling's bisection (or alone when none runs): both need the
		// battery's profile, neither the other's.
		checks, unchecked := r.survivalChecks(o, prof)
		var why string
		prof, obs, why = r.bisectCeiling(ctx, o, obs, prof, start, checks)
		prof.NoteCeilingStop(why)
		prof.NoteSurvivalChecks(unchecked)
	}
	r.keep(o.Provider, obs)
	r.finish(prof, o, sum.RunDir, start, ctx.Err() != nil || sum.Interrupted > 0, r.findings)
	return prof, err
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
// probes still to run, whether they keep the warm-up and what the profile
// says of it. An error, or ctx ending, stops the probe.
func (r *Runner) runPilot(ctx context.Context, o Options, ps []Probe, start time.Time) ([]probe.Observation, []Probe, bool, probe.WarmUp, *chaos.Summary, error) {
	i := pilotIndex(ps)
	r.progressf("first, probe %q alone: does the client make the two requests it is told (RETRYLAB_REQUESTS=2, the first answered ok)?\n", ps[i].Fault.Name)
	obs, sum, err := r.runProbes(ctx, o, ps[i:i+1], nil, start)
	if sum == nil || err != nil || ctx.Err() != nil {
		return obs, nil, true, probe.WarmUp{Used: true, Reason: "the probe was stopped during its first probe, run alone"}, sum, err
	}
	use, w := warmUpDecision(obs[0])
	if !use {
		r.progressf("the client made one request only: probing it without the warm-up request from now on\n")
		return nil, ps, false, w, sum, nil
	}
	return obs, slices.Delete(slices.Clone(ps), i, i+1), true, w, sum, nil
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
// observations, the observations (obs and theirs), and why it stopped.
//
// checks (the survival figures' checks) run with the first round, or
// alone when there is none.
func (r *Runner) bisectCeiling(ctx context.Context, o Options, obs []probe.Observation, prof *probe.Profile, start time.Time, checks []Probe) (*probe.Profile, []probe.Observation, string) {
	reach := probe.CeilingReach(o.Budget, o.TimeScale)
	for round := 1; ; round++ {
		values, why := probe.NextCeilingRound(prof.Policy.RetryAfter, reach, round, o.CeilingRounds)
		if len(values) == 0 || ctx.Err() != nil {
			if n := len(obs); len(checks) > 0 {
				if obs = r.runChecks(ctx, o, checks, obs, start); len(obs) > n {
					prof = probe.Infer(o.Provider, obs)
				}
			}
			return prof, obs, why
		}
		br := prof.Policy.RetryAfter.CeilingBracketMs
		r.progressf("Retry-After ceiling between %s and %s: round %d of at most %d probes Retry-After %s\n",
			probe.FormatMs(float64(br[0])), probe.FormatMs(float64(br[1])), round, o.CeilingRounds, secondsOf(values))
		ps, err := ceilingProbes(o, round, values)
		if err != nil {
			return prof, obs, "stopped: " + err.Error()
		}
		ps, checks = append(ps, checks...), nil
		extra, sum, err := r.runProbes(ctx, o, ps, obs, start)
		if sum == nil {
			return prof, obs, "stopped: " + err.Error()
		}
		obs = append(obs, extra...)
		prof = probe.Infer(o.Provider, obs)
		if ctx.Err() != nil {
			return prof, obs, "stopped: interrupted"
		}
		if err != nil {
			return prof, obs, "stopped: " + err.Error()
		}
	}
}

func secondsOf(vs []int64) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%ds", v/1000)
	}
	return strings.Join(out, ", ")
}

// finish fills in what a profile says beside the inference, the findings
// of the experiments that finished among it.
func (r *Runner) finish(prof *probe.Profile, o Options, runDir string, start time.Time, interrupted bool, findings []probe.Finding) {
	prof.Findings = slices.Clone(findings)
	prof.Client = r.client()
	prof.Model = o.Model
	prof.TimeScale = o.TimeScale
	prof.RunDir = runDir
	prof.DurationMs = time.Since(start).Milliseconds()
	prof.Interrupted = interrupted
	prof.Plan = r.plan
	prof.WarmUp = r.warm.Load()
	prof.Conformance = probe.Conform(prof, o.Provider)
	_, prof.Unmodelled, _ = probe.LearntPolicy(prof, o.Provider)
}

// runProbes runs probes with chaos.Runner and observes each; prior are
// the observations of the batteries before it (for Interim), start when
// the first began.
func (r *Runner) runProbes(ctx context.Context, o Options, ps []Probe, prior []probe.Observation, start time.Time) ([]probe.Observation, *chaos.Summary, error) {
	scs := make([]*chaosscenario.Scenario, len(ps))
	for i, p := range ps {
		if r.ClientFile != nil {
			r.ClientFile.Apply(p.Scenario)
		}
		scs[i] = p.Scenario
	}
	cr := &chaos.Runner{Toxi: r.Toxi, ToxiName: r.ToxiName, Out: r.Out, Parallel: r.Parallel, TimeScale: o.TimeScale,
		ClientCmd: r.ClientCmd, InheritEnv: r.InheritEnv, Progress: r.Progress, Live: r.Live, Color: r.Color, Confirm: 0, StartGrace: o.StartGrace}
	r.timeScenarios(cr, ps, o, start)
	r.cur.Store(&batch{cr: cr, ps: ps, o: o, prior: prior, priorFindings: slices.Clone(r.findings), start: start})
	sum, err := cr.Run(ctx, scs)
	if sum == nil {
		return nil, nil, err
	}
	obs := observeAll(ps, sum, o)
	r.findings = append(r.findings, findingsOf(sum)...)
	r.done.Store(&done{obs: append(slices.Clone(prior), obs...), findings: slices.Clone(r.findings), o: o, runDir: sum.RunDir, start: start})
	return obs, sum, err
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
