package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/retrylab/retrylab/chaos/scenario"
)

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
