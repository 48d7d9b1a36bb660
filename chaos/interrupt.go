package chaos

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// What an interrupted run writes, and when.
//
// The moment the run's context ends (SIGINT, SIGTERM), the Runner writes
// summary.json from what it knows then: the results of the scenarios that
// finished, every other scenario interrupted ("unfinished" once started,
// "not started" else). It calls Runner.OnInterrupt with that summary (the
// CLI writes junit.xml from it), and only then deletes the run's proxies
// (each within CleanupTimeout) and waits for the scenarios to stop: killing
// a client, ending an attempt in progress, a slow proxy API, a supervisor
// waiting on its client's group may all take time, and none of it can lose
// what finished. When every scenario has stopped, Run writes summary.json
// again, complete. A process that must exit before that (the CLI's grace
// period ended) calls Runner.Flush, which makes sure of the first write.

// ledger is what each scenario of a run has come to: not started, running,
// or finished with a result. Safe for concurrent use.
type ledger struct {
	mu      sync.Mutex
	running []bool
	done    []bool
	results []Result
}

func newLedger(n int) *ledger {
	return &ledger{running: make([]bool, n), done: make([]bool, n), results: make([]Result, n)}
}

// start records that scenario i has started.
func (l *ledger) start(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running[i] = true
}

// finish records scenario i's result (its first run's, then its confirmed
// one).
func (l *ledger) finish(i int, res Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.results[i], l.done[i] = res, true
}

// interim writes, once, the summary of an interrupted run as known when the
// interrupt came.
type interim struct {
	r       *Runner
	scs     []*Scenario
	dir     string
	start   time.Time
	led     *ledger
	once    sync.Once
	written chan struct{} // closed once the write has ended (or sealed)
	reason  string        // why the run was interrupted, once written
	running []int         // the scenarios unfinished at the write (for flush)
}

func newInterim(r *Runner, scs []*Scenario, dir string, start time.Time) *interim {
	return &interim{r: r, scs: scs, dir: dir, start: start, led: newLedger(len(scs)), written: make(chan struct{})}
}

// watch writes the interim summary when ctx ends (and then deletes the
// run's proxies), or does nothing once stop is closed (the run ended
// first). The caller waits for it to return.
func (iw *interim) watch(ctx context.Context, stop <-chan struct{}) {
	select {
	case <-stop:
		return
	case <-ctx.Done():
	}
	iw.write(interruptReason(ctx))
	if iw.r.Toxi != nil {
		if err := iw.r.Toxi.DeleteAll(CleanupTimeout); err != nil {
			iw.r.logf("run", "deleting the run's proxies after the interrupt: %v (tried again at exit)", err)
		}
	}
}

// write writes summary.json and calls OnInterrupt, once, from what the
// ledger holds now. It takes no lock that progress output holds: a
// blocked stderr must not hold it.
func (iw *interim) write(reason string) {
	iw.once.Do(func() {
		defer close(iw.written)
		iw.reason = reason
		sum := iw.summary(reason)
		err := sum.Write()
		if iw.r.OnInterrupt != nil {
			err = errors.Join(err, iw.r.OnInterrupt(sum))
		}
		if err != nil {
			iw.r.logf("run", "writing what finished before the interrupt: %v", err)
		}
	})
}

// summary is the run's summary as the ledger holds it: finished results
// as they are, the rest interrupted for reason.
func (iw *interim) summary(reason string) *Summary {
	sum := iw.r.newSummary(iw.dir)
	iw.led.mu.Lock()
	defer iw.led.mu.Unlock()
	for i, sc := range iw.scs {
		sdir := filepath.Join(iw.dir, sc.Name)
		switch {
		case iw.led.done[i]:
			sum.Scenarios = append(sum.Scenarios, iw.led.results[i])
		case iw.led.running[i]:
			sum.Scenarios = append(sum.Scenarios, iw.r.interruptedResult(sc, sdir, "unfinished: "+reason))
			iw.running = append(iw.running, i)
		default:
			sum.Scenarios = append(sum.Scenarios, iw.r.interruptedResult(sc, sdir, "not started: "+reason))
		}
	}
	sum.DurationMs = time.Since(iw.start).Milliseconds()
	sum.Finish()
	return sum
}

// seal ends the interim's use: Run has ended, and what it writes next is
// complete, so that a late flush must not replace it.
func (iw *interim) seal() { iw.once.Do(func() { close(iw.written) }) }

// flush makes sure, within d, that the interim summary is written (writing
// it now if the watcher has not yet), and writes result.json, interrupted,
// in the folder of every scenario that was unfinished then and has none.
func (iw *interim) flush(d time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		iw.write("the run was interrupted")
		iw.led.mu.Lock()
		defer iw.led.mu.Unlock()
		for _, i := range iw.running {
			sc := iw.scs[i]
			sdir := filepath.Join(iw.dir, sc.Name)
			path := filepath.Join(sdir, "result.json")
			if _, err := os.Lstat(path); !iw.led.done[i] && errors.Is(err, os.ErrNotExist) {
				if _, err := os.Stat(sdir); err == nil {
					_ = writeJSON(path, iw.r.interruptedResult(sc, sdir, "unfinished: "+iw.reason))
				}
			}
		}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
