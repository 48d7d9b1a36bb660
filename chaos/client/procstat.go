package client

import (
	"bytes"
	"strconv"
)

// parseStatGroup reads a process's state and process group from the text
// of /proc/PID/stat: "pid (comm) state ppid pgrp ...", where comm may hold
// spaces and parentheses.
func parseStatGroup(b []byte) (state byte, pgrp int, ok bool) {
	f, g, ok := statFields(b, 3)
	if !ok {
		return 0, 0, false
	}
	return f[0][0], g, true
}

// statFields splits the text of /proc/PID/stat after "pid (comm) " into
// its fields (state ppid pgrp ...), at least n of them, and reads the
// process group.
func statFields(b []byte, n int) (f [][]byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, 0, false
	}
	f = bytes.Fields(b[i+1:])
	if len(f) < max(n, 3) || len(f[0]) != 1 {
		return nil, 0, false
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return nil, 0, false
	}
	return f, g, true
}

// ExitedState reports whether the /proc/PID/stat text b is that of a
// process that has exited: a zombie ('Z', not yet reaped by its parent) or
// one being reaped ('X'). It runs nothing, although kill(pid, 0) still
// succeeds for it.
func ExitedState(b []byte) bool {
	state, _, ok := parseStatGroup(b)
	return ok && (state == 'Z' || state == 'X')
}

// parseStatCPU reads a process's group, the CPU it used (utime+stime) and
// the CPU its reaped children used (cutime+cstime), in clock ticks, from
// the text of /proc/PID/stat.
func parseStatCPU(b []byte) (pgrp int, own, reaped int64, ok bool) {
	// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime
	f, g, ok := statFields(b, 15)
	if !ok {
		return 0, 0, 0, false
	}
	var v [4]int64
	for j, s := range f[11:15] {
		var err error
		if v[j], err = strconv.ParseInt(string(s), 10, 64); err != nil || v[j] < 0 {
			return 0, 0, 0, false
		}
	}
	return g, v[0] + v[1], v[2] + v[3], true
}
