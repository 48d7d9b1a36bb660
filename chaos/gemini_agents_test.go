package chaos

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Gemini CLI and @google/genai (testdata/agents/gemini, npm ci --prefix
// testdata/agents/gemini) run unchanged against the mock's gemini format.
// These tests are skipped where they are not installed; .ci/run installs
// them before go test.

const geminiInstallHint = "install them from the repository root: npm ci --prefix testdata/agents/gemini"

// TestGeminiWrongScenariosFail runs testdata/agents/gemini/wrong: Gemini
// CLI and @google/genai against expectations that are wrong by far more
// than timing noise. Each must fail, and on the check declared here, no
// other.
func TestGeminiWrongScenariosFail(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Gemini CLI (about 10s); skipped with -short")
	}
	want := map[string][]string{
		"gemini-cli-400-retried":          {"outcome", "attempts"},
		"gemini-cli-anthropic-sdk-preset": {"delays.server"},
		"gemini-cli-cut-stream-retried":   {"outcome", "attempts"},
		"gemini-genai-503-retried":        {"outcome", "attempts"},
	}
	scs, missing := loadSDKScenarios(t, "../testdata/agents/gemini/wrong")
	for _, sc := range scs {
		if _, ok := want[sc.Name]; !ok {
			t.Errorf("%s: a wrong scenario without an expected failing check in this test's table", sc.File)
		}
	}
	res := runSDK(t, scs, 0)
	for name, checks := range want {
		t.Run(name, func(t *testing.T) {
			if why, ok := missing[name]; ok {
				t.Skipf("%s; %s", why, geminiInstallHint)
			}
			r, ok := res[name]
			if !ok {
				t.Fatalf("no scenario %s in testdata/agents/gemini/wrong", name)
			}
			if r.Verdict != VerdictFail {
				t.Fatalf("%s: verdict %s, want fail on %s:\n  %s", name, r.Verdict, strings.Join(checks, ", "), describeResult(r))
			}
			if got := checkNames(r.failedChecks()); !slices.Equal(got, checks) {
				t.Errorf("%s failed on %v, want %v:\n  %s", name, got, checks, describeResult(r))
			}
		})
	}
}

// TestGeminiScenariosPass runs the honest Gemini scenarios of
// scenarios/agents: Gemini CLI completes an answer through the mock under a
// 503, a 429 with RetryInfo and an error frame, and stops at a 400 and a
// cut stream; @google/genai reads a stream and a whole answer and retries
// nothing. A scenario whose timing stayed inconclusive on a busy machine
// is logged, not failed.
func TestGeminiScenariosPass(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Gemini CLI with its 5s backoff (about 20s); skipped with -short")
	}
	files, err := filepath.Glob("../scenarios/agents/gemini-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios/agents/gemini-*.yaml (%v)", err)
	}
	scs, missing := loadSDKScenarios(t, "../scenarios/agents")
	var mine []*Scenario
	for _, sc := range scs {
		if strings.HasPrefix(sc.Name, "gemini-") {
			mine = append(mine, sc)
		}
	}
	res := runSDK(t, mine, 4)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			if why, ok := missing[name]; ok {
				t.Skipf("%s; %s", why, geminiInstallHint)
			}
			r, ok := res[name]
			if !ok {
				t.Fatalf("no result for %s", name)
			}
			switch r.Verdict {
			case VerdictPass:
			case VerdictInconclusive:
				t.Logf("%s: inconclusive (the machine was too busy to tell):\n  %s", name, describeResult(r))
			default:
				t.Errorf("%s:\n  %s", name, describeResult(r))
			}
		})
	}
}
