package client

import (
	"slices"
	"sync"
	"time"
)

// LagMeter measures an external client's own time: how long its processes'
// threads waited, runnable, in the kernel's run queue, and how long its
// single-threaded processes ran. A client that sleeps its backoff spends
// almost none of either during the wait; what it does spend (waiting for a
// CPU on a busy machine, starting `sleep` and `curl`) makes its retry late,
// and the harness's own probe (it measures this process only) cannot see
// it. The CPU time of a multi-threaded process is left out: Node's compiler
// and GC threads, or a Go runtime's, run beside a client that is asleep
// without delaying it. It samples every
// lagTick while a client runs and keeps, per process group, the cumulated
// wait at each sample, so that the wait over any gap can be read afterwards.
//
// A process's wait is the largest of its threads' waits over a tick (a
// program's threads mostly wait side by side: a Node or Go client's retry is
// late by its slowest thread at most, not by their sum); the group's is the
// sum over its processes (a shell client runs sleep, then curl, one after
// the other). What a process waited in its last tick before it exited is
// lost. Where the system offers no per-thread scheduler statistics (not
// Linux), nothing is measured and the checks say so.
type LagMeter struct {
	mu      sync.Mutex
	groups  map[int]*lagGroup
	running bool
	stop    chan struct{}
	wg      sync.WaitGroup
	sys     lagSource
}

const lagTick = 10 * time.Millisecond

type lagGroup struct {
	watching bool
	cum      time.Duration
	samples  []lagSample
}

type lagSample struct {
	at  time.Time
	cum time.Duration
}

// lagSource reads the run-queue waits of the processes of some groups:
// for each group, the sum over its processes of the largest growth of a
// thread's cumulated wait since the previous read.
type lagSource interface {
	read(groups []int) map[int]time.Duration
}

func NewLagMeter() *LagMeter {
	return &LagMeter{groups: map[int]*lagGroup{}, sys: newLagSource()}
}

// Watch starts measuring process group pgid; the caller should call the
// returned function when the client has exited.
func (m *LagMeter) Watch(pgid int) (unwatch func()) {
	if m == nil || m.sys == nil {
		return func() {}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.groups[pgid] = &lagGroup{watching: true, samples: []lagSample{{at: time.Now()}}}
	if !m.running {
		m.running = true
		m.stop = make(chan struct{})
		m.wg.Add(1)
		go m.loop(m.stop)
	}
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if g := m.groups[pgid]; g != nil {
			g.watching = false
		}
	}
}

// Close stops sampling.
func (m *LagMeter) Close() {
	if m == nil {
		return
	}
	m.mu.Lock()
	if m.running {
		close(m.stop)
		m.running = false
	}
	m.mu.Unlock()
	m.wg.Wait()
}

func (m *LagMeter) loop(stop chan struct{}) {
	defer m.wg.Done()
	t := time.NewTicker(lagTick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		m.mu.Lock()
		var ids []int
		for id, g := range m.groups {
			if g.watching {
				ids = append(ids, id)
			}
		}
		m.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		waits := m.sys.read(ids)
		now := time.Now()
		m.mu.Lock()
		for _, id := range ids {
			g := m.groups[id]
			g.cum += waits[id]
			g.samples = append(g.samples, lagSample{at: now, cum: g.cum})
		}
		m.mu.Unlock()
	}
}

// Wait returns the run-queue wait of group pgid between from and to: the
// growth from the last sample at or before from to the first sample at or
// after to (so it may include up to a tick more on each side). ok is false
// when nothing was measured over that span.
func (m *LagMeter) Wait(pgid int, from, to time.Time) (time.Duration, bool) {
	if m == nil {
		return 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.groups[pgid]
	if g == nil || len(g.samples) < 2 {
		return 0, false
	}
	// i: the first sample after from; the one before it is the start.
	i, _ := slices.BinarySearchFunc(g.samples, from, func(s lagSample, t time.Time) int {
		if s.at.After(t) {
			return 1
		}
		return -1
	})
	j, _ := slices.BinarySearchFunc(g.samples, to, func(s lagSample, t time.Time) int { return s.at.Compare(t) })
	if i == 0 || j >= len(g.samples) {
		return 0, false
	}
	// A reversed span (an arrival stamped before the previous end) has no
	// wait; cum never decreases, so the difference is then at most 0.
	return max(0, g.samples[j].cum-g.samples[i-1].cum), true
}
