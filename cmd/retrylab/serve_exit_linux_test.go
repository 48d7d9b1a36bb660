package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeExitCode: a command that a signal ends (signalEnds: chaos
// serve) exits with its own code after SIGINT or SIGTERM, 0 or 1 as its
// verdict says, unless it returns the interruption itself; any other
// command exits 130 or 143 whatever it returned (hostile report finding
// 1: serve always exited 130).
func TestServeExitCode(t *testing.T) {
	tests := []struct {
		name string
		ends bool // the command calls signalEnds
		ret  func(ctx context.Context) error
		want map[syscall.Signal]int
		why  string
	}{
		{"serve, every check passed", true, func(context.Context) error { return nil },
			map[syscall.Signal]int{syscall.SIGINT: 0, syscall.SIGTERM: 0}, "the verdict's code"},
		{"serve, a check failed", true, func(context.Context) error { return fmt.Errorf("scenario s: %w", errFailed) },
			map[syscall.Signal]int{syscall.SIGINT: 1, syscall.SIGTERM: 1}, "the verdict's code"},
		{"serve, interrupted before its verdict", true, context.Cause,
			map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143}, "it returned the interruption"},
		{"another command that passed", false, func(context.Context) error { return nil },
			map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143}, "DESIGN: an interrupted command exits 130/143"},
	}
	for _, tc := range tests {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(tc.name+"/"+sig.String(), func(t *testing.T) {
				code := mainExitSignalled(t, sig, func(ctx context.Context) error {
					if tc.ends {
						signalEnds(ctx)
					}
					<-ctx.Done()
					return tc.ret(ctx)
				})
				if code != tc.want[sig] {
					t.Errorf("exit code %d, want %d (%s)", code, tc.want[sig], tc.why)
				}
			})
		}
	}
}

// mainExitSignalled runs mainExit with cmd as the command, sends this
// process sig once mainExit handles it, and returns the exit code.
func mainExitSignalled(t *testing.T, sig syscall.Signal, cmd func(ctx context.Context) error) int {
	t.Helper()
	defer func(r func(context.Context, []string, io.Writer, io.Writer) error, g time.Duration) {
		runCommand, stopGrace, signalsReady = r, g, nil
	}(runCommand, stopGrace)
	started := make(chan struct{})
	runCommand = func(ctx context.Context, _ []string, _, _ io.Writer) error {
		close(started)
		return cmd(ctx)
	}
	stopGrace = stopGuard // the command returns at once; a busy machine must not turn that into a forced exit
	ready := make(chan struct{})
	signalsReady = func() { close(ready) }
	code := make(chan int, 1)
	go func() { code <- mainExit(nil, io.Discard, io.Discard) }()
	<-ready
	<-started
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-code:
		return c
	case <-time.After(stopGuard):
		t.Fatalf("mainExit still running %s after %s", stopGuard, sig)
		return 0
	}
}

// TestServeExitCodeEndToEnd: retrylab chaos serve, stopped by Ctrl-C or
// SIGTERM after a client made its attempts, prints its verdict and exits
// 0 when every check passed, 1 when one failed (repro
// 01-serve-exit-code.sh of the hostile report).
func TestServeExitCodeEndToEnd(t *testing.T) {
	scenarios := map[string]struct {
		yaml    string
		code    int
		verdict string
	}{
		"pass": {"provider: anthropic\nmodel: m\nattempts: [{status: 529}, {ok: {}}]\nexpect: {attempts: 2, outcome: success}\n", 0, "PASS attempts: want 2, got 2"},
		"fail": {"provider: anthropic\nmodel: m\nattempts: [{status: 529}, {ok: {}}]\nexpect: {attempts: 5}\n", 1, "FAIL attempts: want 5, got 2"},
	}
	for name, sc := range scenarios {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(name+"/"+sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(sc.yaml), 0o644); err != nil {
					t.Fatal(err)
				}
				var stdout syncBuffer
				// A long grace: this tests the exit code, not how fast a
				// busy machine prints the verdict.
				cmd, stderr := startRetrylabOut(t, dir, nil, &stdout, []string{"RETRYLAB_TEST_STOP_GRACE=1m"},
					"chaos", "serve", "--scenario", "s.yaml", "--journal", filepath.Join(dir, "j", "server.jsonl"), "--env-file", filepath.Join(dir, "client.env"))
				base := waitLine(t, &stdout, "ANTHROPIC_BASE_URL=")
				// --env-file holds the lines stdout printed, whole, once
				// serve listens (the pytest plugin and the Node helper
				// read it).
				envFile, err := os.ReadFile(filepath.Join(dir, "client.env"))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(string(envFile), "ANTHROPIC_BASE_URL="+base+"\nOPENAI_BASE_URL="+base+"/v1\n") || !strings.HasSuffix(string(envFile), "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf\n") {
					t.Errorf("--env-file:\n%s", envFile)
				}
				for i := range 2 {
					resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
					if err != nil {
						t.Fatalf("attempt %d: %v", i+1, err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				code, _ := waitExit(t, cmd, time.Now())
				if code != sc.code || !strings.Contains(stdout.String(), sc.verdict) {
					t.Errorf("exit code %d, want %d; stdout:\n%s\nstderr:\n%s", code, sc.code, stdout.String(), stderr)
				}
			})
		}
	}
}

// waitLine waits until out has a line starting with prefix and returns
// the rest of it.
func waitLine(t *testing.T, out *syncBuffer, prefix string) string {
	t.Helper()
	deadline := time.Now().Add(stopGuard)
	for time.Now().Before(deadline) {
		for _, l := range strings.Split(out.String(), "\n") {
			if v, ok := strings.CutPrefix(l, prefix); ok {
				return v
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no line %q in:\n%s", prefix, out.String())
	return ""
}
