package chaos

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// What an interrupted run writes, and when.
//
// The moment the run's context ends (SIGINT, SIGTERM), the Runner writes
// summary.json from what it knows then: the results of the scenarios that
// finished (a scenario's result is recorded before its result.json is
// written, so the two never disagree), every other scenario interrupted
// ("unfinished" once started, "not started" else). It calls
// Runner.OnInterrupt with that summary (the CLI writes junit.xml from it),
// and only then deletes the run's proxies (each within CleanupTimeout) and
// waits for the scenarios to stop: killing a client, ending an attempt in
// progress, a slow proxy API, a supervisor waiting on its client's group
// may all take time, and none of it can lose what finished. When every
// scenario has stopped, Run writes summary.json again, complete. A process
// that must exit before that (the CLI's grace period ended) calls
// Runner.Flush, which writes it once more as known then, and may print
// Runner.Interim, the same summary, taken without waiting on any write.

// ledger is what each scenario of a run has come to: not started, running,
// or finished with a result. Safe for concurrent use.
type ledger struct {
	mu      sync.Mutex
	running []bool
	done    []bool
	results []Result
	index   map[string]int // a scenario's folder → its index
}

func newLedger(dirs []string) *ledger {
	n := len(dirs)
	l := &ledger{running: make([]bool, n), done: make([]bool, n), results: make([]Result, n), index: map[string]int{}}
	for i, d := range dirs {
		l.index[d] = i
	}
	return l
}

// record records res as the result of the scenario whose folder is dir,
// if dir is one (a re-run's folder is not): what a result.json says, the
// summary says too, so it is recorded before result.json is written.
func (l *ledger) record(dir string, res Result) {
	if i, ok := l.index[dir]; ok {
		l.finish(i, res)
	}
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

// interim writes the summary of an interrupted run as known when the
// interrupt came (and again, as known then, if the process must exit
// before Run returns), until Run seals it.
type interim struct {
	r     *Runner
	scs   []*scenario.Scenario
	dirs  []string // each scenario's folder
	dir   string
	start time.Time
	led   *ledger

	mu     sync.Mutex              // serialises writes and seal
	sealed atomic.Bool             // set under mu; read without it by snapshot
	final  atomic.Pointer[Summary] // the run's own summary, from seal on
	reason atomic.Pointer[string]  // why the run was interrupted, from the first write
}

func newInterim(r *Runner, scs []*scenario.Scenario, dir string, start time.Time) *interim {
	dirs := make([]string, len(scs))
	for i, sc := range scs {
		dirs[i] = filepath.Join(dir, sc.Name)
	}
	return &interim{r: r, scs: scs, dirs: dirs, dir: dir, start: start, led: newLedger(dirs)}
}

// watch writes the interim summary when ctx ends, then deletes every proxy
// of the run's Toxiproxy (one serves one invocation: see Toxiproxy), or
// does nothing once stop is closed (the run ended first). The caller waits
// for it to return.
func (iw *interim) watch(ctx context.Context, stop <-chan struct{}) {
	select {
	case <-stop:
		return
	case <-ctx.Done():
	}
	iw.write(interruptReason(ctx))
	if iw.r.Toxi != nil {
		if err := iw.r.Toxi.DeleteAll(mock.CleanupTimeout); err != nil {
			iw.r.logf("run", "deleting the run's proxies after the interrupt: %v (tried again at exit)", err)
		}
	}
}

// write writes summary.json and calls OnInterrupt from what the ledger
// holds now, unless Run has sealed the interim; reason is kept from the
// first write. The files come first: progress output (a logged error),
// which a full stderr may block, comes after them.
func (iw *interim) write(reason string) {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	if iw.sealed.Load() {
		return
	}
	iw.reason.CompareAndSwap(nil, &reason)
	sum, _ := iw.summary(iw.why())
	err := sum.Write()
	if iw.r.OnInterrupt != nil {
		err = errors.Join(err, iw.r.OnInterrupt(sum))
	}
	if err != nil {
		iw.r.logf("run", "writing what finished before the interrupt: %v", err)
	}
}

// summary is the run's summary as the ledger holds it: finished results
// as they are, the rest interrupted for reason; unfinished lists the
// scenarios that had started and not finished.
func (iw *interim) summary(reason string) (sum *Summary, unfinished []int) {
	sum = iw.r.newSummary(iw.dir)
	iw.led.mu.Lock()
	defer iw.led.mu.Unlock()
	for i, sc := range iw.scs {
		switch {
		case iw.led.done[i]:
			sum.Scenarios = append(sum.Scenarios, iw.led.results[i])
		case iw.led.running[i]:
			sum.Scenarios = append(sum.Scenarios, iw.r.interruptedResult(sc, iw.dirs[i], "unfinished: "+reason))
			unfinished = append(unfinished, i)
		default:
			sum.Scenarios = append(sum.Scenarios, iw.r.interruptedResult(sc, iw.dirs[i], "not started: "+reason))
		}
	}
	sum.DurationMs = time.Since(iw.start).Milliseconds()
	sum.Finish()
	return sum, unfinished
}

// why is the reason of the first write, or a general one before it.
func (iw *interim) why() string {
	if r := iw.reason.Load(); r != nil {
		return *r
	}
	return "the run was interrupted"
}

// snapshot is the summary as the ledger holds it now, what flush writes,
// or nil once Run has sealed the interim. It waits on no write (a file
// that blocks holds mu): a process exiting at once can still print it.
func (iw *interim) snapshot() *Summary {
	if iw.sealed.Load() {
		return nil
	}
	sum, _ := iw.summary(iw.why())
	return sum
}

// seal ends the interim's use: Run has its own summary, sum (Last from
// now on), and what it writes next is complete, so that a late flush must
// not replace it.
func (iw *interim) seal(sum *Summary) {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	iw.final.Store(sum)
	iw.sealed.Store(true)
}

// flush, within d, writes the summary again as the ledger holds it now
// (what finished since the interrupt counts), and result.json, interrupted,
// in the folder of every scenario unfinished now that has none; a
// scenario's own result.json, once written, is never replaced.
func (iw *interim) flush(d time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		iw.write("the run was interrupted")
		iw.mu.Lock()
		defer iw.mu.Unlock()
		if iw.sealed.Load() {
			return
		}
		_, unfinished := iw.summary(iw.why())
		for _, i := range unfinished {
			path := filepath.Join(iw.dirs[i], "result.json")
			if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
				if _, err := os.Stat(iw.dirs[i]); err == nil {
					_ = writeJSON(path, iw.r.interruptedResult(iw.scs[i], iw.dirs[i], "unfinished: "+iw.why()))
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
