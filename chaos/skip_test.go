package chaos

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/scenario"
)

func TestSkipGroups(t *testing.T) {
	t.Parallel()
	skipped := func(name, missing, hint string) Result {
		return Result{Name: name, Verdict: VerdictSkipped, SkipReason: "needs " + name, SkipMissing: missing, SkipHint: hint}
	}
	rs := []Result{
		skipped("go-a", "bin/a", "go build"),
		{Name: "pass", Verdict: VerdictPass},
		skipped("node-a", "node_modules/x", "npm ci"),
		skipped("go-b", "bin/b", "go build"),
		skipped("go-a2", "bin/a", "go build"),
		skipped("perl-1", "perl (not in PATH)", ""),
		skipped("perl-2", "perl (not in PATH)", ""),
		skipped("ruby", "ruby (not in PATH)", ""),
		{Name: "old", Verdict: VerdictSkipped, SkipReason: "needs node, which is not in PATH"}, // a result.json of before
	}
	type view struct {
		Line  string
		Hint  string
		Names []string
	}
	var got []view
	for _, g := range SkipGroups(rs) {
		v := view{Line: g.Line(), Hint: g.Hint}
		for _, r := range g.Results {
			v.Names = append(v.Names, r.Name)
		}
		got = append(got, v)
	}
	want := []view{
		{"SKIP 3 scenarios: missing bin/a (2), bin/b (1)", "go build", []string{"go-a", "go-b", "go-a2"}},
		{"SKIP node-a: missing node_modules/x", "npm ci", []string{"node-a"}},
		{"SKIP 2 scenarios: missing perl (not in PATH)", "", []string{"perl-1", "perl-2"}},
		{"SKIP ruby: missing ruby (not in PATH)", "", []string{"ruby"}},
		{"SKIP old: needs node, which is not in PATH", "", []string{"old"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SkipGroups mismatch (-want +got):\n%s", diff)
	}
}

// TestRunnerAnnouncesSkipsOnce (issue 18): the progress says each group of
// skipped scenarios once, before anything runs (it was one SKIP line per
// scenario), with what is missing relative to the current folder (not to
// the scenario file, as client.requires writes it) and what to run; each
// result still says its own reason.
func TestRunnerAnnouncesSkipsOnce(t *testing.T) {
	t.Parallel()
	suite := filepath.Join(t.TempDir(), "scenarios", "sdk")
	var scs []*scenario.Scenario
	for _, name := range []string{"go-a", "go-b", "go-c"} {
		sc := parse(t, name, `
client:
  command: [../../sdk/bin/client]
  requires: [../../sdk/bin/client]
  requiresHint: go build -o sdk/bin/ ./...
expect: {outcome: success}
`)
		sc.File = filepath.Join(suite, name+".yaml")
		scs = append(scs, sc)
	}
	var progress bytes.Buffer
	r := &Runner{Out: t.TempDir(), Seed: 1, Progress: &progress} // nothing runs: no proxy
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(suite, "..", "..", "sdk", "bin", "client")
	want := "SKIP 3 scenarios: missing " + missing + "\n  to run them: go build -o sdk/bin/ ./...\n"
	if diff := cmp.Diff(want, progress.String()); diff != "" {
		t.Errorf("progress mismatch (-want +got):\n%s", diff)
	}
	for _, res := range sum.Scenarios {
		if res.Verdict != VerdictSkipped || res.SkipMissing != missing || res.SkipReason != "needs ../../sdk/bin/client, which does not exist (hint: go build -o sdk/bin/ ./...)" {
			t.Errorf("%s: %s, %q, %q", res.Name, res.Verdict, res.SkipMissing, res.SkipReason)
		}
	}
}
