package client

import (
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLagMeterWait checks wait's arithmetic on hand-made samples: the
// growth from the last sample at or before from to the first at or after
// to, and nothing when the span is not covered by samples.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestLagMeterWait(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	at := func(n int) time.Time { return t0.Add(ms(n)) }
	// Samples every 10ms; cumulated waits 0, 5, 12, 20ms.
	samples := []lagSample{{at(0), 0}, {at(10), ms(5)}, {at(20), ms(12)}, {at(30), ms(20)}}
	m := &LagMeter{groups: map[int]*lagGroup{
		7: {samples: samples},
		8: {samples: samples[:1]}, // one sample: nothing measured yet
	}}
	tests := []struct {
		name     string
		pgid     int
		from, to time.Time
		want     time.Duration
		ok       bool
	}{
		{name: "the whole span", pgid: 7, from: at(0), to: at(30), want: ms(20), ok: true},
		{name: "exact boundaries", pgid: 7, from: at(10), to: at(20), want: ms(7), ok: true},
		{name: "between samples: widened to the samples around", pgid: 7, from: at(5), to: at(15), want: ms(12), ok: true},
		{name: "1ns after a sample starts there", pgid: 7, from: at(10).Add(1), to: at(20), want: ms(7), ok: true},
		{name: "1ns before a sample starts at the one before", pgid: 7, from: at(10).Add(-1), to: at(20), want: ms(12), ok: true},
		{name: "1ns after a sample ends at the next", pgid: 7, from: at(10), to: at(20).Add(1), want: ms(15), ok: true},
		{name: "an empty span on a sample", pgid: 7, from: at(20), to: at(20), want: 0, ok: true},
		{name: "ends at the last sample", pgid: 7, from: at(25), to: at(30), want: ms(8), ok: true},
		{name: "starts before the first sample", pgid: 7, from: at(0).Add(-1), to: at(10)},
		{name: "ends after the last sample", pgid: 7, from: at(0), to: at(30).Add(1)},
		{name: "entirely after the last sample", pgid: 7, from: at(35), to: at(40)},
		{name: "entirely before the first sample", pgid: 7, from: at(-20), to: at(-10)},
		{name: "one sample", pgid: 8, from: at(0), to: at(0)},
		{name: "unknown group", pgid: 9, from: at(0), to: at(30)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := m.Wait(tt.pgid, tt.from, tt.to)
			if diff := cmp.Diff([]any{tt.want, tt.ok}, []any{d, ok}); diff != "" {
				t.Errorf("wait(%d, %v, %v) mismatch (-want +got):\n%s", tt.pgid, tt.from.Sub(t0), tt.to.Sub(t0), diff)
			}
		})
	}
	var nilMeter *LagMeter
	if d, ok := nilMeter.Wait(7, at(0), at(30)); d != 0 || ok {
		t.Errorf("nil meter: wait() = %v, %v, want 0, false", d, ok)
	}
}

// TestLagMeterWaitReversedSpan: a span whose end comes before its start (a
// next attempt that arrived before the previous one ended, as concurrent
// requests can) has no run-queue wait; it must never come out negative,
// which would narrow the long side of a delay band below its base.
func TestLagMeterWaitReversedSpan(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	at := func(n int) time.Time { return t0.Add(ms(n)) }
	m := &LagMeter{groups: map[int]*lagGroup{7: {samples: []lagSample{{at(0), 0}, {at(10), ms(5)}, {at(20), ms(12)}, {at(30), ms(20)}}}}}
	if d, _ := m.Wait(7, at(25), at(5)); d < 0 {
		t.Errorf("wait(7, 25ms, 5ms) = %v, want no negative wait", d)
	}
}

// fakeLag is a lagSource that reports 1ms of run-queue wait per group per
// read, and records the groups of every read.
type fakeLag struct {
	mu    sync.Mutex
	reads [][]int
}

func (f *fakeLag) read(groups []int) map[int]time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, slices.Sorted(slices.Values(groups)))
	out := map[int]time.Duration{}
	for _, g := range groups {
		out[g] = time.Millisecond
	}
	return out
}

func (f *fakeLag) readsSnapshot() [][]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reads)
}

// samplesOf returns a copy of group pgid's samples, read under the meter's
// lock.
func samplesOf(m *LagMeter, pgid int) []lagSample {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g := m.groups[pgid]; g != nil {
		return slices.Clone(g.samples)
	}
	return nil
}

// waitSamples waits until group pgid has at least n samples. It waits for
// a condition, not for a time: each short wait is only a pause between
// looks, and the bound is there for a meter that never samples.
func waitSamples(t *testing.T, m *LagMeter, pgid, n int) []lagSample {
	t.Helper()
	for range 3000 { // 30s at most
		if s := samplesOf(m, pgid); len(s) >= n {
			return s
		}
		time.Sleep(lagTick)
	}
	t.Fatalf("group %d: fewer than %d samples: %+v", pgid, n, samplesOf(m, pgid))
	return nil
}

// TestLagMeterSampling runs the meter's loop on a fake source: a watched
// group is sampled with a growing cumulated wait, an unwatched one no
// longer is, and close stops the loop.
func TestLagMeterSampling(t *testing.T) {
	t.Parallel()
	src := &fakeLag{}
	m := &LagMeter{groups: map[int]*lagGroup{}, sys: src}
	t.Cleanup(m.Close)

	unwatchA := m.Watch(100)
	sa := waitSamples(t, m, 100, 3)
	if sa[0].cum != 0 {
		t.Errorf("first sample of a watched group = %v, want 0 (taken when watching starts)", sa[0].cum)
	}
	for i := 1; i < len(sa); i++ {
		if sa[i].cum != sa[i-1].cum+time.Millisecond || sa[i].at.Before(sa[i-1].at) {
			t.Errorf("samples %d and %d = %+v, %+v: want 1ms more, not earlier", i-1, i, sa[i-1], sa[i])
		}
	}
	if d, ok := m.Wait(100, sa[0].at, sa[len(sa)-1].at); !ok || d != sa[len(sa)-1].cum {
		t.Errorf("wait over every sample = %v, %v, want %v, true", d, ok, sa[len(sa)-1].cum)
	}

	// Once A is unwatched, a read that includes B (watched after that)
	// never includes A.
	unwatchA()
	unwatchB := m.Watch(200)
	waitSamples(t, m, 200, 3)
	for _, r := range src.readsSnapshot() {
		if slices.Contains(r, 200) && slices.Contains(r, 100) {
			t.Errorf("a read after A was unwatched included it: %v", r)
		}
	}
	unwatchB()

	// close waits for the loop: nothing is sampled after it returns.
	m.Close()
	before := len(src.readsSnapshot())
	m.Close() // a second close is harmless
	if after := len(src.readsSnapshot()); after != before {
		t.Errorf("reads after close: %d, then %d", before, after)
	}
	m.mu.Lock()
	running := m.running
	m.mu.Unlock()
	if running {
		t.Error("meter still running after close")
	}
}

// TestLagMeterWithoutSource: where the system measures nothing (no
// source), watching is a no-op and nothing is measured.
func TestLagMeterWithoutSource(t *testing.T) {
	t.Parallel()
	m := &LagMeter{groups: map[int]*lagGroup{}}
	unwatch := m.Watch(100)
	unwatch()
	m.Close()
	if d, ok := m.Wait(100, time.Now().Add(-time.Second), time.Now()); d != 0 || ok {
		t.Errorf("wait() = %v, %v, want 0, false", d, ok)
	}
	var nilMeter *LagMeter
	nilMeter.Watch(1)()
	nilMeter.Close()
}

// busyGroup starts a busy shell loop, alone in a process group of its own
// (the group's id is its pid), and kills it when the test ends. The loop
// starts no other process, so that once it is killed and reaped nothing of
// its group is left, and it stops by itself after a bounded number of
// iterations in any case.
func busyGroup(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sh", "-c", `i=0; while [ "$i" -lt 50000000 ]; do i=$((i+1)); done`)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		_ = c.Wait()
	})
	return c
}

// TestProcLag reads /proc for a real process group: the group is found
// (it has an entry) and its waits are never negative; a process in another
// group is not counted, even when the group asked for has its pid for id;
// once the group is gone, it has no entry. Amounts depend on the machine's
// load and are not checked.
func TestProcLag(t *testing.T) {
	t.Parallel()
	src := newLagSource()
	if src == nil {
		t.Skip("no per-thread scheduler statistics on this system (Linux only)")
	}
	busy := busyGroup(t)
	pg := busy.Process.Pid
	// A process in this test's own group: its pid is no group's id.
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = other.Process.Kill()
		_ = other.Wait()
	})
	for i := range 5 {
		got := src.read([]int{pg, other.Process.Pid})
		if w, ok := got[pg]; !ok || w < 0 {
			t.Errorf("read %d: group %d = %v (found %v), want found, >= 0", i, pg, w, ok)
		}
		if w, ok := got[other.Process.Pid]; ok {
			t.Errorf("read %d: pid %d, in another group, counted as group %d: %v", i, other.Process.Pid, other.Process.Pid, w)
		}
	}

	// Gone: killed and reaped, so its /proc entries are removed.
	_ = syscall.Kill(-pg, syscall.SIGKILL)
	_ = busy.Wait()
	if got := src.read([]int{pg}); len(got) != 0 {
		t.Errorf("after the group exited: read = %v, want nothing", got)
	}
}

// TestLagMeterProc runs the meter end to end on a real process group:
// watched, sampled at least twice, the cumulated wait never decreasing,
// then unwatched and closed.
func TestLagMeterProc(t *testing.T) {
	t.Parallel()
	m := NewLagMeter()
	if m.sys == nil {
		t.Skip("no per-thread scheduler statistics on this system (Linux only)")
	}
	t.Cleanup(m.Close)
	pg := busyGroup(t).Process.Pid
	unwatch := m.Watch(pg)
	s := waitSamples(t, m, pg, 2)
	for i := 1; i < len(s); i++ {
		if s[i].cum < s[i-1].cum || s[i].at.Before(s[i-1].at) {
			t.Errorf("samples %d and %d = %+v, %+v: want neither wait nor time to decrease", i-1, i, s[i-1], s[i])
		}
	}
	if d, ok := m.Wait(pg, s[0].at, s[len(s)-1].at); !ok || d < 0 {
		t.Errorf("wait over the samples = %v, %v, want >= 0, true", d, ok)
	}
	unwatch()
	m.Close()
	n := len(samplesOf(m, pg))
	if n < 2 {
		t.Errorf("samples after close: %d, want >= 2", n)
	}
}
