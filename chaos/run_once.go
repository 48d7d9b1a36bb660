package chaos

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/otlp"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/trace"
)

// clientRun is what a client produced.
type clientRun struct {
	outcome string
	exit    *client.ClientExit // external clients only
	pgid    int                // external clients: the process group the lag meter watched; 0 if none
	sleeps  []retry.Sleep      // the built-in client's waits as it slept them
	problem string             // the built-in client: why it was stopped, or ""
	stopped time.Time          // when it was stopped at its deadline; zero otherwise
	hint    string             // an external client that could not start: what to do
	report  *otlp.Account      // external clients: their account from their telemetry; nil if none
	// unserved are the side requests the mock answered 404 or 405
	// ("POST /chat/completions"), for a hint on a wrong base URL.
	unserved []string
}

// runOnce runs a scenario once, in dir, and writes its result.json.
func (r *Runner) runOnce(ctx context.Context, sc *scenario.Scenario, dir string) (res Result) {
	start := time.Now()
	if r.OnScenario != nil {
		r.OnScenario(sc.Name, false)
		defer r.OnScenario(sc.Name, true) // after settle: deferred calls run last in, first out
	}
	scale := sc.TimeScale
	if r.TimeScale > 0 {
		scale = r.TimeScale
	}
	res = newResult(sc, dir, r.Seed, scale, r.clientName(sc))
	sec := redact.NewSecrets()
	// finished is set once the client ran to its end before ctx ended: a
	// scenario cut short by an interrupt has no verdict, only a reason.
	finished := false
	defer func() { r.settle(ctx, sc, dir, &res, sec, start, finished) }()
	if err := runfolder.MakeRunSubdir(dir); err != nil {
		r.infraFailed(ctx, &res, "", runfolder.OutputErr("", dir, err))
		return res
	}
	runID := fmt.Sprintf("%s-%s", sc.Name, filepath.Base(filepath.Dir(dir)))
	journal, err := trace.Create(filepath.Join(dir, "server.jsonl"), runID)
	if err != nil {
		r.infraFailed(ctx, &res, "", runfolder.OutputErr("", filepath.Join(dir, "server.jsonl"), err))
		return res
	}
	defer journal.Close()
	logw := r.lineWriter(sc.Name, sec)
	// The mock's own log is detailed; it goes to mock.log in the run folder.
	mockLog := &redact.RedactFile{Path: filepath.Join(dir, "mock.log"), Scrub: sec.Scrub}
	defer mockLog.Close()
	r.logf(sc.Name, "starting (%d faults, timeScale %g, client %s)", len(sc.Attempts), scale, res.Client)
	env, err := mock.StartEnv(ctx, mock.EnvConfig{Scenario: sc, Toxi: r.Toxi, Journal: journal, RunID: runID, Log: mockLog, TimeScale: scale, OutageSeed: r.Seed,
		OnSecret: sec.Add, OnAttempt: r.attemptLogger(sc), Fleet: sc.FleetClients(), Proxy: r.Proxy})
	if err != nil {
		// The mock could not listen or the proxy could not be created:
		// every other scenario would meet the same.
		r.infraFailed(ctx, &res, "start mock and proxy: ", err)
		return res
	}
	res.Path = env.Path()
	if sc.Fleet != nil {
		runs := r.runFleet(ctx, sc, &res, env, dir, runID, scale, sec)
		finished = ctx.Err() == nil
		attempts, journalErr := r.closeEnv(sc, env, journal, logw)
		res.Attempts = len(attempts)
		if res.Error != "" || !finished {
			return res
		}
		r.verifyFleet(sc, &res, attempts, runs, scale, start, journalErr)
		return res
	}
	tel, err := r.startTelemetry(sc, dir)
	if err != nil {
		env.Close()
		r.infraFailed(ctx, &res, "start the OTLP receiver: ", err)
		return res
	}
	tracePath := filepath.Join(dir, "trace.jsonl")
	r.firsts.Store(dir, env.FirstRequest())
	defer r.firsts.Delete(dir)
	cr := r.runClient(ctx, sc, &res, clientSetup{baseURL: env.BaseURL(), dir: dir, tracePath: tracePath,
		runID: runID, scale: scale, sec: sec, log: logw})
	cr.report, res.Telemetry = r.finishTelemetry(sc, dir, tel, runID, tracePath)
	finished = ctx.Err() == nil
	attempts, journalErr := r.closeEnv(sc, env, journal, logw)
	res.Attempts = len(attempts)
	res.noteMet(sc, attempts)
	cr.unserved = verify.Unserved(env.SideRequests())
	if res.Error != "" || !finished {
		return res
	}
	r.verify(sc, &res, attempts, cr, tracePath, scale, start, journalErr, time.Time{})
	return res
}

// newResult is a scenario's result before it runs.
// closeEnv ends a run's mock once its clients have: it closes the mock and
// its proxy, then reads the attempts, and returns them with the journal's
// first error (a failed write, else closing it). Close comes before the
// read: a client that retried at once may have finished while the mock
// was still switching the proxy to the next attempt (a slow proxy API call
// on a loaded machine), before it recorded the previous attempt's end.
// Close waits for every attempt to be recorded; read earlier, one would
// have a zero end and a gap of 2562047h.
func (r *Runner) closeEnv(sc *scenario.Scenario, env *mock.Env, journal *trace.Writer, logw *prefixWriter) ([]mock.ServerAttempt, error) {
	if err := env.Close(); err != nil {
		r.logf(sc.Name, "closing mock and proxy: %v", err)
	}
	attempts := env.Attempts()
	journalErr := env.JournalErr()
	if journalErr == nil {
		journalErr = journal.Close()
	}
	logw.Flush()
	return attempts, journalErr
}

func newResult(sc *scenario.Scenario, dir string, seed int64, scale float64, client string) Result {
	res := Result{Name: sc.Name, File: sc.File, Description: sc.Description, Seed: seed, TimeScale: scale,
		Dir: dir, Client: client, FailureTypes: []string{}, Escalations: []scenario.Escalation{}, Checks: []verify.Check{}}
	for _, f := range sc.Attempts {
		res.Faults = append(res.Faults, mock.DescribeFault(f))
	}
	res.Outage = newOutageResult(sc, seed)
	return res
}

// settle gives a run its verdict once it has ended, however it ended,
// scrubs the keys the client sent from the result and the run folder,
// writes result.json and logs the verdict.
func (r *Runner) settle(ctx context.Context, sc *scenario.Scenario, dir string, res *Result, sec *redact.Secrets, start time.Time, finished bool) {
	if ie := infraCause(ctx); !finished && ie != nil {
		// Another scenario found the infrastructure failing.
		if res.Error == "" {
			res.Error = "stopped: " + ie.Error()
		}
	} else if !finished && ctx.Err() != nil {
		res.Interrupted = "unfinished: " + interruptReason(ctx)
		res.Error = ""
	}
	res.DurationMs = time.Since(start).Milliseconds()
	res.Verdict = res.verdict()
	res.Passed = res.Verdict == VerdictPass
	scrubResult(sec, res)
	r.writeErrorReports(sc.Name, dir, res)
	r.record(dir, *res)
	if err := writeJSON(filepath.Join(dir, "result.json"), res); err != nil && res.Error == "" {
		res.Error = err.Error()
		res.Verdict, res.Passed = VerdictError, false
		r.record(dir, *res)
	}
	// Every file is closed by now (deferred later, run earlier).
	if err := sec.ScrubDir(dir); err != nil {
		r.logf(sc.Name, "scrubbing keys from the run folder: %v", err)
		if res.Error == "" {
			res.Error = "scrubbing keys from the run folder: " + err.Error()
			res.Verdict, res.Passed = VerdictError, false
		}
	}
	r.logf(sc.Name, "%s in %dms", verdictLine(*res), res.DurationMs)
}

// verdictLine is the verdict as the progress log shows it, with the checks
// that did not pass or the error.
func verdictLine(res Result) string {
	verdict := strings.ToUpper(res.Verdict)
	if fc := append(res.failedChecks(), res.inconclusiveChecks()...); len(fc) > 0 {
		verdict += " (" + strings.Join(failedCheckNames(fc), ", ") + ")"
	} else if res.Error != "" {
		verdict += " (" + res.Error + ")"
	}
	return verdict
}

// attemptLogger logs each attempt of sc as the mock finishes it.
func (r *Runner) attemptLogger(sc *scenario.Scenario) func(mock.ServerAttempt) {
	return func(a mock.ServerAttempt) {
		phase, entry := 0, 0
		if a.Outage != nil {
			phase, entry = a.Outage.Phase, a.Outage.Entry
		}
		met := mock.DescribeFault(sc.MetFault(a.N, phase, entry))
		if f, ok := mock.LimitFault(a); ok {
			met = mock.DescribeFault(f) + " (limits: " + a.Limited.Limit + ")"
		} else if a.Outage != nil && phase > 0 {
			met += fmt.Sprintf(" (outage phase %d at %dms)", phase, a.Outage.AtMs)
		}
		status := "no response"
		if a.Status != 0 {
			status = fmt.Sprintf("HTTP %d", a.Status)
		}
		r.logf(sc.Name, "attempt %d met %s → %s, %d bytes, closed by %s", a.N, met, status, a.Bytes, a.ClosedBy)
	}
}

// clientSetup is what a client of one run is given.
type clientSetup struct {
	baseURL, dir, tracePath, runID string
	scale                          float64
	sec                            *redact.Secrets
	log                            *prefixWriter
}

// runClient runs the scenario's client, external or built in, until it
// ends or its deadline (expect.maxDuration, else DefaultDeadline) passes.
// A client that could not be started, or infrastructure that failed under
// it, sets res.Error; the built-in client's own problem becomes a check.
func (r *Runner) runClient(ctx context.Context, sc *scenario.Scenario, res *Result, cs clientSetup) clientRun {
	deadline := clientDeadline(sc)
	if r.ClientCmd != "" || len(sc.Client.Command) > 0 {
		cr := r.runExternal(ctx, sc, cs.baseURL, cs.dir, cs.tracePath, r.ClientCmd, cs.scale, deadline, cs.sec, fleetMember{})
		if cr.exit != nil && strings.HasPrefix(cr.exit.Problem, "could not start") {
			// Not the client's failure: it never ran (a file-descriptor
			// limit, a missing program).
			res.Error, res.ErrorHint = "client "+cr.exit.Problem, cr.hint
			if strings.Contains(cr.exit.Problem, syscall.EMFILE.Error()) || strings.Contains(cr.exit.Problem, syscall.ENFILE.Error()) {
				res.Error, res.ErrorHint = "", ""
				r.infraFailed(ctx, res, "client ", errors.New(cr.exit.Problem))
			}
		}
		return cr
	}
	cctx, cancel := context.WithTimeout(ctx, deadline)
	cr, err := r.runBuiltin(cctx, sc, cs.baseURL, cs.tracePath, cs.runID, cs.scale, cs.log, fleetMember{})
	cancel()
	var ie *runfolder.InfraError
	if errors.As(err, &ie) || runfolder.IsInfraErr(err) {
		r.infraFailed(ctx, res, "", err)
	} else if err != nil {
		res.Error = err.Error()
	}
	if cr.problem != "" {
		res.Checks = append(res.Checks, verify.Check{Name: "client", Want: "the client finishes before the deadline",
			Got: cr.problem, Where: "trace.jsonl (built-in client)"})
	}
	return cr
}

// clientDeadline is when a client is stopped: expect.maxDuration as wall
// clock, else DefaultDeadline.
func clientDeadline(sc *scenario.Scenario) time.Duration {
	if sc.Expect.MaxDuration > 0 {
		return sc.Expect.MaxDuration.D()
	}
	return client.DefaultDeadline
}

// killedAtDeadline reports whether the client was stopped at its deadline.
func (cr clientRun) killedAtDeadline() bool {
	return (cr.exit != nil && strings.HasPrefix(cr.exit.Problem, "killed after ")) ||
		strings.HasPrefix(cr.problem, "stopped after ")
}

// verify observes a finished run (the mock's attempts and the client's
// trace), measures the noise around each wait, evaluates the scenario's
// checks and fills in res.
//
// ended, when not zero, is when the client ended (a fleet's client, whose
// run is verified after the others'); else it ended now.
func (r *Runner) verify(sc *scenario.Scenario, res *Result, attempts []mock.ServerAttempt, cr clientRun, tracePath string, scale float64, start time.Time, journalErr error, ended time.Time) {
	sc = verify.Met(sc, attempts) // an outage's draws as the attempts met them
	ob, notes := verify.Observe(sc, attempts, tracePath, scale)
	for _, n := range notes {
		r.logf(sc.Name, "warning: client trace: %s (line skipped)", n)
	}
	ob.Outcome = cr.outcome
	ob.Client = cr.exit
	ob.Unserved = cr.unserved
	if sc.Expect.Output != nil || cr.exit != nil {
		// An external client's output: expect.output and stitched_answer read it.
		ob.Stdout = verify.ReadStdout(filepath.Dir(tracePath))
	}
	ob.ClientKilled = cr.killedAtDeadline()
	if ob.ClientKilled {
		ob.Stopped = cr.stopped
	}
	ob.SelfReport, ob.SelfReportTypes = cr.report, verify.SelfReportTypes(cr.report)
	ob.Began = start
	ob.Telemetry = res.Telemetry
	if ended.IsZero() {
		ended = time.Now()
	}
	ob.Duration = ended.Sub(start)
	// Twice the worst timer lateness: a wait is one wake-up on the client
	// and one on the server side of the gap.
	ob.Slack = 2 * r.probe.Lateness(start, time.Now())
	ob.RemoteProxy = res.Path == mock.PathToxiproxy && r.Toxi != nil && !r.Toxi.Embedded()
	r.measureWaits(sc, &ob, attempts, cr)
	ob.SettleOutcome()
	if verify.KillIsOutcome(sc.Expect.Outcome, ob) {
		// The outcome check speaks for the built-in client's stop.
		res.Checks = slices.DeleteFunc(res.Checks, func(c verify.Check) bool { return c.Name == "client" })
	}
	env, err := verify.EnvelopeFor(sc)
	if err != nil {
		res.Error = err.Error()
		return
	}
	res.Checks = append(verify.Evaluate(sc, ob, env), res.Checks...)
	res.Checks = append(res.Checks, runChecks(journalErr, notes)...)
	res.Stalled = verify.StallChecks(res.Checks, cr.killedAtDeadline(), ob.Slack/2, clientDeadline(sc))
	fillResult(res, ob)
	res.Findings = verify.Findings(ob, sc)
}

// measureWaits gives each gap the contention measured around it: from
// shortly before the attempt ended (a late Ended shortens the gap) to just
// after the next one arrived (each probe sample covers the tick before it),
// and the client's own scheduling lag and sleep in it.
func (r *Runner) measureWaits(sc *scenario.Scenario, ob *verify.Observed, attempts []mock.ServerAttempt, cr clientRun) {
	for i, w := range ob.ServerWaits {
		k := w.After
		if k < 1 || k >= len(attempts) {
			continue
		}
		// From the previous attempt's arrival: on a loaded machine the mock
		// may stamp that attempt's end late, and what delayed it happened
		// before the stamp.
		from := attempts[k-1].Ended.Add(-client.GapLead)
		if a := attempts[k-1].Arrived; a.Before(from) {
			from = a
		}
		end := verify.WaitEnd(sc, attempts, k)
		ob.ServerWaits[i].Slack = max(2*r.probe.Lateness(from, end.Add(client.ProbeTick)), time.Microsecond)
		if cr.pgid != 0 {
			ob.ServerWaits[i].ClientLag, ob.ServerWaits[i].ClientLagMeasured = r.lag.Wait(cr.pgid, attempts[k-1].Ended, end)
		}
		ob.ServerWaits[i].Sleep = verify.SleepIn(cr.sleeps, attempts[k-1], end)
	}
}

// runChecks are the checks of the run itself: a journal that could not be
// written fails; malformed trace lines, which were skipped, are a note.
func runChecks(journalErr error, notes []string) []verify.Check {
	var cs []verify.Check
	if journalErr != nil {
		cs = append(cs, verify.Check{Name: "journal", Want: "every attempt journaled",
			Got: journalErr.Error(), Where: "server.jsonl, mock.log"})
	}
	if len(notes) > 0 {
		cs = append(cs, verify.Check{Name: "trace", Passed: true, Want: "well-formed JSONL",
			Got: fmt.Sprintf("malformed lines skipped: %s", strings.Join(notes, "; ")), Where: "trace.jsonl"})
	}
	return cs
}

// fillResult copies what was observed into the result: outcome, attempts,
// failure types, waits on both sides, escalations and error reports.
func fillResult(res *Result, ob verify.Observed) {
	res.LatenessMs = (ob.Slack / 2).Milliseconds()
	res.Outcome = ob.Outcome
	if c := ob.Client; c != nil && c.ExitCode >= 0 {
		code := c.ExitCode
		res.ExitCode = &code
	}
	res.Attempts = ob.ServerAttempts
	res.FailureTypes, _ = ob.FailureTypes()
	for _, w := range ob.ClientWaits() {
		res.DelaysMs.Client = append(res.DelaysMs.Client, w.Delay.Milliseconds())
	}
	for _, w := range ob.ServerWaits {
		res.DelaysMs.Server = append(res.DelaysMs.Server, w.Gap.Milliseconds())
		slack := w.Slack
		if slack == 0 {
			slack = ob.Slack
		}
		if w.ClientLagMeasured {
			slack += w.ClientLag
		}
		res.DelaysMs.Noise = append(res.DelaysMs.Noise, slack.Milliseconds())
	}
	for i, e := range ob.Escalations {
		esc := scenario.Escalation{From: e.From, To: e.To, Reason: e.Reason}
		if ob.EscalationsFromServer {
			esc.Attempt = ob.ModelSwitches[i]
		}
		res.Escalations = append(res.Escalations, esc)
	}
	res.ErrorReports, res.ErrorReportsOmitted = ob.ErrorReports, ob.ErrorReportsOmitted
}

func failedCheckNames(cs []verify.Check) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}
