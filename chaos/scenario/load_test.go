package scenario

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/retry"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestLoadErrors checks every loader error message against a golden file:
// file, line, column, field path and hint.
func TestLoadErrors(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/load/*.yaml")
	if len(files) == 0 {
		t.Fatal("no test files")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			_, err := LoadScenario(f)
			if err == nil {
				t.Fatalf("LoadScenario(%s) = nil error, want errors", f)
			}
			var le LoadErrors
			if !errors.As(err, &le) {
				t.Fatalf("error is %T, want LoadErrors", err)
			}
			// What the CLI prints: "error: " Error(), then "hint: " Hint().
			got := "error: " + err.Error() + "\n"
			if h := le.Hint(); h != "" {
				got += "hint: " + h + "\n"
			}
			// Every hint is printed once (not in Error() and again in Hint()).
			hints := map[string]int{}
			for _, e := range le {
				if e.Hint != "" {
					hints[e.Hint]++
				}
			}
			for h, n := range hints {
				if c := strings.Count(got, h); c != n {
					t.Errorf("hint %q printed %d times, want %d:\n%s", h, c, n, got)
				}
			}
			golden := strings.TrimSuffix(f, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadDefaultsAndJSON(t *testing.T) {
	t.Parallel()
	sc, err := LoadScenario("testdata/load/ok.json")
	if err != nil {
		t.Fatal(err)
	}
	three := 3
	want := &Scenario{
		Name: "ok", Provider: "openai", Model: DefaultOpenAIModel, Requests: 1, TimeScale: 1,
		Attempts: []Fault{{Kind: fault.Status{Status: 503}, Line: 1}, {Kind: fault.Hang{}, Line: 1}, {Kind: fault.OK{}, Line: 1}},
		Expect:   Expect{Outcome: "success", Attempts: &three, Delays: Delays{Set: true, Policy: true}},
		File:     "testdata/load/ok.json",
		Lines:    map[string]int{"expect": 1, "expect.attempts": 1, "expect.delays": 1, "expect.outcome": 1},
	}
	if diff := cmp.Diff(want, sc, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Client.Policy" }, cmp.Ignore())); diff != "" {
		t.Errorf("LoadScenario mismatch (-want +got):\n%s", diff)
	}
}

func TestParseScenarioFields(t *testing.T) {
	t.Parallel()
	src := `
name: full
description: all fields
provider: anthropic
model: claude-haiku-4-5
client:
  policy: forgeflare
  timeout: 5s
  escalation: [a, b]
  command: ["sh", "x.sh"]
requests: 2
timeScale: 0.1
attempts:
  - status: 429
    retryAfter: "2"
    errorType: rate_limit_error
    message: slow down
    headers: {x-should-retry: "true"}
  - sseError: {afterEvents: 3, type: overloaded_error}
  - drop: {afterBytes: 400}
  - hang:
  - reset: {}
  - latency: 300ms
  - toxics: [{type: bandwidth, stream: downstream, attributes: {rate: 1}}]
  - ok: {}
expect:
  outcome: failure
  attempts: 8
  failureTypes: [rate_limit]
  delays: [2s, 0, 1.5s]
  tolerance: {ratio: 0.1, abs: 150ms}
  escalations: [{from: a, to: b, reason: auto_after_retries}]
  maxDuration: 30s
`
	sc, err := ParseScenario("full.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range sc.Attempts {
		kinds = append(kinds, f.Name())
	}
	if diff := cmp.Diff([]string{"status", "sseError", "drop", "hang", "reset", "latency", "toxics", "ok"}, kinds); diff != "" {
		t.Errorf("kinds mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Duration{Duration(2 * time.Second), 0, Duration(1500 * time.Millisecond)}, sc.Expect.Delays.List); diff != "" {
		t.Errorf("delays mismatch (-want +got):\n%s", diff)
	}
	if pol, err := PolicyFor(sc); err != nil || pol.Name != "forgeflare" {
		t.Errorf("client.policy not decoded: %v, %v", pol, err)
	}
	if sc.Client.Timeout.D() != 5*time.Second || sc.TimeScale != 0.1 || sc.Requests != 2 {
		t.Errorf("client/timeScale/requests not decoded: %+v", sc)
	}
	if got := sc.Attempts[6].Kind.(fault.Toxics)[0].Attributes["rate"]; got != 1 {
		t.Errorf("toxic attribute rate = %v, want 1", got)
	}
	if sc.Attempts[1].Line != 19 {
		t.Errorf("attempts[1].Line = %d, want 19", sc.Attempts[1].Line)
	}
}

func TestLoadPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", "name: same\n")
	write("b.yml", "name: same\n")
	write("notes.txt", "ignored\n")
	scs, err := LoadPaths([]string{dir, filepath.Join(dir, "missing.yaml")})
	if len(scs) != 1 {
		t.Errorf("loaded %d scenarios, want 1", len(scs))
	}
	if err == nil || !strings.Contains(err.Error(), `scenario name "same" is also used by`) || !strings.Contains(err.Error(), "missing.yaml: cannot read") {
		t.Errorf("LoadPaths error = %v, want duplicate name and missing file", err)
	}
}

// TestLoadPathsSkipsRunFolders is a regression test: 'chaos run .' twice
// loaded the first run's result.json and summary.json as scenarios and
// exited 2. A folder walk skips run folders and the skipped folders (--out);
// files named explicitly are still loaded.
func TestLoadPathsSkipsRunFolders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("a.yaml", "name: a\n")
	write("sub/b.yaml", "name: b\n")
	// A run folder as chaos run writes it, under the default --out.
	write("runs/2026-01-01T00-00-00Z/summary.json", `{"seed": 1, "scenarios": []}`)
	result := write("runs/2026-01-01T00-00-00Z/a/result.json", `{"name": "a", "file": "a.yaml", "pass": true}`)
	// A run folder outside --out, and a folder inside --out that is not
	// (yet) a run folder.
	write("old/summary.json", `{"seed": 2}`)
	write("old/a/result.json", `{"name": "a"}`)
	write("out/stray.json", `{"name": "stray"}`)
	explicit := write("named/c.json", `{"name": "c"}`)
	write("named/summary.json", `{"seed": 3}`)

	names := func(scs []*Scenario) []string {
		var n []string
		for _, sc := range scs {
			n = append(n, sc.Name)
		}
		return n
	}
	tests := []struct {
		name    string
		paths   []string
		skip    []string
		want    []string
		wantErr string
	}{
		{name: "run folders skipped", paths: []string{dir}, skip: []string{filepath.Join(dir, "out")}, want: []string{"a", "b"}},
		{name: "out skipped by another spelling", paths: []string{dir}, skip: []string{dir + "/./out/"}, want: []string{"a", "b"}},
		{name: "missing out is no error", paths: []string{filepath.Join(dir, "sub")}, skip: []string{filepath.Join(dir, "nope")}, want: []string{"b"}},
		{name: "explicit files still loaded", paths: []string{explicit}, skip: []string{filepath.Join(dir, "named")}, want: []string{"c"}},
		{name: "a run folder named as a folder", paths: []string{filepath.Join(dir, "old")}, wantErr: "no scenario files (*.yaml, *.yml, *.json) in this folder outside run folders"},
		{name: "explicit result.json is loaded and rejected", paths: []string{result}, wantErr: `result.json:1:33: pass: unknown key "pass"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scs, err := LoadPaths(tt.paths, tt.skip...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LoadPaths error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadPaths: %v", err)
			}
			if diff := cmp.Diff(tt.want, names(scs)); diff != "" {
				t.Errorf("LoadPaths() scenarios mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseScenario(f *testing.F) {
	files, _ := filepath.Glob("testdata/load/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("attempts: [{status: 429, retryAfter: '1'}]\nexpect: {delays: [1s]}"))
	f.Add([]byte("fleet: {clients: 3, stagger: 1s}\noutage: {phases: [{for: 1s, mix: [{weight: 1, status: 529}]}]}\nexpect: {fleet: {survived: 3, amplification: '<= 1.5', synchrony: '>= 0.9', recoveredWithin: 2s}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ParseScenario("fuzz.yaml", data)
		if err == nil && sc == nil {
			t.Fatal("nil scenario without error")
		}
		if err != nil {
			var le LoadErrors
			if !errors.As(err, &le) || len(le) == 0 {
				t.Fatalf("error %T %v is not LoadErrors", err, err)
			}
		}
	})
}

// TestClientOperation is a regression test: the scenario format could not
// say which operation the client retries, so Plandex walkthrough 4 (an
// irreversible operation is not retried) had no scenario.
func TestClientOperation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		yaml string
		want retry.Safety
	}{
		{"", retry.Safe},
		{"operation: safe", retry.Safe},
		{"operation: conditional", retry.SafeAfterRollback},
		{"operation: irreversible", retry.Irreversible},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			src := "client: {policy: plandex}\nattempts: [{status: 503}]\n"
			if tt.yaml != "" {
				src = "client:\n  policy: plandex\n  " + tt.yaml + "\nattempts: [{status: 503}]\n"
			}
			sc, err := ParseScenario("op.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if got := sc.Client.Safety(); got != tt.want {
				t.Errorf("Safety() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPolicyFile: client.policy may name a policy file (seed 004 US-004),
// relative to the scenario file, and a folder walk leaves NAME.policy.yaml
// files out of the scenarios.
func TestPolicyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sub := filepath.Join(dir, "suite")
	if err := os.MkdirAll(filepath.Join(sub, "policies"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(sub, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("policies/team.policy.yaml", "preset: forgeflare\nfailureTypes:\n  rate_limit:\n    initialDelay: 3s\n")
	write("a.yaml", "client:\n  policy: policies/team.policy.yaml\nattempts:\n  - status: 429\nexpect:\n  outcome: success\n")
	scs, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatalf("LoadPaths: %v", err)
	}
	if len(scs) != 1 {
		t.Fatalf("LoadPaths found %d scenarios, want 1 (the policy file is not a scenario)", len(scs))
	}
	p, err := PolicyFor(scs[0])
	if err != nil {
		t.Fatalf("policyFor: %v", err)
	}
	if got := p.Strategy(retry.RateLimit).InitialDelay; got != 3*time.Second {
		t.Errorf("rate_limit initialDelay = %v, want the policy file's 3s", got)
	}
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"team.policy.yaml", true}, {"x/Team.Policy.YML", true}, {"a.policy.json", true},
		{"policy.yaml", false}, {"policies.yaml", false}, {"a.yaml", false},
	} {
		if got := isPolicyFileName(tc.name); got != tc.want {
			t.Errorf("isPolicyFileName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestScenarioExpectLines(t *testing.T) {
	t.Parallel()
	src := "name: lines\nclient:\n  policy: anthropic-sdk\nattempts:\n  - status: 529\nexpect:\n  outcome: success\n  attempts: 2\n  delays: policy\n  maxDuration: 30s\n"
	sc, err := ParseScenario("lines.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for check, want := range map[string]int{
		"outcome": 7, "attempts": 8, "delays.client": 9, "delays.server": 9, "delays": 9,
		"maxDuration": 10, "client": 2, "escalations": 6, "journal": 6,
	} {
		if got := sc.ExpectLine(check); got != want {
			t.Errorf("ExpectLine(%q) = %d, want %d", check, got, want)
		}
	}
	if got := (&Scenario{}).ExpectLine("outcome"); got != 0 {
		t.Errorf("a scenario built in code: line %d, want 0", got)
	}
}

// TestLoadErrorPercent is a regression test: the hint was the last printf
// argument, guessed by counting %s in the format, so a %% in a message
// printed %!(EXTRA string=...). A % in a message, a hint or the user's
// text is printed as it is.
func TestLoadErrorPercent(t *testing.T) {
	t.Parallel()
	src := "provider: \"50%d\"\nattemps%: 1\nexpect:\n  tolerance: {ratio: 2}\n"
	_, err := ParseScenario("pct.yaml", []byte(src))
	var le LoadErrors
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want LoadErrors", err)
	}
	var got []string
	for _, e := range le {
		got = append(got, e.Error()+" | "+e.Hint)
	}
	want := []string{
		`pct.yaml:1:11: provider: unknown provider "50%d" | providers: anthropic, gemini, openai, openai-responses`,
		`pct.yaml:2:1: attemps%: unknown key "attemps%" | did you mean attempts?`,
		`pct.yaml:4:22: expect.tolerance.ratio: ratio 2 is above 1 | ratio is a fraction: 0.05 means 5%`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors mismatch (-want +got):\n%s", diff)
	}
	if strings.Contains(le.Error(), "%!") {
		t.Errorf("a %% was read as a verb:\n%s", le.Error())
	}
}
