package chaos

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
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

// Runner runs scenarios, each against its own mock server and proxy, and
// writes one run folder per invocation:
//
//	<Out>/<timestamp>/<scenario>/{trace.jsonl, server.jsonl, result.json, mock.log, report.txt, stdout.txt, stderr.txt}
//	<Out>/<timestamp>/summary.json
//
// The caller owns Toxi and closes it.
type Runner struct {
	Toxi      *mock.Toxiproxy
	ToxiName  string  // "embedded" or the toxiproxy-server URL, for the summary
	Out       string  // base folder, default "runs"
	Parallel  int     // scenarios at once; 0 means all
	TimeScale float64 // > 0 overrides every scenario's timeScale
	// ClientCmd, if set, is run with `sh -c` as the client of every scenario.
	ClientCmd string
	Seed      int64 // jitter seed, recorded in summary.json and every result.json
	// ExternalParallel bounds how many scenarios with an external client
	// run at once; 0 means 2 × GOMAXPROCS (at least 2).
	ExternalParallel int
	// InheritEnv names variables of the runner's environment every
	// external client gets, beside its scenario's client.inheritEnv
	// (--inherit-env; each name one InheritEnvProblem accepts).
	InheritEnv []string
	// ConfirmParallel is how many scenarios are re-run at once to confirm
	// (Confirm) after every first run has ended; 0 means GOMAXPROCS/2, at
	// least 1.
	ConfirmParallel int
	// Confirm is how many times at most a scenario whose timing checks
	// failed or were inconclusive is re-run (the CLI's --confirm, default
	// 2); 0 reports the first run as it is.
	Confirm  int
	Shard    string    // "I/N" when running one shard; recorded in summary.json
	Progress io.Writer // progress lines (stderr); nil discards
	// Live draws a board of the running scenarios on Progress, a
	// terminal, redrawn in place, and prints each scenario's end once
	// above it (board.go); otherwise progress is plain lines (CI logs).
	// Color adds ANSI colours.
	Live, Color bool
	// TermSize, if set, is the size of Progress's terminal in cells, asked
	// at each redraw of the Live board; nil asks the terminal itself
	// (80 × 24 when it cannot tell).
	TermSize func() (width, height int)
	Now      func() time.Time
	// OnInterrupt, if set, is called when Run's context ends before the
	// run does, with the summary as known then (finished results, the
	// rest interrupted), just after it is written to summary.json and
	// before anything slow is awaited (see interrupt.go); and again by
	// Flush. Calls do not overlap, and none comes once Run has returned.
	// The CLI writes junit.xml from it. It must not block for long.
	OnInterrupt func(*Summary) error
	// OnScenario, if set, is called when a run of a scenario starts (done
	// false) and when it has ended and its result is written (done true),
	// re-runs to confirm included, from the scenario's goroutine: calls
	// for different scenarios overlap. chaos probe times its scenarios
	// with it to say when it expects to end. It must not block for long.
	OnScenario func(name string, done bool)
	// StartGrace, when above 0, makes an external client's deadline
	// (expect.maxDuration, else the default) count from its first request
	// at the mock, not from its start, so that a slow start-up (an agent
	// loading for 10s) is not taken from the time its scenario allows;
	// a client that sends no request within StartGrace of its start is
	// killed then. A client runs at most StartGrace + the deadline. 0: the
	// deadline counts from the client's start.
	StartGrace time.Duration

	mu sync.Mutex // serializes Progress lines
	// stopInfra stops the whole run when its infrastructure fails (the
	// proxy, the file-descriptor limit): every other scenario would only
	// wait for it, then fail for it.
	stopInfra context.CancelCauseFunc
	board     *board
	probe     *client.Probe
	lag       *client.LagMeter
	interim   atomic.Pointer[interim] // the running Run's, for Flush
	// firsts holds each running scenario's Env.FirstRequest by run folder,
	// for an external client's deadline (StartGrace).
	firsts sync.Map
	// tels holds each running scenario's OTLP receiver by run folder, for
	// runExternal to put in the client's environment.
	tels sync.Map
}

// Run runs scs in parallel and returns their summary, already written to
// summary.json. An error means no verdict could be produced at all (e.g. the
// run folder could not be created: the summary is nil) or that summary.json
// could not be written (the summary is returned with the error, so that it
// can still be reported); a failing scenario is not an error. When ctx ends
// first, what finished is written at once (see OnInterrupt), and the
// summary Run returns marks the rest interrupted.
func (r *Runner) Run(ctx context.Context, scs []*scenario.Scenario) (*Summary, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	start := now()
	out := r.Out
	if out == "" {
		out = "runs"
	}
	dir, err := makeRunDir(out, start)
	if err != nil {
		return nil, err
	}
	sum := r.newSummary(dir)
	iw := newInterim(r, scs, dir, start)
	r.interim.Store(iw)
	// The board is in place before anything logs: the interrupt's watch
	// (below) logs through it too.
	r.board = nil
	if r.Live && r.Progress != nil {
		size := r.TermSize
		if size == nil {
			size = termSize(r.Progress)
		}
		r.board = newBoard(r.Progress, r.Color, size, r.announceSkips(scs))
		r.board.draw()
	} else {
		r.announceSkips(scs)
	}
	stopWatch, watched := make(chan struct{}), make(chan struct{})
	// The caller's context: an infrastructure stop (below) is no interrupt.
	go func(ctx context.Context) { defer close(watched); iw.watch(ctx, stopWatch) }(ctx)
	ctx, r.stopInfra = context.WithCancelCause(ctx)
	defer r.stopInfra(nil)
	r.probe = &client.Probe{}
	r.lag = client.NewLagMeter()
	defer r.lag.Close()
	pctx, stopProbe := context.WithCancel(ctx)
	defer stopProbe()
	go r.probe.Run(pctx)
	results := r.runAll(ctx, scs, dir, iw.led)
	r.confirmAll(ctx, scs, results, dir, iw.led)
	r.board.close()
	// The interim summary, if any, is written; what follows replaces it.
	close(stopWatch)
	<-watched
	sum.Scenarios = results
	sum.DurationMs = time.Since(start).Milliseconds()
	sum.Finish()
	iw.seal(sum)
	return sum, sum.Write()
}

// newSummary is the summary of a run in dir, before its scenarios.
func (r *Runner) newSummary(dir string) *Summary {
	return &Summary{Schema: SummarySchema, RunDir: dir, Seed: r.Seed, Toxiproxy: r.ToxiName, Shard: r.Shard}
}

// record records res as the result of the scenario whose folder is dir,
// for the summary an interrupt writes (see interrupt.go).
func (r *Runner) record(dir string, res Result) {
	if iw := r.interim.Load(); iw != nil {
		iw.led.record(dir, res)
	}
}

// Flush is for a process that must exit before Run returns (the CLI's
// grace period after an interrupt ended): within d, it writes summary.json
// (and OnInterrupt's files) once more with what has finished by now, and
// an interrupted result.json for each scenario unfinished now that has
// none. It deletes no proxy: the owner of Toxi
// calls Toxi.DeleteAll. It does nothing once Run has returned.
func (r *Runner) Flush(d time.Duration) {
	if iw := r.interim.Load(); iw != nil {
		iw.flush(d)
	}
}

// Interim is for a process that must exit before Run returns, as Flush
// is: the summary of the run as known now (what Flush writes: finished
// results, the rest interrupted), for the CLI to print as its report. It
// is built in memory and waits on nothing (not on a write that blocks);
// nil before Run starts and from the moment Run has its own summary (as
// it ends: Last).
func (r *Runner) Interim() *Summary {
	if iw := r.interim.Load(); iw != nil {
		return iw.snapshot()
	}
	return nil
}

// Last is the summary of the last Run as Run returns it, from the moment
// Run has it (just before it writes summary.json and returns), until the
// next Run starts: for a caller that runs several batches and must say
// what finished between two of them (chaos probe's Interim), where
// Interim is nil. It waits on nothing. nil before a Run has it.
func (r *Runner) Last() *Summary {
	if iw := r.interim.Load(); iw != nil {
		if f := iw.final.Load(); f != nil {
			s := *f
			return &s
		}
	}
	return nil
}

// runAll runs the first run of every scenario, at most Parallel at once
// (and fewer external clients), recording each in led as it starts and
// ends; once ctx ends, those not started are marked so.
func (r *Runner) runAll(ctx context.Context, scs []*scenario.Scenario, dir string, led *ledger) []Result {
	results := make([]Result, len(scs))
	par := r.Parallel
	if par <= 0 || par > len(scs) {
		par = len(scs)
	}
	sem := make(chan struct{}, max(par, 1))
	ext := make(chan struct{}, r.externalParallel())
	var wg sync.WaitGroup
	for i, sc := range scs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { led.finish(i, results[i]) }()
			defer func() { r.firstRunEnded(results[i]) }()
			// An external client is a process of its own (a Node runtime
			// loading an SDK costs a CPU for a few hundred milliseconds):
			// dozens at once on two cores would make every one of them late
			// and every timing check inconclusive. They take a second slot
			// first, so that a waiting one holds no general slot.
			sdir := filepath.Join(dir, sc.Name)
			if r.ClientCmd != "" || len(sc.Client.Command) > 0 {
				if !acquire(ctx, ext) {
					results[i] = r.notStarted(ctx, sc, sdir)
					return
				}
				defer func() { <-ext }()
			}
			if !acquire(ctx, sem) {
				results[i] = r.notStarted(ctx, sc, sdir)
				return
			}
			defer func() { <-sem }()
			led.start(i)
			results[i] = r.firstRun(ctx, sc, sdir)
		}()
	}
	wg.Wait()
	return results
}

// acquire takes a slot of sem, or returns false once ctx ends first.
func acquire(ctx context.Context, sem chan struct{}) bool {
	if ctx.Err() != nil {
		return false
	}
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// interruptReason says why ctx ended, for a scenario it left unfinished:
// its cause ("interrupted by SIGINT") when it has one.
func interruptReason(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil && c != ctx.Err() {
		return c.Error()
	}
	return "the run was interrupted"
}

// infraCause returns the infrastructure error that stopped the run, if
// that is why ctx ended.
func infraCause(ctx context.Context) *runfolder.InfraError {
	var ie *runfolder.InfraError
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &ie) {
		return ie
	}
	return nil
}

// infraFailed records err, from setting up or running a scenario, in res;
// when it is a failure of the run's infrastructure it stops the whole run.
func (r *Runner) infraFailed(ctx context.Context, res *Result, what string, err error) {
	if ctx.Err() != nil {
		return // interrupted (or stopped already): not this scenario's error
	}
	res.Error = what + err.Error()
	var ie *runfolder.InfraError
	if !errors.As(err, &ie) {
		ie = &runfolder.InfraError{Err: fmt.Errorf("%s: %s%w", res.Name, what, err)}
	}
	r.logf(res.Name, "stopping the run: %v", ie)
	if r.stopInfra != nil {
		r.stopInfra(ie)
	}
}

// notStarted records a scenario that an interrupted (or stopped) run never
// started.
func (r *Runner) notStarted(ctx context.Context, sc *scenario.Scenario, dir string) Result {
	res := r.interruptedResult(sc, dir, "not started: "+interruptReason(ctx))
	if ie := infraCause(ctx); ie != nil {
		res.Verdict, res.Interrupted, res.Error = VerdictError, "", "not started: "+ie.Error()
	}
	r.logf(sc.Name, "%s: %s%s", strings.ToUpper(res.Verdict), res.Interrupted, res.Error)
	return res
}

// interruptedResult is the result of a scenario an interrupt left
// unfinished (or never started): why says which.
func (r *Runner) interruptedResult(sc *scenario.Scenario, dir, why string) Result {
	scale := sc.TimeScale
	if r.TimeScale > 0 {
		scale = r.TimeScale
	}
	res := newResult(sc, dir, r.Seed, scale, r.clientName(sc))
	res.Verdict, res.Interrupted = VerdictInterrupted, why
	return res
}

// clientName is the client of sc as results name it.
func (r *Runner) clientName(sc *scenario.Scenario) string {
	switch {
	case r.ClientCmd != "":
		return r.ClientCmd
	case len(sc.Client.Command) > 0:
		return strings.Join(sc.Client.Command, " ")
	}
	return "built-in"
}

func (r *Runner) externalParallel() int {
	if r.ExternalParallel > 0 {
		return r.ExternalParallel
	}
	return max(2, 2*runtime.GOMAXPROCS(0))
}

// makeRunDir creates <out>/<timestamp>, adding -2, -3... if two invocations
// start within the same second.
func makeRunDir(out string, t time.Time) (string, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", &runfolder.OutputError{What: "--out", Path: out, Err: err}
	}
	base := filepath.Join(out, t.UTC().Format("2006-01-02T15-04-05Z"))
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) || i > 100 {
			return "", &runfolder.OutputError{What: "--out", Path: dir, Err: err}
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// scenarioSeed derives a scenario's jitter seed from the run seed and its
// name, so that a scenario's jitter does not depend on what ran beside it.
func scenarioSeed(seed int64, name string) (uint64, uint64) {
	h := fnv.New64a()
	h.Write([]byte(name))
	return uint64(seed), h.Sum64()
}

// clientRun is what a client produced.
type clientRun struct {
	outcome string
	exit    *client.ClientExit // external clients only
	pgid    int                // external clients: the process group the lag meter watched; 0 if none
	sleeps  []retry.Sleep      // the built-in client's waits as it slept them
	problem string             // the built-in client: why it was stopped, or ""
	hint    string             // an external client that could not start: what to do
	report  *otlp.Account      // external clients: their account from their telemetry; nil if none
	// unserved are the side requests the mock answered 404 or 405
	// ("POST /chat/completions"), for a hint on a wrong base URL.
	unserved []string
}

// firstRun runs one scenario once, or skips it when its client's
// requirements are missing.
func (r *Runner) firstRun(ctx context.Context, sc *scenario.Scenario, dir string) Result {
	if ctx.Err() != nil {
		return r.notStarted(ctx, sc, dir)
	}
	if m := r.missingRequirement(sc); m != nil {
		return r.skip(sc, dir, m)
	}
	return r.runOnce(ctx, sc, dir)
}

// firstRunEnded tells the board that a scenario's first run has ended:
// the scenario has ended, or it waits to be re-run to confirm its verdict
// (confirmAll ends it).
func (r *Runner) firstRunEnded(res Result) {
	if r.needsConfirm(res) {
		r.board.hold(res.Name)
	} else {
		r.board.finish(res.Name, res.Verdict)
	}
}

// needsConfirm reports whether a first run's verdict waits for re-runs:
// its only failed or inconclusive checks are timing checks.
func (r *Runner) needsConfirm(res Result) bool {
	return !res.Passed && res.Interrupted == "" && res.Verdict != VerdictSkipped && r.Confirm > 0 && res.timingOnly()
}

// confirmAll re-runs, once every first run has ended, the scenarios whose
// verdict waits for confirmation, ConfirmParallel at a time: a timing check
// that a loaded moment made fail or inconclusive is tried again when the
// suite no longer competes with it for the CPU, instead of beside the same
// load that disturbed it.
func (r *Runner) confirmAll(ctx context.Context, scs []*scenario.Scenario, results []Result, dir string, led *ledger) {
	par := r.ConfirmParallel
	if par <= 0 {
		par = max(1, runtime.GOMAXPROCS(0)/2)
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, sc := range scs {
		if !r.needsConfirm(results[i]) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { r.board.finish(sc.Name, results[i].Verdict) }()
			if !acquire(ctx, sem) {
				return // interrupted: the first run's verdict stands
			}
			defer func() { <-sem }()
			results[i] = r.confirm(ctx, sc, filepath.Join(dir, sc.Name), results[i])
			led.finish(i, results[i])
		}()
	}
	wg.Wait()
}

// confirm re-runs a scenario whose first run (res) failed or could not tell
// only on timing checks, up to r.Confirm times: a failure is reported only
// when it reproduces (two runs failed), a pass on a re-run passes (marked as
// such), and a scenario that could not tell on any run is inconclusive. The
// result keeps the first run's figures; each re-run has its own folder,
// <dir>/rerun-N.
func (r *Runner) confirm(ctx context.Context, sc *scenario.Scenario, dir string, res Result) Result {
	fails := 0
	if res.Verdict == VerdictFail {
		fails++
	}
	for run := 2; run <= r.Confirm+1 && fails < 2 && ctx.Err() == nil; run++ {
		why := append(failedCheckNames(res.failedChecks()), failedCheckNames(res.inconclusiveChecks())...)
		r.logf(sc.Name, "run %d of at most %d, to confirm (%s)", run, r.Confirm+1, strings.Join(why, ", "))
		rr := r.runOnce(ctx, sc, filepath.Join(dir, fmt.Sprintf("rerun-%d", run)))
		if ctx.Err() != nil {
			// An interrupted re-run proves nothing either way: the
			// scenario keeps its first run's verdict.
			r.logf(sc.Name, "run %d interrupted; the first run's verdict stands", run)
			break
		}
		res.Reruns = append(res.Reruns, Rerun{Run: run, Verdict: rr.Verdict, Checks: rr.NotPassedChecks(),
			DelaysMs: rr.DelaysMs, LatenessMs: rr.LatenessMs, Dir: rr.Dir})
		if rr.Verdict == VerdictFail {
			fails++
		}
		if rr.Passed {
			res.Verdict, res.Passed, res.PassedOnRerun = VerdictPass, true, true
			break
		}
	}
	if !res.Passed && len(res.Reruns) > 0 {
		res.Verdict = VerdictInconclusive
		if fails >= 2 {
			res.Verdict = VerdictFail
		}
	}
	r.logf(sc.Name, "%s after %d runs", strings.ToUpper(res.Verdict), len(res.Reruns)+1)
	r.record(dir, res)
	if err := writeJSON(filepath.Join(dir, "result.json"), res); err != nil && res.Error == "" {
		res.Error = err.Error()
	}
	return res
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
	env, err := mock.StartEnv(ctx, mock.EnvConfig{Scenario: sc, Toxi: r.Toxi, Journal: journal, RunID: runID, Log: mockLog,
		OnSecret: sec.Add, OnAttempt: r.attemptLogger(sc)})
	if err != nil {
		// The mock could not listen or the proxy could not be created:
		// every other scenario would meet the same.
		r.infraFailed(ctx, &res, "start mock and proxy: ", err)
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
	// Close before reading the attempts: a client that retried at once may
	// have finished while the mock was still switching the proxy to the
	// next attempt (a slow proxy API call on a loaded machine), before it
	// recorded the previous attempt's end. Close waits for every attempt
	// to be recorded; read earlier, one would have a zero end and a gap of
	// 2562047h.
	if err := env.Close(); err != nil {
		r.logf(sc.Name, "closing mock and proxy: %v", err)
	}
	attempts := env.Attempts()
	res.Attempts = len(attempts)
	cr.unserved = verify.Unserved(env.SideRequests())
	journalErr := env.JournalErr()
	if journalErr == nil {
		journalErr = journal.Close()
	}
	logw.Flush()
	if res.Error != "" || !finished {
		return res
	}
	r.verify(sc, &res, attempts, cr, tracePath, scale, start, journalErr)
	return res
}

// newResult is a scenario's result before it runs.
func newResult(sc *scenario.Scenario, dir string, seed int64, scale float64, client string) Result {
	res := Result{Name: sc.Name, File: sc.File, Description: sc.Description, Seed: seed, TimeScale: scale,
		Dir: dir, Client: client, FailureTypes: []string{}, Escalations: []scenario.Escalation{}, Checks: []verify.Check{}}
	for _, f := range sc.Attempts {
		res.Faults = append(res.Faults, mock.DescribeFault(f))
	}
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
		met := "ok"
		if a.N-1 < len(sc.Attempts) {
			met = mock.DescribeFault(sc.Attempts[a.N-1])
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
// ends or its deadline (expect.maxDuration, else defaultDeadline) passes.
// A client that could not be started, or infrastructure that failed under
// it, sets res.Error; the built-in client's own problem becomes a check.
func (r *Runner) runClient(ctx context.Context, sc *scenario.Scenario, res *Result, cs clientSetup) clientRun {
	deadline := clientDeadline(sc)
	if r.ClientCmd != "" || len(sc.Client.Command) > 0 {
		cr := r.runExternal(ctx, sc, cs.baseURL, cs.dir, cs.tracePath, r.ClientCmd, cs.scale, deadline, cs.sec)
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
	cr, err := r.runBuiltin(cctx, sc, cs.baseURL, cs.tracePath, cs.runID, cs.scale, cs.log)
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
// clock, else defaultDeadline.
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
func (r *Runner) verify(sc *scenario.Scenario, res *Result, attempts []mock.ServerAttempt, cr clientRun, tracePath string, scale float64, start time.Time, journalErr error) {
	ob, notes := verify.Observe(sc, attempts, tracePath, scale)
	for _, n := range notes {
		r.logf(sc.Name, "warning: client trace: %s (line skipped)", n)
	}
	ob.Outcome = cr.outcome
	ob.Client = cr.exit
	ob.Unserved = cr.unserved
	if sc.Expect.Output != nil {
		ob.Stdout = verify.ReadStdout(filepath.Dir(tracePath))
	}
	ob.SelfReport, ob.SelfReportTypes = cr.report, verify.SelfReportTypes(cr.report)
	ob.Began = start
	ob.Telemetry = res.Telemetry
	ob.Duration = time.Since(start)
	// Twice the worst timer lateness: a wait is one wake-up on the client
	// and one on the server side of the gap.
	ob.Slack = 2 * r.probe.Lateness(start, time.Now())
	ob.RemoteProxy = r.Toxi != nil && !r.Toxi.Embedded()
	r.measureWaits(sc, &ob, attempts, cr)
	env, err := verify.EnvelopeFor(sc)
	if err != nil {
		res.Error = err.Error()
		return
	}
	res.Checks = append(verify.Evaluate(sc, ob, env), res.Checks...)
	res.Checks = append(res.Checks, runChecks(journalErr, notes)...)
	res.Stalled = verify.StallChecks(res.Checks, cr.killedAtDeadline(), ob.Slack/2, clientDeadline(sc))
	fillResult(res, ob)
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

// Shard returns the scenarios of shard i (1-based) of n: every n-th
// scenario in name order, starting with the i-th.
func Shard(scs []*scenario.Scenario, i, n int) []*scenario.Scenario {
	var out []*scenario.Scenario
	for k, sc := range scs {
		if k%n == i-1 {
			out = append(out, sc)
		}
	}
	return out
}
