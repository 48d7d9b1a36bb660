//go:build unix

package mock

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/client"
)

// TestAliveFrom: the stale-proxy check at start counts a zombie (an exited
// process its parent has not reaped) as dead; kill(pid, 0) alone said it
// was alive, so the proxies of a run whose process was a zombie stayed on
// the server for as long as the zombie did.
func TestAliveFrom(t *testing.T) {
	t.Parallel()
	noStat := &os.PathError{Op: "open", Path: "/proc/42/stat", Err: syscall.ENOENT}
	tests := []struct {
		name    string
		killErr error
		stat    string
		statErr error
		want    bool
	}{
		{"running", nil, "42 (retrylab) R 1 42 42", nil, true},
		{"sleeping", nil, "42 (retrylab) S 1 42 42", nil, true},
		{"stopped (Ctrl-Z) is alive", nil, "42 (retrylab) T 1 42 42", nil, true},
		{"zombie", nil, "42 (retrylab) Z 1 42 42", nil, false},
		{"being reaped", nil, "42 (retrylab) X 1 42 42", nil, false},
		{"zombie with a name that looks like a state", nil, "42 (a) S (b) Z 1 42 42", nil, false},
		{"no such process", syscall.ESRCH, "", noStat, false},
		{"another user's", syscall.EPERM, "42 (retrylab) S 1 42 42", nil, true},
		{"another user's zombie", syscall.EPERM, "42 (retrylab) Z 1 42 42", nil, false},
		{"no /proc (darwin): kill's answer", nil, "", noStat, true},
		{"a stat that does not parse: kill's answer", nil, "garbage", nil, true},
	}
	for _, tt := range tests {
		if got := aliveFrom(tt.killErr, []byte(tt.stat), tt.statErr); got != tt.want {
			t.Errorf("%s: aliveFrom(%v, %q, %v) = %v, want %v", tt.name, tt.killErr, tt.stat, tt.statErr, got, tt.want)
		}
	}
}

// TestProcessAliveZombie: a real zombie (a child not waited for) is dead
// to processAlive, a sleeping child alive. Linux only (/proc).
func TestProcessAliveZombie(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	live := exec.Command("sleep", "30")
	zombie := exec.Command("true")
	for _, c := range []*exec.Cmd{live, zombie} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { _ = live.Process.Kill(); _ = live.Wait(); _ = zombie.Wait() }()
	stat := "/proc/" + strconv.Itoa(zombie.Process.Pid) + "/stat"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(stat); err == nil && client.ExitedState(b) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("true never became a zombie")
		}
	}
	if err := syscall.Kill(zombie.Process.Pid, 0); errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill(zombie, 0) = %v: the zombie was reaped", err)
	}
	if ProcessAlive(zombie.Process.Pid) {
		t.Error("processAlive(a zombie) = true, want false")
	}
	if !ProcessAlive(live.Process.Pid) {
		t.Error("processAlive(a sleeping child) = false, want true")
	}
}
