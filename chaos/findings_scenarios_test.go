package chaos

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
)

// TestFindingScenarios runs scenarios/findings: each passes (its
// expect.findings included), and every finding code is present in one of
// them and absent in another, counting the trap that raises
// no_read_timeout (chaos/testdata/scenarios-extra/fail, which
// TestExtraScenarios runs).
func TestFindingScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the findings scenarios against the mock server")
	}
	paths, err := filepath.Glob("../scenarios/findings/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no findings scenarios: %v", err)
	}
	trap := filepath.Join("testdata", "scenarios-extra", "fail", "wrong-stall-never-timed-out.yaml")
	scs, err := scenario.LoadPaths(append(paths, trap))
	if err != nil {
		t.Fatal(err)
	}
	present, absent := map[string]bool{}, map[string]bool{}
	for _, sc := range scs {
		if fe := sc.Expect.Findings; fe != nil {
			for _, c := range fe.Present {
				present[c] = true
			}
			for _, c := range fe.Absent {
				absent[c] = true
			}
		}
	}
	for _, c := range scenario.FindingCodeNames() {
		if !present[c] || !absent[c] {
			t.Errorf("%s: present in a scenario %v, absent in one %v; want both", c, present[c], absent[c])
		}
	}
	r := &Runner{Toxi: runnerToxi(t), Out: t.TempDir(), Seed: 1, Parallel: extraParallel(), Confirm: 2}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range sum.Scenarios {
		if res.Error != "" {
			t.Errorf("%s: scenario error: %s", res.Name, res.Error)
			continue
		}
		if res.Name == "wrong-stall-never-timed-out" {
			if !slices.ContainsFunc(res.Findings, func(f verify.Finding) bool { return f.Code == "no_read_timeout" }) {
				t.Errorf("%s: no no_read_timeout in %+v", res.Name, res.Findings)
			}
			continue
		}
		if !notFailed(res) {
			t.Errorf("%s: want pass, got:%s", res.Name, describeFailed(res, nil))
		}
	}
}
