//go:build unix

package main

import (
	"os"
	"syscall"
)

// maxRSSKiB returns the peak resident set size of the exited process (KiB
// on Linux; bytes on macOS, where getrusage counts so).
func maxRSSKiB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}
