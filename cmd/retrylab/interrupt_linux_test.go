package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stopGuard bounds how long a test waits for an interrupted command: far
// above stopGrace, so that it only catches a command that does not stop.
const stopGuard = 20 * time.Second

// startRetrylab starts the retrylab command (the test binary, as TestMain
// installs it) in dir and waits until it handles SIGINT and SIGTERM (it
// writes a file then), so that a signal sent next reaches its handler: the
// Go runtime catches both from the start, and exits on them until then.
func startRetrylab(t *testing.T, dir string, stdin *os.File, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	bin, err := exec.LookPath("retrylab")
	if err != nil {
		t.Fatalf("the retrylab test command is not installed: %v", err)
	}
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	cmd.Env = append(append(os.Environ(), "RETRYLAB_TEST_READY_FILE="+ready), env...)
	var stderr bytes.Buffer
	cmd.Stdout = &bytes.Buffer{}
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(stopGuard)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("retrylab %v never installed its signal handlers", args)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cmd, &stderr
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

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// mainExitStuck runs mainExit with a command that ignores its context (it
// returns only when the test ends) and sends this process SIGINT once
// mainExit handles it, then once more when second is set; it returns the
// exit code and stderr.
func mainExitStuck(t *testing.T, grace time.Duration, second bool) (int, string) {
	defer func(r func(context.Context, []string, io.Writer, io.Writer) error, g time.Duration) {
		runCommand, stopGrace, signalsReady = r, g, nil
	}(runCommand, stopGrace)
	release := make(chan struct{})
	defer close(release)
	runCommand = func(context.Context, []string, io.Writer, io.Writer) error { <-release; return nil }
	stopGrace = grace
	ready := make(chan struct{})
	signalsReady = func() { close(ready) }
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() { code <- mainExit(nil, io.Discard, &stderr) }()
	<-ready
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if second {
		for !strings.Contains(stderr.String(), "stopping") {
			time.Sleep(time.Millisecond)
		}
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case c := <-code:
		return c, stderr.String()
	case <-time.After(stopGuard):
		t.Fatalf("mainExit still running %s after the signal; stderr:\n%s", stopGuard, stderr.String())
		return 0, ""
	}
}

// TestSecondInterruptExitsAtOnce: with a grace period far too long to wait
// for and a command that ignores its context, a second Ctrl-C ends it.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	code, stderr := mainExitStuck(t, time.Hour, true)
	if code != exitInterrupted || !strings.Contains(stderr, "second SIGINT") {
		t.Errorf("exit code %d, want %d after a second SIGINT; stderr:\n%s", code, exitInterrupted, stderr)
	}
}

// TestInterruptGraceEndsStuckCommand: a command that ignores its context
// cannot hold the process past the grace period.
func TestInterruptGraceEndsStuckCommand(t *testing.T) {
	code, stderr := mainExitStuck(t, 10*time.Millisecond, false)
	if code != exitInterrupted || !strings.Contains(stderr, "not stopped") {
		t.Errorf("exit code %d, want %d once the grace period ends; stderr:\n%s", code, exitInterrupted, stderr)
	}
}
