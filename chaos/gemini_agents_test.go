package chaos

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/scenario"
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
	checkWrongSet(t, scs, missing, want, "testdata/agents/gemini/wrong", geminiInstallHint)
}

// TestGeminiScenariosPass runs the honest Gemini scenarios of
// scenarios/agents: Gemini CLI completes an answer through the mock under a
// 503, a 429 with RetryInfo and an error frame, and stops at a 400 and a
// cut stream; @google/genai reads a stream and a whole answer and retries
// nothing. A scenario whose timing stayed inconclusive on a busy machine
// is logged, not failed.
func TestGeminiScenariosPass(t *testing.T) {
	skipWhereTheSuiteRuns(t)
	if testing.Short() {
		t.Skip("runs Gemini CLI with its 5s backoff (about 20s); skipped with -short")
	}
	files, err := filepath.Glob("../scenarios/agents/gemini-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios/agents/gemini-*.yaml (%v)", err)
	}
	scs, missing := loadSDKScenarios(t, "../scenarios/agents")
	var mine []*scenario.Scenario
	for _, sc := range scs {
		if strings.HasPrefix(sc.Name, "gemini-") {
			mine = append(mine, sc)
		}
	}
	mineMissing := map[string]string{}
	for name, why := range missing {
		if strings.HasPrefix(name, "gemini-") {
			mineMissing[name] = why
		}
	}
	if len(mine)+len(mineMissing) != len(files) {
		t.Fatalf("%d gemini-* scenarios loaded for %d files", len(mine)+len(mineMissing), len(files))
	}
	checkPassSet(t, mine, mineMissing, 4, geminiInstallHint)
}
