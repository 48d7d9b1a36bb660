//go:build unix

package chaos

import (
	"errors"
	"syscall"
)

// processAlive reports whether process pid exists on this machine: kill(pid,
// 0) fails with ESRCH only for a pid no process holds (EPERM means it exists
// but is another user's).
func processAlive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
