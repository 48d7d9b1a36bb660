package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProbeInterruptWritesWhatWasLearnt: Ctrl-C during chaos probe stops
// the clients, prints the profile of what finished (the 400 probe: not
// retried) marked interrupted, writes the policy, and exits 130; also when
// the grace period ends first ("grace expired": it ends at once), which
// printed nothing and wrote no policy.
func TestProbeInterruptWritesWhatWasLearnt(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not in PATH")
	}
	// The clients' teardown on a loaded 2-core machine can outlast the
	// 800ms grace, and the exit hooks its bound: this test is about what
	// is written, not how fast.
	for name, env := range map[string][]string{
		"own stop":      {"RETRYLAB_TEST_STOP_GRACE=15s"},
		"grace expired": {"RETRYLAB_TEST_STOP_GRACE=1ns", "RETRYLAB_TEST_FLUSH_BOUND=30s"},
	} {
		t.Run(name, func(t *testing.T) { probeInterrupt(t, env) })
	}
}

func probeInterrupt(t *testing.T, env []string) {
	agent, _ := filepath.Abs("../../testdata/clients/agent.py")
	dir := t.TempDir()
	client := `case "$RETRYLAB_SCENARIO" in probe-exhaust-*) sleep 60;; *) exec python3 ` + agent + `;; esac`
	cmd, stderr := startRetrylab(t, dir, nil, env, "chaos", "probe", "--client-cmd", client,
		"--only", "400", "--samples", "2", "--format", "json", "--policy-out", "p.yaml", "--out", "runs")
	deadline := time.Now().Add(stopGuard)
	for !strings.Contains(stderr.String(), "[probe-400] PASS") {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("the 400 probe never finished:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, _ := waitExit(t, cmd, sent)
	if code != exitInterrupted {
		t.Errorf("exit %d, want %d\n%s", code, exitInterrupted, stderr.String())
	}
	out := cmd.Stdout.(*bytes.Buffer).String()
	for _, want := range []string{`"interrupted": true`, `"fault": "400"`, `"retried": false`} {
		if !strings.Contains(out, want) {
			t.Errorf("the profile lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr.String(), "wrote the learnt policy to p.yaml") {
		t.Errorf("no policy written:\n%s", stderr.String())
	}
}
