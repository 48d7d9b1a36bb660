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
	"time"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
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
	// Admit, if set, admits external clients by the CPU the running ones
	// use (client.Admission) instead of ExternalParallel's count; it may
	// be shared with other Runners running at the same time.
	Admit *client.Admission
	// OnResult, if set, is called with each scenario's first run's result
	// once it is recorded (Interim has it), from the scenario's
	// goroutine: calls overlap. chaos probe starts what depends on a
	// group of scenarios as soon as the group has finished. It must not
	// block for long.
	OnResult func(Result)
	// InheritEnv names variables of the runner's environment every
	// external client gets, beside its scenario's client.inheritEnv
	// (--inherit-env; each name one InheritEnvProblem accepts).
	InheritEnv []string
	// Proxy says which scenarios run behind a Toxiproxy proxy (--proxy):
	// auto ("" too), those whose faults need it; always, every one.
	Proxy mock.ProxyMode
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
			defer func() {
				led.finish(i, results[i])
				if r.OnResult != nil {
					r.OnResult(results[i])
				}
			}()
			defer func() { r.firstRunEnded(results[i]) }()
			// An external client is a process of its own (a Node runtime
			// loading an SDK costs a CPU for a few hundred milliseconds):
			// dozens at once on two cores would make every one of them late
			// and every timing check inconclusive. They take a second slot
			// first, so that a waiting one holds no general slot.
			sdir := filepath.Join(dir, sc.Name)
			sctx := ctx
			switch external := r.ClientCmd != "" || len(sc.Client.Command) > 0; {
			case external && r.Admit != nil:
				t, ok := r.Admit.Acquire(ctx, i)
				if !ok {
					results[i] = r.notStarted(ctx, sc, sdir)
					return
				}
				defer t.Release()
				sctx = client.WithTicket(ctx, t)
			case external:
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
			results[i] = r.firstRun(sctx, sc, sdir)
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
