package chaos

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

func runnerToxi(t *testing.T) *mock.Toxiproxy {
	t.Helper()
	toxi, err := mock.StartToxiproxy(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	return toxi
}

func parse(t *testing.T, name, src string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.ParseScenario(name+".yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func failedNames(r Result) []string {
	var out []string
	for _, c := range r.failedChecks() {
		out = append(out, c.Name)
	}
	return out
}

func byName(s *Summary) map[string]Result {
	m := map[string]Result{}
	for _, r := range s.Scenarios {
		m[r.Name] = r
	}
	return m
}

// assertNoKey proves that the fake API key (and the other keys given)
// reached no run file.
func assertNoKey(t *testing.T, dir string, others ...string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, k := range append([]string{redact.FakeAPIKey}, others...) {
			if strings.Contains(string(b), k) {
				t.Errorf("%s contains the API key %q", p, k)
			}
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walk %s: %v (%d files)", dir, err, n)
	}
}

func TestRunBuiltin(t *testing.T) {
	toxi := runnerToxi(t)
	scs := []*scenario.Scenario{
		parse(t, "overloaded", `
client: {policy: forgeflare}
timeScale: 0.01
attempts: [{status: 529}]
expect: {outcome: success, attempts: 2, failureTypes: [overloaded], delays: [2s]}
`),
		// Deliberately wrong: the wait is the Retry-After (1s), not 5s.
		parse(t, "wrong-delay", `
client: {policy: forgeflare}
timeScale: 0.1
attempts: [{status: 429, retryAfter: "1"}]
expect: {outcome: success, attempts: 2, failureTypes: [rate_limit], delays: [5s]}
`),
		// Regression: a name with "sk-" inside a word ("task-check") was
		// redacted to "task-***" in result.json, summary.json and the traces.
		parse(t, "curl-task-check", `
client: {policy: forgeflare}
attempts: [{status: 400}]
expect: {outcome: failure, attempts: 1, failureTypes: [invalid_request], delays: []}
`),
	}
	out := t.TempDir()
	r := &Runner{Toxi: toxi, ToxiName: "embedded", Out: out, Seed: 7, Shard: "1/1", Confirm: 2}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Passed+sum.Inconclusive != 2 || sum.Failed-sum.Inconclusive != 1 {
		t.Errorf("passed %d failed %d (inconclusive %d), want 2 and 1: %+v", sum.Passed, sum.Failed, sum.Inconclusive, sum)
	}
	// The shard is recorded by the runner itself (the CLI used to write
	// summary.json a second time to add it).
	if b, _ := os.ReadFile(filepath.Join(sum.RunDir, "summary.json")); !strings.Contains(string(b), `"shard": "1/1"`) {
		t.Errorf("summary.json lacks the shard:\n%s", b)
	}
	res := byName(sum)
	if r, ok := res["curl-task-check"]; !ok || !notFailed(r) || filepath.Base(r.Dir) != "curl-task-check" {
		t.Errorf("curl-task-check: %+v, want it passed under its own name and folder", r)
	}
	for _, f := range []string{"summary.json", "curl-task-check/trace.jsonl", "curl-task-check/server.jsonl", "curl-task-check/result.json"} {
		if b, _ := os.ReadFile(filepath.Join(sum.RunDir, f)); !strings.Contains(string(b), "curl-task-check") || strings.Contains(string(b), "task-***") {
			t.Errorf("%s: the scenario's name was mangled or is missing:\n%.300s", f, b)
		}
	}
	if diff := cmp.Diff([]string{"delays.client", "delays.server"}, failedNames(res["wrong-delay"])); diff != "" {
		t.Errorf("wrong-delay failed checks mismatch (-want +got):\n%s", diff)
	}
	if c := res["wrong-delay"].failedChecks()[0]; c.Want != "5s" || c.Got != "1s" || !strings.Contains(c.Where, "RetryAttempt attempt 1") {
		t.Errorf("wrong-delay check = %+v, want want 5s got 1s at attempt 1", c)
	}
	for _, name := range []string{"overloaded", "curl-task-check"} {
		if r := res[name]; !notFailed(r) {
			t.Errorf("%s failed: %+v", name, r)
		}
	}
	for _, name := range []string{"overloaded", "wrong-delay", "curl-task-check"} {
		for _, f := range []string{"trace.jsonl", "server.jsonl", "result.json"} {
			if _, err := os.Stat(filepath.Join(sum.RunDir, name, f)); err != nil {
				t.Errorf("run folder: %v", err)
			}
		}
	}
	var back Summary
	b, err := os.ReadFile(filepath.Join(sum.RunDir, "summary.json"))
	if err != nil || json.Unmarshal(b, &back) != nil || back.Seed != 7 || back.Schema != SummarySchema {
		t.Errorf("summary.json: %v, seed %d schema %q", err, back.Seed, back.Schema)
	}
	assertNoKey(t, out)

	// trace analyze reads the run folder as it is.
	files, err := trace.Discover([]string{sum.RunDir})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analyze.Run(context.Background(), files, analyze.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	// A re-run (a busy machine made "overloaded"'s wall-clock check
	// inconclusive) is a run of its own, with one request and one retry.
	again := int64(len(res["overloaded"].Reruns))
	if a.Requests.Total != 3+again || a.Requests.Failed != 1 || a.Requests.Retries != 2+again {
		t.Errorf("analysis of the run folder: %+v, want %d requests, 1 failed, %d retries", a.Requests, 3+again, 2+again)
	}
}

func TestRunExternal(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	toxi := runnerToxi(t)
	root, _ := filepath.Abs("../testdata/clients/agent.py")
	scs := []*scenario.Scenario{
		parse(t, "python", `
client: {command: [python3, `+root+`]}
timeScale: 0.01
attempts: [{status: 529}, {status: 429}]
expect: {outcome: success, attempts: 3, failureTypes: [overloaded, rate_limit], delays: [1s, 2s]}
`),
		// A client that prints its key and crashes.
		parse(t, "crash", `
client: {command: [sh, -c, 'echo "key=$ANTHROPIC_API_KEY" >&2; kill -9 $$']}
expect: {outcome: failure}
`),
		// A client that sends keys that do not look like sk-... and prints
		// them everywhere: stdout (one past a 64 KiB line, where a forced
		// flush used to split it), stderr without a final newline, its
		// trace.
		parse(t, "plain-key", `
client:
  command:
    - python3
    - -c
    - |
      import json, os, sys, urllib.request
      k1, k2 = "hidden-plain-" + "key-777", "other-plain-" + "token-888"
      req = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", method="POST",
          data=b'{"model":"m","stream":true}', headers={"x-api-key": k1, "Authorization": "Bearer " + k2})
      urllib.request.urlopen(req).read()
      print("x" * 65530 + k1 + " " + k2)
      with open(os.environ["RETRYLAB_TRACE"], "a") as f:
          f.write(json.dumps({"v": 1, "type": "ProviderRequestFinished", "payload": {"success": True, "retries": 0, "note": k1 + k2}}) + "\n")
      sys.stderr.write("keys " + k1 + " " + k2)
expect: {outcome: success, attempts: 1}
`),
		// A client that hangs past maxDuration.
		parse(t, "hang", `
client: {command: [sh, -c, 'echo started; exec sleep 30']}
expect: {outcome: failure, maxDuration: 500ms}
`),
	}
	out := t.TempDir()
	progress := &syncBuffer{}
	r := &Runner{Toxi: toxi, Out: out, Seed: 1, Progress: progress, Confirm: 2}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	res := byName(sum)
	for _, name := range []string{"python", "plain-key"} {
		if !notFailed(res[name]) {
			t.Errorf("%s client scenario failed: %+v %s", name, res[name].failedChecks(), res[name].Error)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(sum.RunDir, "plain-key", "stderr.txt")); string(b) != "keys *** ***" {
		t.Errorf("plain-key stderr.txt = %q, want the keys scrubbed", b)
	}
	if b, _ := os.ReadFile(filepath.Join(sum.RunDir, "plain-key", "stdout.txt")); !strings.HasSuffix(string(b), "x*** ***\n") {
		t.Errorf("plain-key stdout.txt ends %q, want the keys scrubbed", b[max(len(b)-40, 0):])
	}
	for _, k := range []string{"hidden-plain-key-777", "other-plain-token-888", redact.FakeAPIKey} {
		if strings.Contains(progress.String(), k) {
			t.Errorf("progress output contains %q", k)
		}
	}
	tests := []struct {
		name, problem string
		failed        []string
	}{
		{"crash", "crashed: killed by signal killed", []string{"client"}},
		{"hang", "killed after 500ms", []string{"client", "maxDuration"}},
	}
	for _, tt := range tests {
		r := res[tt.name]
		if diff := cmp.Diff(tt.failed, failedNames(r)); diff != "" {
			t.Errorf("%s failed checks mismatch (-want +got):\n%s", tt.name, diff)
		}
		if fc := r.failedChecks(); len(fc) == 0 || !strings.HasPrefix(fc[0].Got, tt.problem) {
			t.Errorf("%s client check = %+v, want got %q...", tt.name, fc, tt.problem)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(sum.RunDir, "crash", "stderr.txt")); !strings.Contains(string(b), "key=sk-***") {
		t.Errorf("crash stderr.txt = %q, want the key redacted", b)
	}
	if b, _ := os.ReadFile(filepath.Join(sum.RunDir, "hang", "stdout.txt")); string(b) != "started\n" {
		t.Errorf("hang stdout.txt = %q, want the partial output kept", b)
	}
	assertNoKey(t, out, "hidden-plain-key-777", "other-plain-token-888")
}
