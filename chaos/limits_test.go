package chaos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/scenario"
)

// TestLimitsScenarios runs scenarios/limits with the built-in client: each
// must pass (every request finishes after waiting the 429s' retry-after),
// and what its attempts met must show the account's 429s, in result.json's
// faults and in server.jsonl's limited records.
func TestLimitsScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the limits scenarios against the mock server")
	}
	scs, err := scenario.LoadPaths([]string{filepath.Join("..", "scenarios", "limits")})
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) < 2 {
		t.Fatalf("%d limits scenarios, want at least 2", len(scs))
	}
	r := &Runner{Toxi: runnerToxi(t), Out: t.TempDir(), Seed: 1, Parallel: extraParallel(), Confirm: 2}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range sum.Scenarios {
		if res.Error != "" || !notFailed(res) {
			t.Errorf("%s: want pass, got %s%s", res.Name, res.Error, describeFailed(res, nil))
			continue
		}
		limited := 0
		for _, f := range res.Faults {
			if strings.HasPrefix(f, "429 retry-after=") {
				limited++
			}
		}
		if limited == 0 || len(res.Faults) != res.Attempts {
			t.Errorf("%s: faults %q for %d attempts, want the account's 429s among them", res.Name, res.Faults, res.Attempts)
		}
		raw, err := os.ReadFile(filepath.Join(res.Dir, "server.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(raw), `"limited":{"limit":`); got != limited {
			t.Errorf("%s: server.jsonl has %d limited records, want %d", res.Name, got, limited)
		}
	}
}
