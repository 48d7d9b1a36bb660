package client

import (
	"os"
	"syscall"
)

// groupLive reports whether process group pgid has a member that is not a
// zombie. kill(-pgid, 0) alone cannot tell: it succeeds while a zombie of
// the group is unreaped, and a killed client's orphans (the `sleep` under
// `sh -c`) are reparented to PID 1, which in a container or a CI sandbox
// may never reap them. A group holding only zombies runs nothing: it is
// empty for every purpose of the runner. /proc being unreadable, the group
// counts as live (the caller then waits, bounded, as before).
func groupLive(pgid int) bool {
	if syscall.Kill(-pgid, 0) == syscall.ESRCH {
		return false
	}
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return true
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // gone since the listing
		}
		if state, g, ok := parseStatGroup(b); ok && g == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}
