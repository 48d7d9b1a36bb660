package client

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fakeProc is a /proc tree in a folder: processes with their group and
// threads with their name and schedstat.
type fakeProc struct {
	t    *testing.T
	root string
}

func (f fakeProc) write(rel, content string) {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// thread sets thread tid of pid (in group pgrp) to name, with run ns on a
// CPU and wait ns in the run queue so far.
func (f fakeProc) thread(pid, pgrp, tid int, name string, run, wait int64) {
	f.write(fmt.Sprintf("%d/stat", pid), fmt.Sprintf("%d (x y) S 1 %d %d 0", pid, pgrp, pgrp))
	f.write(fmt.Sprintf("%d/task/%d/comm", pid, tid), name+"\n")
	f.write(fmt.Sprintf("%d/task/%d/schedstat", pid, tid), fmt.Sprintf("%d %d 7\n", run, wait))
}

// TestProcLagThreads: a process's lag is the largest run-queue growth among
// the threads that may carry the client's work. A thread its runtime named
// apart from the main thread (Node's V8 and libuv workers) is left out; the
// threads of a Go program, which all share its name, all count; a
// single-threaded process (sleep, curl) counts its CPU time too.
func TestProcLagThreads(t *testing.T) {
	ms := int64(time.Millisecond)
	f := fakeProc{t, t.TempDir()}
	// A runtime that names its workers: main thread and two workers.
	f.thread(100, 100, 100, "java", 50*ms, 10*ms)
	f.thread(100, 100, 101, "GC Thread#0", 90*ms, 20*ms)
	f.thread(100, 100, 102, "C2 CompilerThre", 5*ms, 1*ms)
	// Node 20: every thread is named node; the main thread alone counts.
	f.thread(500, 500, 500, "node", 50*ms, 10*ms)
	f.thread(500, 500, 501, "node", 90*ms, 20*ms)
	if err := os.Symlink("/usr/local/bin/node", filepath.Join(f.root, "500", "exe")); err != nil {
		t.Fatal(err)
	}
	// Go: three threads of one name.
	f.thread(200, 200, 200, "anthropic", 10*ms, 1*ms)
	f.thread(200, 200, 201, "anthropic", 10*ms, 2*ms)
	f.thread(200, 200, 202, "anthropic", 10*ms, 3*ms)
	// A shell client's single-threaded child, in the shell's group.
	f.thread(301, 300, 301, "curl", 4*ms, 1*ms)
	// Someone else's process.
	f.thread(400, 400, 400, "other", 1000*ms, 1000*ms)

	p := newProcLag(f.root)
	first := p.read([]int{100, 200, 300, 500})
	// A thread first seen counts all it waited so far.
	want := map[int]time.Duration{100: 10 * time.Millisecond, 200: 3 * time.Millisecond, 300: 5 * time.Millisecond, 500: 10 * time.Millisecond}
	for g, w := range want {
		if first[g] != w {
			t.Errorf("first read, group %d = %v, want %v", g, first[g], w)
		}
	}
	// Then growth: a worker queues 200ms, the main thread 15ms; a Go
	// thread 40ms; curl runs 6ms more and waits 2ms more; Node's second
	// thread queues 300ms, its main thread 5ms.
	f.thread(100, 100, 100, "java", 60*ms, 25*ms)
	f.thread(100, 100, 101, "GC Thread#0", 290*ms, 220*ms)
	f.thread(500, 500, 500, "node", 60*ms, 15*ms)
	f.thread(500, 500, 501, "node", 390*ms, 320*ms)
	f.thread(200, 200, 201, "anthropic", 10*ms, 42*ms)
	f.thread(301, 300, 301, "curl", 10*ms, 3*ms)
	got := p.read([]int{100, 200, 300, 500})
	want = map[int]time.Duration{100: 15 * time.Millisecond, 200: 40 * time.Millisecond, 300: 8 * time.Millisecond, 500: 5 * time.Millisecond}
	for g, w := range want {
		if got[g] != w {
			t.Errorf("second read, group %d = %v, want %v", g, got[g], w)
		}
	}
	if _, ok := got[400]; ok {
		t.Errorf("an unwatched group was read: %v", got)
	}
}
