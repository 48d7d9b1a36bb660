package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopGuard bounds how long a test waits for an interrupted command: far
// above stopGrace, so that it only catches a command that does not stop.
const stopGuard = 20 * time.Second

// startRetrylab starts the retrylab command (the test binary, as TestMain
// installs it) in dir and waits until it catches SIGINT and SIGTERM, so
// that a signal sent next reaches its handler, not the default action.
func startRetrylab(t *testing.T, dir string, stdin *os.File, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	bin, err := exec.LookPath("retrylab")
	if err != nil {
		t.Fatalf("the retrylab test command is not installed: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stdout = &bytes.Buffer{}
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(stopGuard)
	for !catches(cmd.Process.Pid, syscall.SIGINT, syscall.SIGTERM) {
		if time.Now().After(deadline) {
			t.Fatalf("retrylab %v never installed its signal handlers", args)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cmd, &stderr
}

// catches reports whether process pid has a handler for every signal of
// sigs, from the SigCgt mask of /proc/PID/status.
func catches(pid int, sigs ...syscall.Signal) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if hex, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			if err != nil {
				return false
			}
			for _, s := range sigs {
				if mask&(1<<(uint(s)-1)) == 0 {
					return false
				}
			}
			return true
		}
	}
	return false
}

// waitExit waits for cmd and returns its exit code and how long it took
// after since.
func waitExit(t *testing.T, cmd *exec.Cmd, since time.Time) (int, time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		took := time.Since(since)
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), took
	case <-time.After(stopGuard):
		t.Fatalf("still running %s after the signal", stopGuard)
		return 0, 0
	}
}

// TestInterruptStopsBlockedCommands: SIGINT and SIGTERM stop a command
// whatever it is blocked on, with exit 130 or 143.
func TestInterruptStopsBlockedCommands(t *testing.T) {
	scenario, err := filepath.Abs("../../scenarios/forgeflare-429-retry-after.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type setup func(t *testing.T, dir string) (stdin *os.File, args []string)
	cases := []struct {
		name  string
		setup setup
	}{
		{"analyze stdin that never writes", func(t *testing.T, dir string) (*os.File, []string) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			return r, []string{"trace", "analyze", "-"}
		}},
		{"analyze a FIFO nobody writes", func(t *testing.T, dir string) (*os.File, []string) {
			fifo := filepath.Join(dir, "fifo.jsonl")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			return nil, []string{"trace", "analyze", fifo}
		}},
		{"analyze /dev/zero", func(t *testing.T, dir string) (*os.File, []string) {
			return nil, []string{"trace", "analyze", "/dev/zero"}
		}},
		{"chaos run with a client that sleeps", func(t *testing.T, dir string) (*os.File, []string) {
			return nil, []string{"chaos", "run", "--out", filepath.Join(dir, "runs"), "--client-cmd", "sleep 60", scenario}
		}},
	}
	for _, c := range cases {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(c.name+"/"+sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				stdin, args := c.setup(t, dir)
				cmd, stderr := startRetrylab(t, dir, stdin, nil, args...)
				time.Sleep(200 * time.Millisecond) // let it block (it must stop either way)
				sent := time.Now()
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				code, took := waitExit(t, cmd, sent)
				want := map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143}[sig]
				if code != want {
					t.Errorf("exit code %d, want %d; stderr:\n%s", code, want, stderr)
				}
				t.Logf("stopped %s after %s", took.Round(time.Millisecond), sig)
			})
		}
	}
}

// TestSecondInterruptExitsAtOnce: with a grace period far too long to wait
// for, a second Ctrl-C ends the command.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cmd, stderr := startRetrylab(t, t.TempDir(), r, []string{"RETRYLAB_TEST_STOP_GRACE=1h"}, "trace", "analyze", "-")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// The first signal stops the command cleanly if it can; this one must
	// not depend on it blocking, so send the second one right away.
	time.Sleep(100 * time.Millisecond)
	sent := time.Now()
	_ = cmd.Process.Signal(syscall.SIGINT)
	code, took := waitExit(t, cmd, sent)
	if code != 130 {
		t.Errorf("exit code %d, want 130; stderr:\n%s", code, stderr)
	}
	t.Logf("stopped %s after the second SIGINT", took.Round(time.Millisecond))
}
