package chaos

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// TestFleetScenarios runs scenarios/fleet: each passes (its expect.fleet
// included: lockstep synchrony >= 0.9, full jitter <= 0.6, a shared
// outage survived, an external fleet), records its figures in result.json,
// gives each client its own run sub-folder, and leaves no client's key in
// the run folder.
func TestFleetScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the fleet scenarios against the mock server")
	}
	scs, err := scenario.LoadPaths([]string{filepath.Join("..", "scenarios", "fleet")})
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) < 4 {
		t.Fatalf("%d fleet scenarios, want at least 4", len(scs))
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
		var sc *scenario.Scenario
		for _, s := range scs {
			if s.Name == res.Name {
				sc = s
			}
		}
		f := res.Fleet
		if f == nil || f.Clients != sc.Fleet.Clients || f.Requests != sc.Fleet.Clients || f.Attempts != res.Attempts {
			t.Errorf("%s: fleet figures %+v, %d attempts; want %d clients, one request each", res.Name, f, res.Attempts, sc.Fleet.Clients)
		}
		for i := 1; i <= sc.Fleet.Clients; i++ {
			if _, err := os.Stat(fleetClientDir(res.Dir, i, sc.Fleet.Clients)); err != nil {
				t.Errorf("%s: client %d has no run sub-folder: %v", res.Name, i, err)
			}
		}
		_ = filepath.WalkDir(res.Dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, _ := os.ReadFile(path)
			if bytes.Contains(b, []byte(mock.FleetKey(1)[:len(mock.FleetKey(1))-4])) {
				t.Errorf("%s: a fleet key is in %s", res.Name, path)
			}
			return nil
		})
	}
}
