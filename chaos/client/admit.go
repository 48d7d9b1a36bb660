package client

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Admission admits external client processes by the CPU they use, not
// by a fixed count alone: a client waiting out its backoff sleeps and
// costs nothing, so the clients of a probe (dozens of scenarios, most of
// them waiting) can run at once while the ones starting up (a Node
// runtime compiling an SDK takes a CPU for a second) are few.
//
// Count clients run at once whatever they use (chaos run's count,
// 2 × GOMAXPROCS): the admission is never slower than that. Above it, a
// new client starts while the machine has a CPU idle (measured, from
// /proc/stat, over the last sampling period: other work on a shared
// machine makes every client's waits late, and more clients then add
// noise, not speed) and the measured CPU of the running ones leaves room
// for one more start-up: the sum, over the admitted clients, of the CPU
// their process group used over the last period (a client not yet
// measured over a whole period counts as StartCost), plus this process's
// own (the scenarios' mock servers and proxies), plus StartCost, is at
// most CPUs. Cap bounds the clients at once whatever they use (each holds
// memory, a mock server, file descriptors).
//
// The CPU is read from /proc (Linux: utime, stime, cutime and cstime of
// every process of the client's group, so that what its children used
// stays counted once they are reaped). Where it cannot be read, Count
// clients run at once.
//
// One Admission may be shared by several chaos runs (the phases of a
// probe that overlap, the probes of a matrix run): it bounds them
// together.
type Admission struct {
	// Cap is the most clients at once, whatever they use.
	Cap int
	// CPUs is the CPU the admitted clients may use together, in CPUs.
	CPUs float64
	// Count clients run at once whatever they use; where CPU is not
	// measured, no more.
	Count int
	// StartCost is the CPU a client is counted for until it has been
	// measured over a whole sampling period (its start-up).
	StartCost float64
	// Every is the sampling period.
	Every time.Duration

	// read returns the cumulated CPU time of each of the process groups
	// it is given that has a live process; nil: not measured (Count).
	read func(pgids []int) map[int]time.Duration
	// self returns this process's cumulated CPU time (the mock servers and
	// proxies of the admitted clients' scenarios run in it); nil: not
	// counted.
	self     func() time.Duration
	selfCPU  time.Duration
	selfAt   time.Time
	selfRate float64
	// machine returns the machine's cumulated idle and total CPU time
	// (/proc/stat) and its CPU count; nil: not measured (no admission
	// above Count).
	machine     func() (idle, total time.Duration, cpus int)
	idleCPU     time.Duration
	totalCPU    time.Duration
	machineIdle float64 // CPUs idle over the last period; < 0: not measured yet

	mu      sync.Mutex
	held    map[*Ticket]struct{}
	waiting map[*waiter]struct{}
	arrived int
	wake    chan struct{} // closed and replaced when room may have changed
	stop    chan struct{} // closed to end the sampling goroutine; nil when none runs
}

// MaxClients is the default Cap: the most external clients one process
// runs at once, however little they use (each holds a mock server, a
// proxy, its pipes: about ten file descriptors, and its own memory).
const MaxClients = 64

// admitEvery is the default sampling period: a start-up shows within it.
const admitEvery = 100 * time.Millisecond

// NewAdmission returns an Admission of this machine: CPUs GOMAXPROCS,
// Cap MaxClients, Count 2 × GOMAXPROCS (at least 2), StartCost one
// CPU, sampled every 100ms from /proc where there is one.
func NewAdmission() *Admission {
	n := runtime.GOMAXPROCS(0)
	read, self, machine := newCPUSource()
	return &Admission{Cap: MaxClients, CPUs: float64(n), Count: max(2, 2*n), StartCost: 1, Every: admitEvery, read: read, self: self, machine: machine}
}

// Ticket is an admitted client's place; Release gives it back.
type Ticket struct {
	a    *Admission
	pgid int
	cpu  time.Duration // cumulated at the last sample
	at   time.Time     // of the last sample (the start, before the first)
	rate float64       // CPUs over the last period; < 0: not yet measured
}

// waiter is a client waiting for room: the one of lowest rank (then the
// first come) is admitted first.
type waiter struct{ rank, arrived int }

func (w *waiter) before(v *waiter) bool {
	return w.rank < v.rank || w.rank == v.rank && w.arrived < v.arrived
}

// Acquire waits for room and returns the client's ticket, or false once
// ctx ends first. Waiting clients are admitted lowest rank first (chaos
// passes the scenario's index: the longest run first), then first come.
func (a *Admission) Acquire(ctx context.Context, rank int) (*Ticket, bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.held == nil {
		a.held, a.waiting = map[*Ticket]struct{}{}, map[*waiter]struct{}{}
	}
	if a.wake == nil {
		a.wake = make(chan struct{})
	}
	a.arrived++
	w := &waiter{rank: rank, arrived: a.arrived}
	a.waiting[w] = struct{}{}
	for {
		if a.roomLocked() && a.firstLocked(w) {
			delete(a.waiting, w)
			t := &Ticket{a: a, rate: -1}
			a.held[t] = struct{}{}
			a.startLocked()
			a.broadcastLocked() // the next waiter may have room too
			return t, true
		}
		wake := a.wake
		a.startLocked()
		a.mu.Unlock()
		select {
		case <-wake:
			a.mu.Lock()
		case <-ctx.Done():
			a.mu.Lock()
			delete(a.waiting, w)
			a.broadcastLocked()
			return nil, false
		}
	}
}

// firstLocked reports whether no waiter comes before w.
func (a *Admission) firstLocked(w *waiter) bool {
	for v := range a.waiting {
		if v.before(w) {
			return false
		}
	}
	return true
}

// Started tells the admission the process group the client runs in, so
// that its CPU is measured from now on.
func (t *Ticket) Started(pgid int) {
	if t == nil || pgid <= 0 {
		return
	}
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	// A process forked now has used no CPU yet: the first period is
	// measured from here.
	t.pgid, t.cpu, t.at, t.rate = pgid, 0, time.Now(), -1
}

// Release gives the ticket back: the client has exited.
func (t *Ticket) Release() {
	if t == nil {
		return
	}
	a := t.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.held[t]; !ok {
		return
	}
	delete(a.held, t)
	if len(a.held) == 0 && a.stop != nil {
		close(a.stop)
		a.stop = nil
	}
	a.broadcastLocked()
}

// Running is how many clients hold a ticket.
func (a *Admission) Running() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.held)
}

// roomLocked reports whether one more client may start now.
func (a *Admission) roomLocked() bool {
	n := len(a.held)
	switch {
	case n == 0:
		return true
	case n >= max(a.Cap, 1):
		return false
	case n < max(a.Count, 1):
		return true
	case a.read == nil || a.machine == nil:
		return false
	case a.selfRate < 0 || a.machineIdle < a.StartCost:
		return false // not measured yet (within a period), or the machine is busy
	}
	return a.usedLocked()+a.StartCost <= a.CPUs
}

// usedLocked is the CPU the admitted clients use, as last measured, and
// this process (their scenarios' mock servers and proxies).
func (a *Admission) usedLocked() float64 {
	used := max(a.selfRate, 0)
	for t := range a.held {
		if t.rate < 0 {
			used += a.StartCost
		} else {
			used += t.rate
		}
	}
	return used
}

func (a *Admission) broadcastLocked() {
	if a.wake != nil {
		close(a.wake)
	}
	a.wake = make(chan struct{})
}

// startLocked starts the sampling goroutine when CPU is measured and it
// does not run; it ends once no client holds a ticket.
func (a *Admission) startLocked() {
	if a.stop != nil || a.read == nil || len(a.held) == 0 {
		return
	}
	a.stop = make(chan struct{})
	a.selfRate, a.machineIdle = -1, -1 // measured from the loop's first period
	go a.loop(a.stop)
}

func (a *Admission) loop(stop chan struct{}) {
	var idle, total time.Duration
	if a.machine != nil {
		idle, total, _ = a.machine()
	}
	var self time.Duration
	if a.self != nil {
		self = a.self()
	}
	a.mu.Lock()
	a.selfCPU, a.selfAt, a.idleCPU, a.totalCPU = self, time.Now(), idle, total
	a.mu.Unlock()
	tick := time.NewTicker(max(a.Every, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		a.mu.Lock()
		var groups []int
		for t := range a.held {
			if t.pgid > 0 {
				groups = append(groups, t.pgid)
			}
		}
		a.mu.Unlock()
		var cpu map[int]time.Duration
		if len(groups) > 0 {
			cpu = a.read(groups) // outside the lock: it reads /proc
		}
		var self, idle, total time.Duration
		var cpus int
		if a.self != nil {
			self = a.self()
		}
		if a.machine != nil {
			idle, total, cpus = a.machine()
		}
		now := time.Now()
		a.mu.Lock()
		if dt := total - a.totalCPU; a.machine != nil && dt > 0 {
			a.machineIdle = float64(cpus) * max(0, float64(idle-a.idleCPU)) / float64(dt)
			a.idleCPU, a.totalCPU = idle, total
		}
		if dt := now.Sub(a.selfAt); dt > 0 {
			a.selfRate = 0
			if a.self != nil {
				a.selfRate = max(0, float64(self-a.selfCPU)/float64(dt))
			}
			a.selfCPU, a.selfAt = self, now
		}
		for t := range a.held {
			c, ok := cpu[t.pgid]
			if t.pgid <= 0 || !ok {
				continue
			}
			if dt := now.Sub(t.at); dt < a.Every/2 {
				continue // too short a period to tell a start-up from a sleep: the next one
			} else {
				t.rate = max(0, float64(c-t.cpu)/float64(dt))
			}
			t.cpu, t.at = c, now
		}
		a.broadcastLocked()
		a.mu.Unlock()
	}
}

type ticketKey struct{}

// WithTicket returns ctx carrying t, for the code that starts the client
// to tell it the client's process group (Ticket.Started).
func WithTicket(ctx context.Context, t *Ticket) context.Context {
	return context.WithValue(ctx, ticketKey{}, t)
}

// TicketFrom returns the ticket ctx carries, or nil.
func TicketFrom(ctx context.Context) *Ticket {
	t, _ := ctx.Value(ticketKey{}).(*Ticket)
	return t
}
