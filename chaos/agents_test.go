package chaos

import (
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
)

// The coding agents and agent SDKs of testdata/agents (docs/agents.md) run
// unchanged against the harness: npm ci --prefix testdata/agents/node
// --ignore-scripts. These tests run them, so they are skipped where they are
// not installed; .ci/run installs them before go test.

const agentsInstallHint = "install the agents from the repository root: npm ci --prefix testdata/agents/node --ignore-scripts && bash testdata/python/install.sh agents aider"

// TestAgentWrongScenariosFail runs testdata/agents/wrong: the agents against
// expectations that are wrong by far more than timing noise (another
// client's preset, a header the agent does not read, a fallback not seen,
// the SDK's 2 retries for Claude Code's 10, an answer never sent). Each must
// fail, and on the check declared here, no other.
func TestAgentWrongScenariosFail(t *testing.T) {
	want := map[string][]string{
		"claude-code-anthropic-sdk-preset":         {"delays.server"},
		"claude-code-retry-after-ms-honoured":      {"delays.server"},
		"claude-code-fallback-not-seen":            {"escalations"},
		"claude-code-gives-up-after-2":             {"outcome", "attempts"},
		"claude-code-output-other-answer":          {"output"},
		"claude-code-telemetry-off":                {"selfReport"},
		"ai-sdk-anthropic-telemetry-off":           {"selfReport"},
		"ai-sdk-anthropic-claude-code-preset":      {"delays.server"},
		"langchain-anthropic-429-retried":          {"outcome", "attempts"},
		"codex-cli-429-retried":                    {"outcome", "attempts"},
		"codex-cli-openai-sdk-preset":              {"delays.server"},
		"codex-cli-steady-503-gives-up-after-5":    {"attempts"},
		"codex-cli-telemetry-off":                  {"selfReport"},
		"pydantic-ai-sse-error-retried":            {"outcome", "attempts"},
		"langchain-python-anthropic-python-preset": {"delays.server"},
		"aider-steady-503-9-attempts":              {"attempts"},
		"claude-code-stall-timed-out":              {"outcome"},
	}
	scs, missing := loadAgentScenarios(t, "../testdata/agents/wrong")
	checkWrongSet(t, scs, missing, want, "testdata/agents/wrong", agentsInstallHint)
}

// TestAgentScenariosPass runs scenarios/agents, each agent against its own
// preset. As in TestSDKScenariosPass, a scenario that stayed inconclusive
// on a busy machine after its re-runs is logged, not failed.
func TestAgentScenariosPass(t *testing.T) {
	skipWhereTheSuiteRuns(t)
	if testing.Short() {
		t.Skip("runs every agent scenario (10-30s); skipped with -short")
	}
	scs, missing := loadAgentScenarios(t, "../scenarios/agents")
	res := checkPassSet(t, scs, missing, 2, agentsInstallHint)
	checkCodexSelfReports(t, res)
}

// checkCodexSelfReports: Codex CLI with its telemetry on
// (codex-cli-otel-*) must have had its self-report read and held, and its
// failureTypes verified from it unless the telemetry cannot say
// (spans-only: Codex's spans carry no stream errors).
func checkCodexSelfReports(t *testing.T, res map[string]Result) {
	t.Helper()
	for name, r := range res {
		if !strings.HasPrefix(name, "codex-cli-otel-") {
			continue
		}
		state := map[string]string{}
		for _, c := range r.Checks {
			state[c.Name] = c.State
		}
		if s, ok := state["selfReport"]; !ok || s != verify.StatePass {
			t.Errorf("%s: selfReport %q, want pass (telemetry %+v)\n  %s", name, s, r.Telemetry, describeResult(r))
		}
		if s, ok := state["failureTypes"]; ok && s != verify.StatePass && !strings.HasSuffix(name, "-spans-only") {
			t.Errorf("%s: failureTypes %q, want pass (verified from the telemetry)\n  %s", name, s, describeResult(r))
		}
	}
}

// loadAgentScenarios is loadSDKScenarios with the agents' install hint,
// without the Gemini agents' scenarios (gemini-*), which
// chaos/gemini_agents_test.go runs.
func loadAgentScenarios(t *testing.T, dir string) (runnable []*scenario.Scenario, missing map[string]string) {
	t.Helper()
	scs, err := scenario.LoadPaths([]string{dir})
	if err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	missing = map[string]string{}
	r := &Runner{}
	for _, sc := range scs {
		if strings.HasPrefix(sc.Name, "gemini-") {
			continue
		}
		if m := r.missingRequirement(sc); m != nil {
			missing[sc.Name] = m.Reason()
			continue
		}
		runnable = append(runnable, sc)
	}
	if len(runnable) == 0 {
		t.Skipf("no agent can run here; %s", agentsInstallHint)
	}
	return runnable, missing
}
