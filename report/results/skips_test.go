package results

import (
	"bytes"
	"testing"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/report/internal/golden"
)

// skipSummary is a first run on a fresh clone (issue 18): two scenarios
// run, five SDK scenarios are skipped for two reasons (the Go clients not
// built, the Node SDKs not installed), and one needs a program not in
// PATH.
func skipSummary() *chaos.Summary {
	skip := func(name, missing, hint string) chaos.Result {
		reason := "needs " + missing + ", which does not exist"
		if hint != "" {
			reason += " (hint: " + hint + ")"
		}
		return chaos.Result{Name: name, File: "scenarios/sdk/" + name + ".yaml", Verdict: chaos.VerdictSkipped,
			SkipReason: reason, SkipMissing: missing, SkipHint: hint,
			FailureTypes: []string{}, Escalations: []scenario.Escalation{}, Checks: []verify.Check{},
			Dir: "runs/2026-11-21T10-00-00Z/" + name}
	}
	pass := func(name string) chaos.Result {
		return chaos.Result{Name: name, File: "scenarios/" + name + ".yaml", Passed: true, Verdict: chaos.VerdictPass,
			Outcome: "success", Attempts: 1, FailureTypes: []string{}, Escalations: []scenario.Escalation{}, Checks: []verify.Check{},
			DurationMs: 30, Seed: 42, TimeScale: 1, Client: "built-in", Dir: "runs/2026-11-21T10-00-00Z/" + name}
	}
	const goHint, nodeHint = "go -C testdata/sdk/go build -o bin/ ./...", "npm ci --prefix testdata/sdk/node"
	perl := skip("perl-client", "perl (not in PATH)", "")
	perl.SkipReason = "needs perl, which is not in PATH"
	s := &chaos.Summary{Schema: chaos.SummarySchema, RunDir: "runs/2026-11-21T10-00-00Z", Seed: 42, DurationMs: 900,
		Scenarios: []chaos.Result{
			skip("anthropic-go-400", "testdata/sdk/go/bin/anthropic", goHint),
			pass("forgeflare-400"),
			skip("anthropic-go-reset", "testdata/sdk/go/bin/anthropic", goHint),
			skip("anthropic-node-retried", "testdata/sdk/node/node_modules/@anthropic-ai/sdk", nodeHint),
			skip("openai-go-400", "testdata/sdk/go/bin/openai", goHint),
			perl,
			skip("openai-node-retried", "testdata/sdk/node/node_modules/openai", nodeHint),
			pass("forgeflare-429"),
		}}
	s.Finish()
	return s
}

// TestChaosSkipGroupsGolden: the table and the Markdown say each group of
// skipped scenarios once, in one row with its count, what is missing and
// what to run; JSON and JUnit still list every skipped scenario.
func TestChaosSkipGroupsGolden(t *testing.T) {
	t.Parallel()
	for name, render := range map[string]func(*bytes.Buffer, *chaos.Summary) error{
		"table":    func(b *bytes.Buffer, s *chaos.Summary) error { return Table(b, s) },
		"markdown": func(b *bytes.Buffer, s *chaos.Summary) error { return Markdown(b, s) },
		"junit":    func(b *bytes.Buffer, s *chaos.Summary) error { return JUnit(b, s) },
		"json":     func(b *bytes.Buffer, s *chaos.Summary) error { return JSON(b, s) },
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := render(&b, skipSummary()); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "chaos_skips_"+name+".golden", b.Bytes())
			if name == "junit" || name == "json" {
				for _, r := range skipSummary().Scenarios {
					if !bytes.Contains(b.Bytes(), []byte(r.Name)) {
						t.Errorf("%s does not list %s", name, r.Name)
					}
				}
			}
		})
	}
}
