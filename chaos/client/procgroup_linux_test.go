package client

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// becomeSubreaper makes this test process the reaper of its descendants'
// orphans, which it never reaps: like a container's PID 1 that does not
// reap, it leaves every orphan a zombie (this machine's PID 1 reaps them
// late; CI's may never). Undone at cleanup; orphans reparented by then stay
// zombies until the test binary exits. Not for parallel tests: it holds
// for the whole process.
func becomeSubreaper(t *testing.T) {
	t.Helper()
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		t.Skipf("prctl(PR_SET_CHILD_SUBREAPER): %v", e)
	}
	t.Cleanup(func() { _, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0) })
}

// TestParseStatGroup: the state and group are read after the last ")",
// whatever the command name holds.
func TestParseStatGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		stat  string
		state byte
		pgrp  int
		ok    bool
	}{
		{"42 (sleep) S 1 40 40 0 -1", 'S', 40, true},
		{"42 (sleep) Z 1 40 40 0 -1", 'Z', 40, true},
		{"42 (a) b (c)) R 7 9 9", 'R', 9, true}, // a name with spaces and parentheses
		{"42 (sleep S 1 40", 0, 0, false},       // no closing parenthesis
		{"42 (sleep) S 1", 0, 0, false},         // too short
		{"42 (sleep) S 1 x", 0, 0, false},
	}
	for _, tt := range tests {
		state, pgrp, ok := parseStatGroup([]byte(tt.stat))
		if state != tt.state || pgrp != tt.pgrp || ok != tt.ok {
			t.Errorf("parseStatGroup(%q) = %q, %d, %v; want %q, %d, %v", tt.stat, state, pgrp, ok, tt.state, tt.pgrp, tt.ok)
		}
	}
}

// TestGroupLiveIgnoresZombies: a group whose only member is a zombie (a
// process nobody has waited for) runs nothing, although kill(-pgid, 0)
// still succeeds for it; a group with a sleeping member is live.
func TestGroupLiveIgnoresZombies(t *testing.T) {
	t.Parallel()
	start := func(argv ...string) *exec.Cmd {
		c := exec.Command(argv[0], argv[1:]...)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	live := start("sleep", "30")
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	zombie := start("true")
	defer func() { _ = zombie.Wait() }()
	// Not waited for, it stays a zombie once it exits.
	statPath := "/proc/" + strconv.Itoa(zombie.Process.Pid) + "/stat"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(statPath)
		if state, _, ok := parseStatGroup(b); err == nil && ok && state == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("true never exited: %s", b)
		}
	}
	if err := syscall.Kill(-zombie.Process.Pid, 0); err != nil {
		t.Fatalf("kill(-pgid, 0) on a zombie's group: %v, want success (what the supervisor used to wait on)", err)
	}
	if groupLive(zombie.Process.Pid) {
		b, _ := os.ReadFile(statPath)
		t.Errorf("groupLive(group of a zombie) = true, want false; stat %q", bytes.TrimSpace(b))
	}
	if !groupLive(live.Process.Pid) {
		t.Error("groupLive(group of a sleeper) = false, want true")
	}
	_ = live.Process.Kill()
	_ = live.Wait()
	if groupLive(live.Process.Pid) {
		t.Error("groupLive(a group that is gone) = true, want false")
	}
}
