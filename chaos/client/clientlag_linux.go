package client

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procLag reads /proc: each process's group from /proc/PID/stat (cached
// while the process lives), and the time each thread of the watched groups'
// processes spent waiting for a CPU (and, for single-threaded processes, on
// one), from /proc/PID/task/TID/schedstat (its first two fields, in
// nanoseconds).
type procLag struct {
	root  string        // /proc
	pgrp  map[int]int   // pid → process group, for live pids
	last  map[int]int64 // tid → cumulated run-queue wait at the previous read
	names map[int]threadComm
	self  int // this process's group, never cached (see read)
	buf   []byte
}

func newLagSource() lagSource {
	if _, err := os.Stat("/proc/self/schedstat"); err != nil {
		return nil
	}
	return newProcLag("/proc")
}

func newProcLag(root string) *procLag {
	return &procLag{root: root, pgrp: map[int]int{}, last: map[int]int64{}, names: map[int]threadComm{}, self: syscall.Getpgrp(), buf: make([]byte, 0, 1024)}
}

func (p *procLag) read(groups []int) map[int]time.Duration {
	out := make(map[int]time.Duration, len(groups))
	watched := make(map[int]bool, len(groups))
	for _, g := range groups {
		watched[g] = true
	}
	d, err := os.Open(p.root)
	if err != nil {
		return out
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	live := make(map[int]bool, len(names))
	seen := map[int]bool{}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		live[pid] = true
		g, ok := p.pgrp[pid]
		if !ok {
			g = p.readPgrp(pid)
			// A client just forked from this process is in this group until
			// it moves to its own (before it runs the client's program): ask
			// again next time.
			if g != p.self {
				p.pgrp[pid] = g
			}
		}
		if !watched[g] {
			continue
		}
		out[g] += p.processWait(pid, seen)
	}
	for pid := range p.pgrp {
		if !live[pid] {
			delete(p.pgrp, pid)
		}
	}
	for tid := range p.last {
		if !seen[tid] {
			delete(p.last, tid)
		}
	}
	for tid := range p.names {
		if !seen[tid] {
			delete(p.names, tid)
		}
	}
	return out
}

// processWait returns the largest growth of a thread's run-queue wait since
// the previous read, over pid's threads that may carry the client's work.
//
// Helper threads run beside a sleeping client without holding its retry:
// right after a Node client starts, V8's compiler and GC threads queue for
// 100–500ms on a busy machine while its main thread, which runs the timers
// and the sockets, is late by a tenth of that. So an event-loop runtime
// (node, bun, deno) counts its main thread alone; elsewhere a thread its
// runtime named differently from the main thread is a helper and is left
// out, and threads that share the main thread's name (every thread of a Go
// program, which may run the client's goroutine on any of them) all count.
func (p *procLag) processWait(pid int, seen map[int]bool) time.Duration {
	dir := p.root + "/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return 0
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	single := len(tids) == 1
	main := ""
	if !single {
		if p.eventLoop(pid) {
			tids = []string{strconv.Itoa(pid)}
		} else {
			main = p.threadName(dir, pid)
		}
	}
	var worst int64
	for _, name := range tids {
		tid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		seen[tid] = true
		if main != "" && tid != pid && p.threadName(dir, tid) != main {
			continue
		}
		v, ok := p.readSchedstat(dir+"/"+name+"/schedstat", single)
		if !ok {
			continue
		}
		seen[tid] = true
		prev, had := p.last[tid]
		p.last[tid] = v
		if !had {
			prev = 0 // a thread new since the last read waited all of it since
		}
		worst = max(worst, v-prev)
	}
	return time.Duration(worst)
}

// eventLoopRuntimes run a program's code, its timers and its sockets on the
// main thread; their other threads (V8's compiler and GC workers, libuv's
// pool) run beside a sleeping client and, in Node 20, share its name.
var eventLoopRuntimes = map[string]bool{"node": true, "nodejs": true, "bun": true, "deno": true}

// eventLoop reports whether pid runs an event-loop runtime (its
// executable's name, read each time: a process may exec one).
func (p *procLag) eventLoop(pid int) bool {
	exe, err := os.Readlink(p.root + "/" + strconv.Itoa(pid) + "/exe")
	return err == nil && eventLoopRuntimes[filepath.Base(strings.TrimSuffix(exe, " (deleted)"))]
}

// threadName returns a thread's name (/proc/PID/task/TID/comm), cached for
// nameTicks reads: a runtime names its worker threads once, just after it
// starts them.
func (p *procLag) threadName(dir string, tid int) string {
	if c, ok := p.names[tid]; ok && c.reads < nameTicks {
		c.reads++
		p.names[tid] = c
		return c.name
	}
	b, err := p.readFile(dir + "/" + strconv.Itoa(tid) + "/comm")
	if err != nil {
		return ""
	}
	name := string(bytes.TrimSpace(b))
	p.names[tid] = threadComm{name: name}
	return name
}

type threadComm struct {
	name  string
	reads int
}

const nameTicks = 10

func (p *procLag) readPgrp(pid int) int {
	b, err := p.readFile(p.root + "/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	_, g, ok := parseStatGroup(b)
	if !ok {
		return -1
	}
	return g
}

// readSchedstat returns a thread's cumulated run-queue wait, plus its time
// on a CPU when withRun is set. A single-threaded process (sleep, curl, awk
// in a shell client) does nothing but the client's work, so its CPU time
// delays the client too; a multi-threaded one (Node's V8 compiler and GC
// threads, a Go runtime's spare threads) spends CPU beside a client that is
// asleep, which delays nothing.
func (p *procLag) readSchedstat(path string, withRun bool) (int64, bool) {
	b, err := p.readFile(path)
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	run, err1 := strconv.ParseInt(string(f[0]), 10, 64)
	wait, err2 := strconv.ParseInt(string(f[1]), 10, 64)
	if !withRun {
		run = 0
	}
	return run + wait, err1 == nil && err2 == nil
}

func (p *procLag) readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := f.Read(p.buf[:cap(p.buf)])
	if err != nil {
		return nil, err
	}
	return p.buf[:n], nil
}
