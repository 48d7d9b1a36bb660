package client

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSupervisorKillsGroupWhenRunnerKilled is the regression test for
// external clients running on for ever after a SIGKILL of the runner: a
// helper process (the runner) starts a client that sleeps, with a
// background job; once the helper is SIGKILLed, the client's whole process
// group is gone.
func TestSupervisorKillsGroupWhenRunnerKilled(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "RETRYLAB_TEST_CLIENT=parent")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pgid, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pgid ")))
	if err != nil || pgid <= 0 {
		_ = cmd.Process.Kill()
		t.Fatalf("helper said %q, %v", line, err)
	}
	defer killGroup(pgid) // whatever happens, no sleeper is left
	if err := syscall.Kill(-pgid, 0); err != nil {
		t.Fatalf("the client's group %d is not running: %v", pgid, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// A generous guard: on a loaded machine the kill takes a few
	// scheduling rounds; it is never near a minute.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		err := syscall.Kill(-pgid, 0)
		if err == syscall.ESRCH {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client's process group %d still runs a minute after its runner was killed (kill: %v)", pgid, err)
		}
	}
}

// TestSupervisorForwardsStatus checks that a supervised client's end is
// reported as it was: its exit code, or the signal that killed it, and that
// the supervisor, not this process, is its parent.
func TestSupervisorForwardsStatus(t *testing.T) {
	if !supervisorReady {
		t.Fatal("TestMain did not call MaybeSupervise")
	}
	for _, tc := range []struct {
		script string
		want   ClientStatus
	}{
		{"exit 0", ClientStatus{Code: 0}},
		{"exit 3", ClientStatus{Code: 3}},
		{"kill -SEGV $$", ClientStatus{Code: -1, Signaled: true, Signal: "segmentation fault"}},
		{"kill -KILL $$", ClientStatus{Code: -1, Signaled: true, Signal: "killed"}},
		{"kill -TERM $$", ClientStatus{Code: -1, Signaled: true, Signal: "terminated"}},
		{"echo out; echo err >&2; exit 7", ClientStatus{Code: 7}},
	} {
		t.Run(tc.script, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			p, err := StartClient([]string{"sh", "-c", "sleep 0.1; " + tc.script}, os.Environ(), &stdout, &stderr)
			if err != nil {
				t.Fatal(err)
			}
			// The client leads a group of its own, under a supervisor that
			// stays in the runner's group (so clientlag, which watches the
			// client's group, never counts the supervisor).
			if ppid, pgrp, ok := procStat(p.Pgid); ok {
				if ppid == os.Getpid() {
					t.Errorf("the client's parent is the runner, not a supervisor")
				}
				if pgrp != p.Pgid {
					t.Errorf("the client is in group %d, not its own (%d)", pgrp, p.Pgid)
				}
				if _, spgrp, ok := procStat(ppid); ok && spgrp != syscall.Getpgrp() {
					t.Errorf("the supervisor is in group %d, not the runner's (%d)", spgrp, syscall.Getpgrp())
				}
			}
			st := <-p.exited
			p.Drain(time.Minute, nil)
			p.Kill()
			if err := p.Reap(); err != nil {
				t.Error(err)
			}
			if st != tc.want {
				t.Errorf("status %+v, want %+v", st, tc.want)
			}
			if strings.HasPrefix(tc.script, "echo") && (stdout.String() != "out\n" || stderr.String() != "err\n") {
				t.Errorf("outputs %q, %q", stdout.String(), stderr.String())
			}
		})
	}
}

// TestSupervisorCannotStart: a program that does not exist is reported by
// the supervisor as the client not starting.
func TestSupervisorCannotStart(t *testing.T) {
	_, err := StartClient([]string{"/nonexistent/client"}, os.Environ(), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/client") {
		t.Errorf("startClient = %v, want the missing program named", err)
	}
}

// procStat reads a process's parent and process group from /proc.
func procStat(pid int) (ppid, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	return ppid, pgrp, err1 == nil && err2 == nil
}

// TestSupervisorEndsWhenOnlyZombiesRemain is a regression test: a client
// that ignores SIGTERM (sh -c, trap, sleep 30) killed on Ctrl-C left its sleep an
// orphan that PID 1 (of a container, of a CI sandbox) did not reap; the
// supervisor waited while kill(-pgid, 0) still found that zombie, and the
// runner waited reapSupervisor's 10s for it, past Ctrl-C's grace period.
// This process stands in for such a PID 1 (it reaps no orphan), so the
// zombie stays for the whole test.
func TestSupervisorEndsWhenOnlyZombiesRemain(t *testing.T) {
	if !supervisorReady {
		t.Fatal("TestMain did not call MaybeSupervise")
	}
	becomeSubreaper(t)
	p, err := StartClient([]string{"sh", "-c", "trap '' TERM; sleep 30"}, os.Environ(), &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until sh has started its sleep (the group has two members).
	for deadline := time.Now().Add(time.Minute); countGroup(p.Pgid) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.Kill()
			t.Fatal("the client never started its sleep")
		}
	}
	p.Kill()
	<-p.exited
	p.Drain(0, nil)
	if err := p.Reap(); err != nil {
		t.Errorf("reap: %v (the supervisor waited on a zombie)", err)
	}
	if groupLive(p.Pgid) {
		t.Errorf("the client's group %d still runs after the kill", p.Pgid)
	}
}

// countGroup counts the processes of group pgid, zombies included.
func countGroup(pgid int) int {
	names, _ := filepath.Glob("/proc/[0-9]*/stat")
	n := 0
	for _, name := range names {
		b, err := os.ReadFile(name)
		if _, g, ok := parseStatGroup(b); err == nil && ok && g == pgid {
			n++
		}
	}
	return n
}
