package chaos

import (
	"bytes"
	"os"
	"strconv"
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

// parseStatGroup reads a process's state and process group from the text
// of /proc/PID/stat: "pid (comm) state ppid pgrp ...", where comm may hold
// spaces and parentheses.
func parseStatGroup(b []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], g, true
}
