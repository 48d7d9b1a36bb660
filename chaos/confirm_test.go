package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// scriptedClient is a shell client that behaves, on its n-th run, as the
// n-th item of its plan says (the last item once the plan is used up),
// counting its runs in a state file: none (no request), one (one request),
// two (two requests at once, the second a retry of the first). It writes no
// trace, so the harness checks it from the server's journal alone. What it
// does is fixed by its plan, not by timing, so that re-runs are
// deterministic.
const scriptedClient = `#!/bin/sh
state=$1 plan=$2
n=$(($(cat "$state" 2>/dev/null || echo 0) + 1))
echo "$n" > "$state"
b=$(echo "$plan" | cut -d, -f"$n")
[ -n "$b" ] || b=${plan##*,}
req() {
	curl -sS -o /dev/null -X POST "$ANTHROPIC_BASE_URL/v1/messages" -H 'content-type: application/json' \
		-d '{"model":"claude-haiku-4-5","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}'
}
case $b in
one) req ;;
two) req; req ;;
esac
exit 0
`

// scripted returns the client block of a scripted client with its own
// state file in dir.
func scripted(t *testing.T, dir, name, plan string) string {
	t.Helper()
	script := filepath.Join(dir, "client.sh")
	if _, err := os.Stat(script); err != nil {
		if err := os.WriteFile(script, []byte(scriptedClient), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return "client: {command: [sh, " + script + ", " + filepath.Join(dir, name+".state") + ", '" + plan + "']}\n"
}

// Expectations of the scripted client's scenarios, each against attempts:
// [{status: 529}]. A wait where none is expected, or none where one is, is a
// delays.server failure whatever the machine's load. The 20ms wait of
// expectInconclusive (2s at timeScale 0.01) is shorter than the noise an
// external client always brings (its process costs, 25ms + 3%, and the
// measurement path): never conclusive, whatever the load; the tolerance of
// 600s (6s at timeScale 0.01) only keeps every gap the client shows inside
// the band. So a wait inside it is inconclusive by construction.
const (
	expectNoWait       = "expect: {delays: []}\n"
	expectOneWait      = "expect: {delays: [30s]}\n"
	expectInconclusive = "expect: {delays: [2s], tolerance: {abs: 600s}}\n"
)

// rerunView is what TestRunnerConfirm compares of a result.
type rerunView struct {
	Verdict       string
	Passed        bool
	PassedOnRerun bool
	Reruns        []string // verdict of each re-run, in order
	RerunDirs     []string // the folders that exist: rerun-2, rerun-3...
	Failed        []string // the first run's failed checks
}

func viewOf(t *testing.T, r Result) rerunView {
	t.Helper()
	v := rerunView{Verdict: r.Verdict, Passed: r.Passed, PassedOnRerun: r.PassedOnRerun, Failed: failedNames(r)}
	for i, rr := range r.Reruns {
		v.Reruns = append(v.Reruns, rr.Verdict)
		if rr.Run != i+2 || rr.Dir != filepath.Join(r.Dir, "rerun-"+itoa(i+2)) {
			t.Errorf("%s: re-run %d = run %d in %s, want run %d in %s", r.Name, i, rr.Run, rr.Dir, i+2, filepath.Join(r.Dir, "rerun-"+itoa(i+2)))
		}
	}
	entries, _ := os.ReadDir(r.Dir)
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "rerun-") {
			v.RerunDirs = append(v.RerunDirs, e.Name())
			if _, err := os.Stat(filepath.Join(r.Dir, e.Name(), "result.json")); err != nil {
				t.Errorf("%s: %v", r.Name, err)
			}
		}
	}
	return v
}

// TestRunnerConfirm runs scenarios whose timing checks fail, pass or cannot
// tell in a way fixed by construction, and checks the re-runs: only
// scenarios whose sole failures are timing checks are re-run, at most
// Confirm times, stopping at the second failed run or the first pass; a
// failure that does not reproduce is not reported as one.
func TestRunnerConfirm(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	toxi := runnerToxi(t)
	const builtin = "client: {policy: forgeflare}\ntimeScale: 0.01\nattempts: [{status: 529}]\n"
	// Policy time is at least the 2s + 4s + 8s of backoff: maxDuration 13s
	// always fails, by construction, and the client (140ms of waits) is
	// nowhere near the 13s deadline.
	const maxDurationFails = "client: {policy: forgeflare}\ntimeScale: 0.01\nattempts: [{status: 529}, {status: 529}, {status: 529}]\n" +
		"expect: {outcome: success, attempts: 4, maxDuration: 13s}\n"
	const faults = "timeScale: 0.01\nattempts: [{status: 529}]\n"
	type scen struct {
		name, src string
		want      rerunView
	}
	tests := []struct {
		name      string
		confirm   int
		scenarios func(dir string) []scen
	}{
		{
			name:    "confirm 2",
			confirm: 2,
			scenarios: func(dir string) []scen {
				return []scen{
					{
						name: "maxduration-always-fails", src: maxDurationFails,
						want: rerunView{Verdict: VerdictFail, Reruns: []string{VerdictFail}, RerunDirs: []string{"rerun-2"}, Failed: []string{"maxDuration"}},
					},
					{
						name: "server-delays-always-fail", src: scripted(t, dir, "server-delays-always-fail", "none") + faults + expectOneWait,
						want: rerunView{Verdict: VerdictFail, Reruns: []string{VerdictFail}, RerunDirs: []string{"rerun-2"}, Failed: []string{"delays.server"}},
					},
					{
						name: "fails-then-passes", src: scripted(t, dir, "fails-then-passes", "two,one") + faults + expectNoWait,
						want: rerunView{Verdict: VerdictPass, Passed: true, PassedOnRerun: true, Reruns: []string{VerdictPass}, RerunDirs: []string{"rerun-2"}, Failed: []string{"delays.server"}},
					},
					{
						name: "always-inconclusive", src: scripted(t, dir, "always-inconclusive", "two") + faults + expectInconclusive,
						want: rerunView{Verdict: VerdictInconclusive, Reruns: []string{VerdictInconclusive, VerdictInconclusive}, RerunDirs: []string{"rerun-2", "rerun-3"}},
					},
					{
						// A failure that does not reproduce is not one.
						name: "fails-once-then-inconclusive", src: scripted(t, dir, "fails-once-then-inconclusive", "one,two") + faults + expectInconclusive,
						want: rerunView{Verdict: VerdictInconclusive, Reruns: []string{VerdictInconclusive, VerdictInconclusive}, RerunDirs: []string{"rerun-2", "rerun-3"}, Failed: []string{"delays.server"}},
					},
					{
						name: "inconclusive-then-fails-twice", src: scripted(t, dir, "inconclusive-then-fails-twice", "two,one") + faults + expectInconclusive,
						want: rerunView{Verdict: VerdictFail, Reruns: []string{VerdictFail, VerdictFail}, RerunDirs: []string{"rerun-2", "rerun-3"}},
					},
					{
						name: "attempts-wrong-not-rerun", src: builtin + "expect: {outcome: success, attempts: 5}\n",
						want: rerunView{Verdict: VerdictFail, Failed: []string{"attempts"}},
					},
					{
						// delays.client is policy time, which load does not
						// disturb: with it failing, nothing is re-run. (The
						// server sees 20ms for 30s: a failure too.)
						name: "client-delays-wrong-not-rerun", src: builtin + "expect: {delays: [3000s]}\n",
						want: rerunView{Verdict: VerdictFail, Failed: []string{"delays.client", "delays.server"}},
					},
					{
						name: "passes", src: builtin + "expect: {outcome: success, attempts: 2}\n",
						want: rerunView{Verdict: VerdictPass, Passed: true},
					},
				}
			},
		},
		{
			name:    "confirm 1",
			confirm: 1,
			scenarios: func(dir string) []scen {
				return []scen{
					{
						name: "always-inconclusive", src: scripted(t, dir, "always-inconclusive", "two") + faults + expectInconclusive,
						want: rerunView{Verdict: VerdictInconclusive, Reruns: []string{VerdictInconclusive}, RerunDirs: []string{"rerun-2"}},
					},
					{
						// One failure, then no more runs to confirm it.
						name: "inconclusive-then-fails", src: scripted(t, dir, "inconclusive-then-fails", "two,one") + faults + expectInconclusive,
						want: rerunView{Verdict: VerdictInconclusive, Reruns: []string{VerdictFail}, RerunDirs: []string{"rerun-2"}},
					},
					{
						name: "maxduration-always-fails", src: maxDurationFails,
						want: rerunView{Verdict: VerdictFail, Reruns: []string{VerdictFail}, RerunDirs: []string{"rerun-2"}, Failed: []string{"maxDuration"}},
					},
				}
			},
		},
		{
			name:    "confirm 0 never re-runs",
			confirm: 0,
			scenarios: func(dir string) []scen {
				return []scen{
					{
						name: "maxduration-always-fails", src: maxDurationFails,
						want: rerunView{Verdict: VerdictFail, Failed: []string{"maxDuration"}},
					},
					{
						name: "fails-then-passes", src: scripted(t, dir, "fails-then-passes", "two,one") + faults + expectNoWait,
						want: rerunView{Verdict: VerdictFail, Failed: []string{"delays.server"}},
					},
					{
						name: "always-inconclusive", src: scripted(t, dir, "always-inconclusive", "two") + faults + expectInconclusive,
						want: rerunView{Verdict: VerdictInconclusive},
					},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var scs []*scenario.Scenario
			want := map[string]rerunView{}
			for _, s := range tt.scenarios(dir) {
				scs = append(scs, parse(t, s.name, s.src))
				want[s.name] = s.want
			}
			r := &Runner{Toxi: toxi, Out: filepath.Join(dir, "runs"), Confirm: tt.confirm, Seed: 3}
			sum, err := r.Run(context.Background(), scs)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]rerunView{}
			for _, res := range sum.Scenarios {
				got[res.Name] = viewOf(t, res)
				// result.json on disk is the final verdict, re-runs included.
				var disk Result
				b, err := os.ReadFile(filepath.Join(res.Dir, "result.json"))
				if err != nil || json.Unmarshal(b, &disk) != nil {
					t.Errorf("%s: result.json: %v", res.Name, err)
					continue
				}
				if diff := cmp.Diff([]any{res.Verdict, res.PassedOnRerun, len(res.Reruns)}, []any{disk.Verdict, disk.PassedOnRerun, len(disk.Reruns)}); diff != "" {
					t.Errorf("%s: result.json verdict, passedOnRerun, reruns mismatch (-want +got):\n%s", res.Name, diff)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Runner.Run() results mismatch (-want +got):\n%s", diff)
			}
			// The summary counts what the re-runs decided.
			type counts struct{ Passed, Failed, Inconclusive, PassedOnRerun int }
			var wantSum counts
			for _, v := range want {
				switch v.Verdict {
				case VerdictPass:
					wantSum.Passed++
				case VerdictInconclusive:
					wantSum.Failed++
					wantSum.Inconclusive++
				default:
					wantSum.Failed++
				}
				if v.PassedOnRerun {
					wantSum.PassedOnRerun++
				}
			}
			gotSum := counts{sum.Passed, sum.Failed, sum.Inconclusive, sum.PassedOnRerun}
			if diff := cmp.Diff(wantSum, gotSum); diff != "" {
				t.Errorf("Runner.Run() summary counts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunnerConfirmKeepsFirstRun: a scenario that passed on a re-run keeps
// the first run's figures and says what the re-run gave.
func TestRunnerConfirmKeepsFirstRun(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	dir := t.TempDir()
	sc := parse(t, "flaky", scripted(t, dir, "flaky", "two,one")+"timeScale: 0.01\nattempts: [{status: 529}]\n"+expectNoWait)
	r := &Runner{Toxi: runnerToxi(t), Out: filepath.Join(dir, "runs"), Confirm: 2}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	res := sum.Scenarios[0]
	if len(res.Reruns) != 1 {
		t.Fatalf("reruns = %+v, want one", res.Reruns)
	}
	rr := res.Reruns[0]
	type figures struct {
		Attempts, ServerWaits       int
		RerunChecks, RerunWaits     int
		Verdict, RerunVerdict       string
		PassedOnRerun, SummaryRerun bool
	}
	got := figures{res.Attempts, len(res.DelaysMs.Server), len(rr.Checks), len(rr.DelaysMs.Server), res.Verdict, rr.Verdict, res.PassedOnRerun, sum.PassedOnRerun == 1}
	want := figures{Attempts: 2, ServerWaits: 1, RerunChecks: 0, RerunWaits: 0, Verdict: VerdictPass, RerunVerdict: VerdictPass, PassedOnRerun: true, SummaryRerun: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Runner.Run() figures mismatch (-want +got):\n%s", diff)
	}
	if fc := res.failedChecks(); len(fc) != 1 || fc[0].Name != "delays.server" {
		t.Errorf("first run's failed checks = %+v, want delays.server kept", fc)
	}
}

// TestConfirmAfterFirstRuns: a scenario is re-run to confirm only once
// every first run has ended, so its re-run does not compete with the rest
// of the suite for the CPU.
func TestConfirmAfterFirstRuns(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	dir := t.TempDir()
	flaky := parse(t, "flaky", scripted(t, dir, "flaky", "two,one")+"timeScale: 0.01\nattempts: [{status: 529}]\n"+expectNoWait)
	// 2s + 4s of backoff at timeScale 0.05: its first run lasts about 300ms,
	// far longer than the flaky one's.
	slow := parse(t, "slow", "client: {policy: forgeflare}\ntimeScale: 0.05\nattempts: [{status: 529}, {status: 529}]\nexpect: {outcome: success}\n")
	progress := &syncBuffer{}
	r := &Runner{Toxi: runnerToxi(t), Out: filepath.Join(dir, "runs"), Confirm: 2, Progress: progress}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{flaky, slow})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Scenarios[0].PassedOnRerun || !sum.Scenarios[1].Passed {
		t.Fatalf("flaky %+v, slow %+v: want a pass on a re-run and a pass", sum.Scenarios[0].Verdict, sum.Scenarios[1].Verdict)
	}
	out := progress.String()
	slowDone, rerun := strings.Index(out, "[slow] PASS"), strings.Index(out, "[flaky] run 2 of at most 3")
	if slowDone < 0 || rerun < 0 || rerun < slowDone {
		t.Errorf("the re-run started before every first run ended (slow done at %d, re-run at %d):\n%s", slowDone, rerun, out)
	}
}

// TestMissingRequirement checks client.requires: a bare name is a program
// in PATH, a name with a slash a file or folder, from the current folder
// or the scenario file's; --client-cmd ignores requirements.
func TestMissingRequirement(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "fakeprog"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	scenDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(scenDir, "node_modules", "openai"), 0o755); err != nil {
		t.Fatal(err)
	}
	scenFile := filepath.Join(scenDir, "sdk.yaml")
	tests := []struct {
		name      string
		requires  []string
		hint      string
		file      string
		clientCmd string
		want      string
	}{
		{name: "nothing required", want: ""},
		{name: "program in PATH", requires: []string{"fakeprog"}, want: ""},
		{name: "program not in PATH", requires: []string{"retrylab-no-such-program"}, hint: "install it",
			want: "needs retrylab-no-such-program, which is not in PATH (hint: install it)"},
		{name: "no hint", requires: []string{"retrylab-no-such-program"},
			want: "needs retrylab-no-such-program, which is not in PATH"},
		{name: "the first missing one", requires: []string{"fakeprog", "./no/such/dir", "retrylab-no-such-program"},
			want: "needs ./no/such/dir, which does not exist"},
		{name: "path missing", requires: []string{"node_modules/openai"}, hint: "run npm ci",
			want: "needs node_modules/openai, which does not exist (hint: run npm ci)"},
		{name: "path relative to the scenario's folder", requires: []string{"node_modules/openai"}, file: scenFile, want: ""},
		{name: "./path relative to the scenario's folder", requires: []string{"./node_modules/openai"}, file: scenFile, want: ""},
		{name: "path relative to the scenario's folder, missing", requires: []string{"node_modules/anthropic"}, file: scenFile,
			want: "needs node_modules/anthropic, which does not exist"},
		{name: "absolute path that exists", requires: []string{filepath.Join(scenDir, "node_modules")}, want: ""},
		{name: "absolute path is not joined to the scenario's folder", requires: []string{"/node_modules/openai"}, file: scenFile,
			want: "needs /node_modules/openai, which does not exist"},
		{name: "path relative to the current folder", requires: []string{"testdata/scenarios-extra"}, file: scenFile, want: ""},
		{name: "--client-cmd ignores requirements", requires: []string{"retrylab-no-such-program", "./no/such/dir"}, clientCmd: "exit 0", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scenario.Scenario{Name: "sdk", File: tt.file, Client: scenario.Client{Command: []string{"node", "client.js"}, Requires: tt.requires, RequiresHint: tt.hint}}
			r := &Runner{ClientCmd: tt.clientCmd}
			got := ""
			if m := r.missingRequirement(sc); m != nil {
				got = m.Reason()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("missingRequirement() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunnerSkipsMissingRequirement: a scenario whose client needs what is
// missing is skipped, not run and not failed: verdict skipped, the reason
// with its hint, a result.json, counted as skipped. With --client-cmd the
// same scenario runs.
func TestRunnerSkipsMissingRequirement(t *testing.T) {
	src := `
description: the Node SDK client
client:
  command: [node, client.js]
  requires: [retrylab-no-such-program]
  requiresHint: npm ci in testdata/sdk
expect: {attempts: 0}
`
	out := t.TempDir()
	// Nothing runs: no proxy needed.
	r := &Runner{Out: out, Seed: 5}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{parse(t, "node-sdk", src)})
	if err != nil {
		t.Fatal(err)
	}
	res := sum.Scenarios[0]
	wantReason := "needs retrylab-no-such-program, which is not in PATH (hint: npm ci in testdata/sdk)"
	type view struct {
		Verdict, SkipReason, Dir, Client string
		Passed                           bool
		Checks                           int
		Skipped, Failed, Passes          int
	}
	want := view{Verdict: VerdictSkipped, SkipReason: wantReason, Dir: filepath.Join(sum.RunDir, "node-sdk"), Client: "node client.js", Skipped: 1}
	got := view{res.Verdict, res.SkipReason, res.Dir, res.Client, res.Passed, len(res.Checks), sum.Skipped, sum.Failed, sum.Passed}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Runner.Run() skipped scenario mismatch (-want +got):\n%s", diff)
	}
	var disk Result
	b, err := os.ReadFile(filepath.Join(sum.RunDir, "node-sdk", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &disk); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{VerdictSkipped, wantReason, int64(5)}, []any{disk.Verdict, disk.SkipReason, disk.Seed}); diff != "" {
		t.Errorf("result.json mismatch (-want +got):\n%s", diff)
	}
	var back Summary
	if b, err := os.ReadFile(filepath.Join(sum.RunDir, "summary.json")); err != nil || json.Unmarshal(b, &back) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if back.Skipped != 1 || back.Failed != 0 {
		t.Errorf("summary.json skipped %d failed %d, want 1 and 0", back.Skipped, back.Failed)
	}

	// --client-cmd: the scenario's own client is not run, so its
	// requirements do not apply.
	r = &Runner{Toxi: runnerToxi(t), Out: out, ClientCmd: "exit 0"}
	sum, err = r.Run(context.Background(), []*scenario.Scenario{parse(t, "node-sdk", src)})
	if err != nil {
		t.Fatal(err)
	}
	if res := sum.Scenarios[0]; res.Verdict != VerdictPass || res.SkipReason != "" || sum.Skipped != 0 {
		t.Errorf("with --client-cmd: verdict %q, skip reason %q, skipped %d; want it run and passed", res.Verdict, res.SkipReason, sum.Skipped)
	}
}

// TestLoadRequires checks the loader's errors for client.requires.
func TestLoadRequires(t *testing.T) {
	type loadErr struct {
		Line  int
		Field string
		Msg   string
	}
	tests := []struct {
		name string
		src  string
		want []loadErr
	}{
		{
			name: "without a command",
			src:  "client:\n  policy: forgeflare\n  requires: [node]\n",
			want: []loadErr{{3, "client.requires", "requires applies to an external client only"}},
		},
		{
			name: "an empty requirement",
			src:  "client:\n  command: [node, client.js]\n  requires:\n    - node\n    - \"\"\n",
			want: []loadErr{{5, "client.requires[1]", "empty requirement"}},
		},
		{
			name: "a blank requirement",
			src:  "client:\n  command: [node, client.js]\n  requires: [\"  \"]\n",
			want: []loadErr{{3, "client.requires[0]", "empty requirement"}},
		},
		{
			name: "both",
			src:  "client:\n  requires: [\"\"]\n",
			want: []loadErr{{2, "client.requires", "requires applies to an external client only"}, {2, "client.requires[0]", "empty requirement"}},
		},
		{
			name: "valid",
			src:  "client:\n  command: [node, client.js]\n  requires: [node, ../node_modules/openai]\n  requiresHint: npm ci\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := scenario.ParseScenario("req.yaml", []byte(tt.src))
			var got []loadErr
			var le scenario.LoadErrors
			switch {
			case err == nil:
			case errors.As(err, &le):
				for _, e := range le {
					got = append(got, loadErr{e.Line, e.Field, e.Msg})
					if e.Hint == "" {
						t.Errorf("%s: no hint", e)
					}
				}
			default:
				t.Fatalf("ParseScenario() error is %T (%v), want LoadErrors", err, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseScenario() errors mismatch (-want +got):\n%s", diff)
			}
			if tt.want == nil {
				if diff := cmp.Diff([]string{"node", "../node_modules/openai"}, sc.Client.Requires); diff != "" || sc.Client.RequiresHint != "npm ci" {
					t.Errorf("requires mismatch (-want +got):\n%s\nhint %q", diff, sc.Client.RequiresHint)
				}
			}
		})
	}
}
