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

func newCPUSource() func([]int) map[int]time.Duration {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return nil
	}
	return func(groups []int) map[int]time.Duration { return readGroupCPU("/proc", groups) }
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
		g, ticks, ok := parseStatCPU(b)
		if ok && watched[g] {
			out[g] += time.Duration(ticks) * time.Second / userHZ
		}
	}
	return out
}
