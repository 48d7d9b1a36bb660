package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// TestRunExternalRobustness runs external clients that misbehave, and a
// shell client (testdata/clients/curl.sh) that the harness can only check
// from the server journal.
func TestRunExternalRobustness(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	toxi := runnerToxi(t)
	curlSh, _ := filepath.Abs("../testdata/clients/curl.sh")
	curlReq := `curl -sS -o /dev/null -X POST "$ANTHROPIC_BASE_URL/v1/messages" -d '{"stream":true}'`
	scs := []*scenario.Scenario{
		parse(t, "curl", `
client: {command: [sh, `+curlSh+`]}
timeScale: 0.01
attempts: [{status: 529}, {drop: {afterBytes: 300}}, {reset: {}}]
expect: {outcome: success, attempts: 4, failureTypes: [overloaded, stream_interrupted, connection_error]}
`),
		// Regression: a client that wrote the key into its own trace left
		// it in the run folder's trace.jsonl.
		parse(t, "trace-key", `
client:
  command:
    - sh
    - -c
    - |
      printf '{"v":1,"type":"ProviderRequestFinished","payload":{"success":true,"retries":0,"note":"%s"}}\n' "$ANTHROPIC_API_KEY" >> "$RETRYLAB_TRACE"
      `+curlReq+`
expect: {outcome: success, attempts: 1}
`),
		// Regression: a client that exited while a process it started held
		// its stdout made the run wait for that process, past the deadline.
		// Now the client check fails and says so, 2s after the exit.
		parse(t, "orphan", `
client:
  command:
    - sh
    - -c
    - |
      `+curlReq+`
      (sleep 60 &)
      echo parent done
expect: {outcome: failure, attempts: 1, maxDuration: 10s}
`),
	}
	out := t.TempDir()
	r := &Runner{Toxi: toxi, Out: out, Seed: 1, Confirm: 2}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	res := byName(sum)
	for _, name := range []string{"curl", "trace-key"} {
		if !notFailed(res[name]) {
			t.Errorf("%s scenario failed: %+v", name, res[name].failedChecks())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(sum.RunDir, "curl", "stdout.txt")); !strings.HasSuffix(string(b), "attempt ok: 38 deltas\n") {
		t.Errorf("curl stdout.txt = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(sum.RunDir, "trace-key", "trace.jsonl")); !strings.Contains(string(b), `"note":"sk-***"`) {
		t.Errorf("trace-key trace.jsonl = %q, want the key redacted", b)
	}
	o := res["orphan"]
	if diff := cmp.Diff([]string{"client"}, failedNames(o)); diff != "" {
		t.Errorf("orphan failed checks mismatch (-want +got):\n%s", diff)
	}
	if fc := o.failedChecks(); len(fc) == 0 || !strings.HasPrefix(fc[0].Got, "left processes running: the client exited (code 0)") {
		t.Errorf("orphan client check = %+v", fc)
	}
	if b, _ := os.ReadFile(filepath.Join(sum.RunDir, "orphan", "stdout.txt")); string(b) != "parent done\n" {
		t.Errorf("orphan stdout.txt = %q", b)
	}
	assertNoKey(t, out)
}

// TestRunExternalKillsBackground is a regression test: after a clean exit,
// a background process the client started without its stdout (so Wait did
// not wait for it) stayed alive and could keep sending requests. The
// client's process group is now killed after every exit.
func TestRunExternalKillsBackground(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	toxi := runnerToxi(t)
	pidFile := filepath.Join(t.TempDir(), "bg.pid")
	sc := parse(t, "background", `
client:
  command:
    - sh
    - -c
    - |
      sleep 30 >/dev/null 2>&1 &
      echo $! > `+pidFile+`
      curl -sS -o /dev/null -X POST "$ANTHROPIC_BASE_URL/v1/messages" -d '{}'
expect: {outcome: success, attempts: 1}
`)
	r := &Runner{Toxi: toxi, Out: t.TempDir(), Seed: 1, Confirm: 2}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	if res := byName(sum)["background"]; !notFailed(res) {
		t.Errorf("background scenario failed: %+v", res.failedChecks())
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// SIGKILL is delivered asynchronously and the orphan is reaped by init:
	// wait (bounded, far below sleep's 30s) until it is gone or a zombie.
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("background process %d still running after the client exited", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
