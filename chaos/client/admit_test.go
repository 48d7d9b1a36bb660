package client

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeCPU is a process table whose groups use a set CPU rate each: the
// cumulated CPU time grows by rate × the fake clock's elapsed time.
type fakeCPU struct {
	mu    sync.Mutex
	rate  map[int]float64
	cpu   map[int]time.Duration
	last  time.Time
	reads int
	// the machine: 2 CPUs, idle of them (the rest busy with other work)
	idle        float64
	idleT, allT time.Duration
}

func newFakeCPU() *fakeCPU {
	return &fakeCPU{rate: map[int]float64{}, cpu: map[int]time.Duration{}, last: time.Now(), idle: 2}
}

func (f *fakeCPU) machine() (idle, total time.Duration, cpus int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	return f.idleT, f.allT, 2
}

func (f *fakeCPU) set(pgid int, rate float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	f.rate[pgid] = rate
}

func (f *fakeCPU) advance() {
	now := time.Now()
	for g, r := range f.rate {
		f.cpu[g] += time.Duration(r * float64(now.Sub(f.last)))
	}
	f.idleT += time.Duration(f.idle * float64(now.Sub(f.last)))
	f.allT += 2 * now.Sub(f.last)
	f.last = now
}

func (f *fakeCPU) read(groups []int) map[int]time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	f.reads++
	out := map[int]time.Duration{}
	for _, g := range groups {
		if _, ok := f.rate[g]; ok {
			out[g] = f.cpu[g]
		}
	}
	return out
}

// testAdmission admits by f's CPU above one client (Count), or by the
// count of 3 when f is nil (CPU not measured).
func testAdmission(f *fakeCPU) *Admission {
	a := &Admission{Cap: 5, CPUs: 2, Count: 3, StartCost: 1, Every: 100 * time.Millisecond}
	if f != nil {
		a.read, a.machine, a.Count = f.read, f.machine, 1
	}
	return a
}

// tryAcquire acquires within d of fake time, or reports false.
func tryAcquire(a *Admission, d time.Duration) (*Ticket, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return a.Acquire(ctx, 0)
}

func TestAdmissionByCPU(t *testing.T) {
	tests := []struct {
		name string
		// rates of the clients admitted first (one group each, from pgid 1)
		rates []float64
		// whether one more is admitted once they are measured
		more bool
	}{
		{"asleep clients leave room", []float64{0, 0, 0, 0}, true},
		{"a busy client and a sleeping one leave room for a start-up", []float64{1, 0}, true},
		{"two busy clients fill two CPUs", []float64{1, 1}, false},
		{"half-busy clients add up", []float64{0.5, 0.5, 0.6}, false},
		{"the cap holds however little they use", []float64{0, 0, 0, 0, 0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakeCPU()
				a := testAdmission(f)
				var held []*Ticket
				for i, r := range tt.rates {
					// Each waits for the ones before it to be measured.
					tk, ok := tryAcquire(a, time.Second)
					if !ok {
						t.Fatalf("client %d of rates %v not admitted", i+1, tt.rates)
					}
					f.set(i+1, r)
					tk.Started(i + 1)
					held = append(held, tk)
				}
				extra, ok := tryAcquire(a, time.Second)
				if ok != tt.more {
					t.Errorf("one more admitted = %v, want %v", ok, tt.more)
				}
				if ok {
					held = append(held, extra)
				}
				for _, tk := range held {
					tk.Release()
				}
				if !tt.more {
					tk, ok := tryAcquire(a, time.Second)
					if !ok {
						t.Fatal("not admitted once the others released")
					}
					tk.Release()
				}
				synctest.Wait() // the sampling goroutine ends with the last ticket
			})
		})
	}
}

func TestAdmissionStartUpCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeCPU()
		a := testAdmission(f)
		// Two clients starting up (not yet measured) count a CPU each: a
		// third waits although nothing has been measured.
		t1, _ := tryAcquire(a, time.Second)
		t2, _ := tryAcquire(a, time.Second)
		if _, ok := tryAcquire(a, 10*time.Millisecond); ok {
			t.Fatal("a third client admitted beside two unmeasured start-ups on 2 CPUs")
		}
		// Measured asleep over a whole period, they make room.
		f.set(1, 0)
		f.set(2, 0)
		t1.Started(1)
		t2.Started(2)
		start := time.Now()
		t3, ok := tryAcquire(a, time.Second)
		if !ok {
			t.Fatal("a third client not admitted beside two measured asleep")
		}
		if d := time.Since(start); d < a.Every/2 || d > 2*a.Every {
			t.Errorf("admitted after %s, want within one or two periods of %s from the start", d, a.Every)
		}
		for _, tk := range []*Ticket{t1, t2, t3} {
			tk.Release()
		}
		if a.Running() != 0 {
			t.Errorf("Running = %d after every release", a.Running())
		}
		synctest.Wait() // the sampling goroutine ends with the last ticket
	})
}

func TestAdmissionCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := testAdmission(nil)
		var held []*Ticket
		for range a.Count {
			tk, ok := tryAcquire(a, time.Second)
			if !ok {
				t.Fatalf("client %d not admitted under the count of %d", len(held)+1, a.Count)
			}
			held = append(held, tk)
		}
		if _, ok := tryAcquire(a, time.Second); ok {
			t.Fatal("admitted above the fallback count")
		}
		held[0].Release()
		held[0].Release() // twice is once
		if _, ok := tryAcquire(a, time.Second); !ok {
			t.Fatal("not admitted once one released")
		}
		if got := a.Running(); got != a.Count {
			t.Errorf("Running = %d, want %d", got, a.Count)
		}
	})
}

func TestAdmissionCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := testAdmission(nil)
		a.Count = 1
		tk, _ := tryAcquire(a, time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan bool)
		go func() {
			_, ok := a.Acquire(ctx, 0)
			done <- ok
		}()
		synctest.Wait()
		cancel()
		if <-done {
			t.Error("Acquire admitted after its context ended")
		}
		tk.Release()
	})
}

func TestAdmissionOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := testAdmission(nil)
		a.Count = 1
		first, _ := tryAcquire(a, time.Second)
		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		for _, rank := range []int{5, 2, 7, 2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tk, ok := a.Acquire(context.Background(), rank)
				if !ok {
					t.Errorf("rank %d not admitted", rank)
					return
				}
				mu.Lock()
				order = append(order, rank)
				mu.Unlock()
				time.Sleep(time.Second)
				tk.Release()
			}()
			synctest.Wait() // each arrives in turn
		}
		first.Release()
		wg.Wait()
		if want := []int{2, 2, 5, 7}; !slices.Equal(order, want) {
			t.Errorf("admitted in the order %v, want %v (lowest rank, then first come)", order, want)
		}
	})
}

func TestTicketContext(t *testing.T) {
	if TicketFrom(context.Background()) != nil {
		t.Error("a ticket from an empty context")
	}
	tk := &Ticket{}
	if TicketFrom(WithTicket(context.Background(), tk)) != tk {
		t.Error("the ticket put in the context is not the one read")
	}
	var none *Ticket
	none.Started(3) // a nil ticket (no admission) is a no-op
	none.Release()
}

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name  string
		stat  string
		pgrp  int
		ticks int64
		ok    bool
	}{
		{"plain", "42 (node) S 1 40 40 0 -1 4194560 100 0 0 0 7 3 2 1 20 0 11 0", 40, 13, true},
		{"comm with spaces and parens", "42 (a) (b c) R 1 41 41 0 -1 0 0 0 0 0 100 50 0 0 20 0", 41, 150, true},
		{"truncated", "42 (x) S 1 40 40 0 -1 0 0 0 0 0 7", 0, 0, false},
		{"no comm", "42 x S 1 40", 0, 0, false},
		{"bad number", "42 (x) S 1 40 40 0 -1 0 0 0 0 0 7 z 0 0", 0, 0, false},
		{"negative", "42 (x) S 1 40 40 0 -1 0 0 0 0 0 7 -3 0 0", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, own, reaped, ok := parseStatCPU([]byte(tt.stat))
			if ticks := own + reaped; ok != tt.ok || ok && (g != tt.pgrp || ticks != tt.ticks) {
				t.Errorf("parseStatCPU = %d, %d, %v; want %d, %d, %v", g, ticks, ok, tt.pgrp, tt.ticks, tt.ok)
			}
		})
	}
}

// TestAdmissionCountsItself: this process's own CPU (the scenarios' mock
// servers and proxies) leaves less room for the clients.
func TestAdmissionCountsItself(t *testing.T) {
	tests := []struct {
		self float64
		more bool
	}{
		{0.2, true},
		{1.5, false},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			f := newFakeCPU()
			a := testAdmission(f)
			var selfCPU time.Duration
			last := time.Now()
			a.self = func() time.Duration {
				now := time.Now()
				selfCPU += time.Duration(tt.self * float64(now.Sub(last)))
				last = now
				return selfCPU
			}
			tk, _ := tryAcquire(a, time.Second)
			f.set(1, 0)
			tk.Started(1)
			extra, ok := tryAcquire(a, time.Second)
			if ok != tt.more {
				t.Errorf("this process at %.1f CPU, a client asleep: one more admitted = %v, want %v", tt.self, ok, tt.more)
			}
			if ok {
				extra.Release()
			}
			tk.Release()
			synctest.Wait()
		})
	}
}

// TestAdmissionBusyMachine: while other work leaves the machine less than
// a CPU idle, no client starts above Count however little the admitted
// ones use (more would only make every wait late); once it idles, they do.
func TestAdmissionBusyMachine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeCPU()
		f.idle = 0.5
		a := testAdmission(f)
		a.Count = 2
		var held []*Ticket
		for i := range 2 {
			tk, ok := tryAcquire(a, time.Second)
			if !ok {
				t.Fatalf("client %d of Count not admitted", i+1)
			}
			f.set(i+1, 0)
			tk.Started(i + 1)
			held = append(held, tk)
		}
		if _, ok := tryAcquire(a, 5*time.Second); ok {
			t.Fatal("a client above Count admitted on a busy machine")
		}
		f.mu.Lock()
		f.advance()
		f.idle = 1.8
		f.mu.Unlock()
		tk, ok := tryAcquire(a, time.Second)
		if !ok {
			t.Fatal("not admitted once the machine idles")
		}
		for _, tk := range append(held, tk) {
			tk.Release()
		}
		synctest.Wait()
	})
}
