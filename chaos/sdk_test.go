package chaos

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
)

// The official SDK clients (docs/sdk-clients.md) run unchanged against the
// harness: testdata/sdk/node (npm ci --prefix testdata/sdk/node) and
// testdata/sdk/go (go -C testdata/sdk/go build -o bin/ ./...), the Python
// SDKs of testdata/python (bash testdata/python/install.sh) and the JVM SDKs
// of testdata/jvm (testdata/jvm/build.sh). These tests run them, so they are
// skipped where those are not installed; .ci/run installs and builds them
// before go test.

const sdkInstallHint = "install the SDK clients from the repository root: npm ci --prefix testdata/sdk/node && go -C testdata/sdk/go build -o bin/ ./... && bash testdata/python/install.sh && testdata/jvm/build.sh"

// loadSDKScenarios loads the scenario files of dir and splits them into
// those whose client can run here and, by name, why the others cannot (the
// runner's own client.requires check).
func loadSDKScenarios(t *testing.T, dir string) (runnable []*scenario.Scenario, missing map[string]string) {
	t.Helper()
	scs, err := scenario.LoadPaths([]string{dir})
	if err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	if len(scs) == 0 {
		t.Fatalf("no scenario files in %s", dir)
	}
	missing = map[string]string{}
	r := &Runner{}
	for _, sc := range scs {
		if m := r.missingRequirement(sc); m != nil {
			missing[sc.Name] = m.Reason()
			continue
		}
		runnable = append(runnable, sc)
	}
	if len(runnable) == 0 {
		var reasons []string
		for _, why := range missing {
			if !slices.Contains(reasons, why) {
				reasons = append(reasons, why)
			}
		}
		sort.Strings(reasons)
		t.Skipf("no SDK client can run here (%s); %s", strings.Join(reasons, "; "), sdkInstallHint)
	}
	return runnable, missing
}

// runSDK runs scs on an embedded Toxiproxy, re-running a scenario whose
// timing checks failed (Confirm) as the CLI does by default.
func runSDK(t *testing.T, scs []*scenario.Scenario, parallel int) map[string]Result {
	t.Helper()
	toxi, err := mock.StartToxiproxy(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	r := &Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), Parallel: parallel, Confirm: 2}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]Result{}
	for _, sr := range sum.Scenarios {
		res[sr.Name] = sr
	}
	return res
}

func checkNames(cs []verify.Check) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// describeResult says what a scenario's run showed, for test failures.
func describeResult(r Result) string {
	var b strings.Builder
	b.WriteString("verdict " + r.Verdict + ", outcome " + r.Outcome + ", faults " + strings.Join(r.Faults, ", "))
	for _, c := range r.Checks {
		if !c.Passed {
			b.WriteString("\n    " + c.Name + " (" + c.State + "): want " + c.Want + "; got " + c.Got + "; " + c.Where)
		}
	}
	if r.Error != "" {
		b.WriteString("\n    error: " + r.Error)
	}
	if b2, err := os.ReadFile(filepath.Join(r.Dir, "stderr.txt")); err == nil && len(b2) > 0 {
		b.WriteString("\n    client stderr: " + strings.TrimSpace(string(b2)))
	}
	b.WriteString("\n    run folder: " + r.Dir)
	return b.String()
}

// TestSDKWrongScenariosFail runs testdata/sdk/wrong: the SDK clients against
// expectations that are wrong by far more than timing noise (a wrong preset,
// a retry of a mid-stream error, 2s for ~0.5s, 3 attempts where
// x-should-retry stops at 1, the waits of another SDK's Retry-After rule).
// Each must fail, and on the check declared here, no other.
func TestSDKWrongScenariosFail(t *testing.T) {
	want := map[string][]string{
		"anthropic-node-forgeflare-preset":        {"delays.server"},
		"anthropic-node-retry-after-0-at-once":    {"delays.server"},
		"openai-node-sse-error-retried":           {"outcome", "attempts"},
		"openai-node-stall-retried":               {"outcome", "attempts"},
		"openai-node-responses-failed-retried":    {"outcome", "attempts"},
		"openai-node-7-retry-after-0-backoff":     {"delays.server"},
		"openai-node-7-retry-after-61-waited":     {"delays.server"},
		"anthropic-go-delays-2s":                  {"delays.server"},
		"anthropic-go-drop-retried":               {"outcome", "attempts"},
		"openai-go-should-retry-false-3-attempts": {"attempts"},
		"openai-go-forgeflare-preset":             {"delays.server"},
		"anthropic-python-forgeflare-preset":      {"delays.server"},
		"openai-python-retry-after-121-retried":   {"outcome", "attempts"},
		"genai-python-503-retried":                {"outcome", "attempts"},
		"litellm-router-nested-9-attempts":        {"attempts"},
		"anthropic-java-ms-0-defers":              {"delays.server"},
		"anthropic-java-sse-error-retried":        {"outcome", "attempts"},
		"openai-java-retry-after-20-waited":       {"delays.server"},
		"openai-java-drop-retried":                {"outcome", "attempts"},
		"openai-java-past-date-backoff":           {"delays.server"},
	}
	scs, missing := loadSDKScenarios(t, "../testdata/sdk/wrong")
	checkWrongSet(t, scs, missing, want, "testdata/sdk/wrong", sdkInstallHint)
}

// checkWrongSet runs scs, the scenarios of the folder dir that carry a
// wrong expectation (missing: those skipped for a missing client, with
// why): each must fail, on the checks want names for it and on no other,
// and want must name every one of them.
func checkWrongSet(t *testing.T, scs []*scenario.Scenario, missing map[string]string, want map[string][]string, dir, hint string) {
	t.Helper()
	for _, sc := range scs {
		if _, ok := want[sc.Name]; !ok {
			t.Errorf("%s: a wrong scenario without an expected failing check in this test's table", sc.File)
		}
	}
	res := runSDK(t, scs, 0)
	for name, checks := range want {
		t.Run(name, func(t *testing.T) {
			if why, ok := missing[name]; ok {
				t.Skipf("%s; %s", why, hint)
			}
			r, ok := res[name]
			if !ok {
				t.Fatalf("no scenario %s in %s", name, dir)
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

// TestSDKScenariosPass runs the honest suite, scenarios/sdk: every SDK
// client against its own preset. A scenario whose timing stayed
// inconclusive on a busy machine after its re-runs is logged, not failed:
// the CLI's exit code and .ci/chaos.sh (--fail-on-skip) hold the suite to
// a verdict.
func TestSDKScenariosPass(t *testing.T) {
	skipWhereTheSuiteRuns(t)
	if testing.Short() {
		t.Skip("runs every SDK client scenario (10-20s); skipped with -short")
	}
	scs, missing := loadSDKScenarios(t, "../scenarios/sdk")
	// Node's start-up (about 0.35s of CPU per client) is the noise the waits
	// must stand out from: a few clients at once.
	checkPassSet(t, scs, missing, 4, sdkInstallHint)
}

// checkPassSet runs scs, honest scenarios, parallel at a time (missing:
// those skipped for a missing client, with why): each must pass. One whose
// timing stayed inconclusive on a busy machine after its re-runs is
// logged, not failed. It returns the results by scenario name.
func checkPassSet(t *testing.T, scs []*scenario.Scenario, missing map[string]string, parallel int, hint string) map[string]Result {
	t.Helper()
	res := runSDK(t, scs, parallel)
	names := make([]string, 0, len(scs)+len(missing))
	for _, sc := range scs {
		names = append(names, sc.Name)
	}
	for name := range missing {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if why, ok := missing[name]; ok {
				t.Skipf("%s; %s", why, hint)
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
	return res
}
