package client

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the unit of /proc/PID/stat's times (USER_HZ, 100 on every
// Linux architecture Go supports).
const userHZ = 100

func newCPUSource() (groups func([]int) map[int]time.Duration, self func() time.Duration, machine func() (idle, total time.Duration, cpus int)) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return nil, nil, nil
	}
	if _, _, n := readMachineCPU("/proc/stat"); n == 0 {
		return nil, nil, nil
	}
	g := newGroupCPU("/proc")
	return g.read, readSelfCPU, func() (time.Duration, time.Duration, int) { return readMachineCPU("/proc/stat") }
}

// readMachineCPU reads the machine's cumulated idle (idle + iowait) and
// total CPU time from path (/proc/stat: its "cpu" line, in USER_HZ ticks)
// and how many CPUs it counts (its "cpuN" lines); 0 CPUs when unreadable.
func readMachineCPU(path string) (idle, total time.Duration, cpus int) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0
	}
	var ticks [2]int64
	ok := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "cpu" && len(f) >= 5:
			for i, v := range f[1:] {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 {
					return 0, 0, 0
				}
				if i == 3 || i == 4 { // idle, iowait
					ticks[0] += n
				}
				if i < 8 { // user nice system idle iowait irq softirq steal (guest is in user)
					ticks[1] += n
				}
			}
			ok = true
		case strings.HasPrefix(f[0], "cpu"):
			cpus++
		}
	}
	if !ok {
		return 0, 0, 0
	}
	return time.Duration(ticks[0]) * time.Second / userHZ, time.Duration(ticks[1]) * time.Second / userHZ, cpus
}

// groupCPU reads the CPU of process groups from /proc, caching each
// process's group while it lives so that a read opens the stat files of
// the watched groups' processes and of new ones only (a machine runs
// hundreds of others). A process still in this process's group is asked
// again: a client just forked moves to its own group before it runs.
// Called from one goroutine at a time.
type groupCPU struct {
	root string
	pgrp map[int]int // pid → group, for live pids outside this process's group
	self int
}

func newGroupCPU(root string) *groupCPU {
	return &groupCPU{root: root, pgrp: map[int]int{}, self: syscall.Getpgrp()}
}

// read sums, per process group of groups, utime+stime+cutime+cstime of
// its live processes.
func (c *groupCPU) read(groups []int) map[int]time.Duration {
	watched := make(map[int]bool, len(groups))
	for _, g := range groups {
		watched[g] = true
	}
	out := map[int]time.Duration{}
	d, err := os.Open(c.root)
	if err != nil {
		return out
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	live := make(map[int]bool, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		live[pid] = true
		if g, ok := c.pgrp[pid]; ok && !watched[g] {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.root, name, "stat"))
		if err != nil {
			continue
		}
		g, own, reaped, ok := parseStatCPU(b)
		if !ok {
			continue
		}
		if g != c.self {
			c.pgrp[pid] = g
		}
		if watched[g] {
			out[g] += time.Duration(own+reaped) * time.Second / userHZ
		}
	}
	for pid := range c.pgrp {
		if !live[pid] {
			delete(c.pgrp, pid)
		}
	}
	return out
}

// readSelfCPU is this process's utime+stime (its reaped children, the
// clients, are the groups').
func readSelfCPU() time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	_, _, ticks, ok := parseStatCPU(b)
	if !ok {
		return 0
	}
	return time.Duration(ticks) * time.Second / userHZ
}
