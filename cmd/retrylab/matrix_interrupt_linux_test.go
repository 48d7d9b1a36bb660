package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrylab/retrylab/matrix"
)

// onceClient makes RETRYLAB_REQUESTS requests, one attempt each: a client
// that never retries, whose whole probe takes seconds.
const onceClient = `n=${RETRYLAB_REQUESTS:-1}; i=0; rc=0
while [ "$i" -lt "$n" ]; do
  s=$(curl -s -N --max-time 1 -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' \
    -H 'anthropic-version: 2023-06-01' -H "x-api-key: $ANTHROPIC_API_KEY" \
    -d '{"model":"m","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}' "$ANTHROPIC_BASE_URL/v1/messages")
  [ "$s" = 200 ] || rc=1; i=$((i+1))
done
exit $rc
`

// TestMatrixInterruptWritesWhatFinished: Ctrl-C while one client is still
// being probed (it hangs on every request) exits 130 within the grace
// period and writes matrix.json, matrix.md and index.html holding the
// client that finished, probed, and the one stopped, marked interrupted
// (a later run probes it again: it is not kept).
func TestMatrixInterruptWritesWhatFinished(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not in PATH")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "once.sh"), []byte(onceClient), 0o644); err != nil {
		t.Fatal(err)
	}
	man := "clients:\n" +
		"  - {name: once, version: '1', command: [sh, once.sh], provider: anthropic}\n" +
		"  - {name: stuck, version: '1', command: 'sleep 60', provider: anthropic}\n"
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(man), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, stderr := startRetrylab(t, dir, nil, []string{"RETRYLAB_TEST_STOP_GRACE=15s"},
		"matrix", "m.yaml", "-o", "out", "--parallel", "2", "--budget", "30s", "--samples", "2", "--start-grace", "30s")
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(stderr.String(), "once 1: done") {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("the once client never finished:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, took := waitExit(t, cmd, sent)
	if code != exitInterrupted {
		t.Errorf("exit %d, want %d\n%s", code, exitInterrupted, stderr.String())
	}
	t.Logf("stopped %s after the signal", took)
	data, err := os.ReadFile(filepath.Join(dir, "out", "matrix.json"))
	if err != nil {
		t.Fatalf("no matrix.json: %v\n%s", err, stderr.String())
	}
	var m matrix.Matrix
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	once, stuck := m.Find("once"), m.Find("stuck")
	if once == nil || once.Profile == nil || once.Profile.Interrupted {
		t.Errorf("the finished client is not in the matrix, probed: %+v", once)
	}
	if stuck != nil && (stuck.Profile == nil || !stuck.Profile.Interrupted) && stuck.Error == "" {
		t.Errorf("the stopped client is in the matrix as if finished: %+v", stuck)
	}
	for _, f := range []string{"matrix.md", "index.html"} {
		if _, err := os.Stat(filepath.Join(dir, "out", f)); err != nil {
			t.Error(err)
		}
	}
}
