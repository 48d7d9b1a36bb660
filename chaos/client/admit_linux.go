package client

import (
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// userHZ is the unit of /proc/PID/stat's times (USER_HZ, 100 on every
// Linux architecture Go supports).
const userHZ = 100

func newCPUSource() (groups func([]int) map[int]time.Duration, self func() time.Duration) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return nil, nil
	}
	return func(gs []int) map[int]time.Duration { return readGroupCPU("/proc", gs) }, readSelfCPU
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

// readGroupCPU sums, per process group of groups, utime+stime+cutime+cstime
// of its live processes under root (/proc).
func readGroupCPU(root string, groups []int) map[int]time.Duration {
	watched := make(map[int]bool, len(groups))
	for _, g := range groups {
		watched[g] = true
	}
	out := map[int]time.Duration{}
	d, err := os.Open(root)
	if err != nil {
		return out
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		if _, err := strconv.Atoi(name); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, name, "stat"))
		if err != nil {
			continue
		}
		g, own, reaped, ok := parseStatCPU(b)
		if ok && watched[g] {
			out[g] += time.Duration(own+reaped) * time.Second / userHZ
		}
	}
	return out
}
