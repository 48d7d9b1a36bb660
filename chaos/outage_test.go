package chaos

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// TestOutageScenarios runs the outage shapes of scenarios/outages with the
// built-in client: each must pass, record its outage in result.json, and
// draw the same faults when run again with the same seed (the phases by
// the attempts' policy time, the draws by their numbers).
func TestOutageScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the outage scenarios against the mock server")
	}
	scs, err := scenario.LoadPaths([]string{filepath.Join("..", "scenarios", "outages")})
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) < 3 {
		t.Fatalf("%d outage scenarios, want the shapes", len(scs))
	}
	toxi := runnerToxi(t)
	run := func(scs []*scenario.Scenario) map[string]Result {
		r := &Runner{Toxi: toxi, Out: t.TempDir(), Seed: 1, Parallel: extraParallel(), Confirm: 2}
		sum, err := r.Run(context.Background(), scs)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Result{}
		for _, res := range sum.Scenarios {
			out[res.Name] = res
		}
		return out
	}
	first := run(scs)
	var again []*scenario.Scenario
	for _, sc := range scs {
		res := first[sc.Name]
		if res.Error != "" || !notFailed(res) {
			t.Errorf("%s: want pass, got %s%s", sc.Name, res.Error, describeFailed(res, nil))
			continue
		}
		o := res.Outage
		if o == nil || len(o.Phases) != len(sc.Outage.Phases) || len(o.Draws) != res.Attempts || len(res.Faults) != res.Attempts {
			t.Errorf("%s: result.json outage %+v, %d attempts, faults %q", sc.Name, o, res.Attempts, res.Faults)
			continue
		}
		if want := sc.Outage.SeedOr(1); o.Seed != want {
			t.Errorf("%s: outage seed %d, want %d", sc.Name, o.Seed, want)
		}
		// result.json on disk says the same.
		raw, err := os.ReadFile(filepath.Join(res.Dir, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		var disk struct{ Outage *OutageResult }
		if err := json.Unmarshal(raw, &disk); err != nil || disk.Outage == nil || len(disk.Outage.Draws) != len(o.Draws) {
			t.Errorf("%s: result.json outage %+v (%v)", sc.Name, disk.Outage, err)
		}
		if slices.Contains([]string{"flapping-provider", "brown-out"}, sc.Name) {
			again = append(again, sc)
		}
	}
	if len(again) != 2 {
		t.Fatalf("flapping-provider and brown-out not both run: %d", len(again))
	}
	second := run(again)
	for _, sc := range again {
		if diff := cmp.Diff(draws(first[sc.Name]), draws(second[sc.Name])); diff != "" {
			t.Errorf("%s: the same seed drew differently (-first +second):\n%s", sc.Name, diff)
		}
	}
}

// draws is what each attempt of res drew, without its exact time.
func draws(res Result) []OutageDraw {
	if res.Outage == nil {
		return nil
	}
	out := slices.Clone(res.Outage.Draws)
	for i := range out {
		out[i].AtMs = 0
	}
	return out
}
