//go:build unix

package mock

import (
	"errors"
	"os"
	"strconv"
	"syscall"

	"github.com/retrylab/retrylab/chaos/client"
)

// ProcessAlive reports whether process pid exists on this machine and has
// not exited (see aliveFrom).
func ProcessAlive(pid int) bool {
	// /proc/PID/stat exists on Linux only: elsewhere the read fails and
	// kill's answer stands.
	stat, statErr := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return aliveFrom(syscall.Kill(pid, 0), stat, statErr)
}

// aliveFrom is processAlive's verdict from kill(pid, 0)'s error and the
// process's /proc/PID/stat (or the error reading it). kill fails with
// ESRCH only for a pid no process holds (EPERM means it exists but is
// another user's); it succeeds for a zombie, an exited process its parent
// has not reaped (in a container whose PID 1 never reaps, for good), which
// is dead for every purpose here. When the stat cannot be read, kill's
// answer stands.
func aliveFrom(killErr error, stat []byte, statErr error) bool {
	if errors.Is(killErr, syscall.ESRCH) {
		return false
	}
	return statErr != nil || !client.ExitedState(stat)
}
