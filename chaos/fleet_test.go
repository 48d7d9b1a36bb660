package chaos

import (
	"bytes"
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
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
		perClient := max(sc.Requests, 1)
		if f == nil || f.Clients != sc.Fleet.Clients || f.Requests != sc.Fleet.Clients*perClient || f.Attempts != res.Attempts {
			t.Errorf("%s: fleet figures %+v, %d attempts; want %d clients, %d request(s) each", res.Name, f, res.Attempts, sc.Fleet.Clients, perClient)
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

func TestMergeClientChecks(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("runs", "x", "s")
	runs := []fleetRun{{dir: fleetClientDir(dir, 1, 3)}, {dir: fleetClientDir(dir, 2, 3)}, {dir: fleetClientDir(dir, 3, 3)}}
	pass := func(name string) verify.Check {
		return verify.Check{Name: name, Passed: true, State: verify.StatePass, Want: "2", Got: "2", Where: "server.jsonl"}
	}
	fail := func(name, got string) verify.Check {
		return verify.Check{Name: name, State: verify.StateFail, Want: "2", Got: got, Where: "server.jsonl"}
	}
	inc := verify.Check{Name: "delays.server", State: verify.StateInconclusive, Want: "1s", Got: "1.3s", Where: "server.jsonl: gap"}
	got := mergeClientChecks([][]verify.Check{
		{pass("outcome"), pass("attempts"), pass("delays.server")},
		{pass("outcome"), fail("attempts", "3"), inc},
		{pass("outcome"), fail("attempts", "4"), pass("delays.server")},
	}, runs, dir)
	want := []verify.Check{
		pass("outcome"),
		{Name: "attempts", State: verify.StateFail, Want: "2", Got: "client 2: 3 (and 1 more clients)", Where: "clients/02/server.jsonl"},
		{Name: "delays.server", State: verify.StateInconclusive, Want: "1s", Got: "client 2: 1.3s", Where: "clients/02/server.jsonl: gap"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mergeClientChecks() mismatch (-want +got):\n%s", diff)
	}
}

func TestFleetMemberKey(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "ANTHROPIC_API_KEY=" + redact.FakeAPIKey, "OPENAI_API_KEY=" + redact.FakeAPIKey, "GEMINI_API_KEY=" + redact.FakeAPIKey}
	vars := map[string]string{"ANTHROPIC_API_KEY": redact.FakeAPIKey, "RETRYLAB_TRACE": "t"}
	gotEnv, gotVars := fleetMember{index: 7}.withKey(slices.Clone(env), maps.Clone(vars))
	wantEnv := []string{"PATH=/bin", "ANTHROPIC_API_KEY=" + mock.FleetKey(7), "OPENAI_API_KEY=" + mock.FleetKey(7), "GEMINI_API_KEY=" + mock.FleetKey(7)}
	if diff := cmp.Diff(wantEnv, gotEnv); diff != "" {
		t.Errorf("withKey() env mismatch (-want +got):\n%s", diff)
	}
	if gotVars["ANTHROPIC_API_KEY"] != mock.FleetKey(7) || gotVars["RETRYLAB_TRACE"] != "t" {
		t.Errorf("withKey() vars = %v", gotVars)
	}
	if e, _ := (fleetMember{}).withKey(slices.Clone(env), nil); !slices.Equal(e, env) {
		t.Errorf("outside a fleet the environment changed: %v", e)
	}
	if (fleetMember{}).apiKey() != redact.FakeAPIKey || (fleetMember{index: 3}).seedSuffix() == (fleetMember{index: 4}).seedSuffix() {
		t.Errorf("a fleet member's key or jitter seed is not its own")
	}
}

// TestFleetGate checks on a fake clock that a fleet's built-in clients
// start only once every one is set up, then stagger apart, and that a
// client that ends before its start (arrive by its deferred once) does not
// hold the others; an ended context stops a waiting one.
func TestFleetGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newFleetGate(3, 100*time.Millisecond)
		starts := make([]time.Duration, 3)
		t0 := time.Now()
		var wg sync.WaitGroup
		for i := range 2 {
			m := fleetMember{index: i + 1, gate: g, once: &sync.Once{}}
			wg.Go(func() {
				time.Sleep(time.Duration(i+1) * time.Second) // setup
				if !m.ready(t.Context()) {
					t.Errorf("client %d: not ready", i+1)
				}
				starts[i] = time.Since(t0)
			})
		}
		// Client 3 fails its setup at 5s: it still counts at the gate.
		m3 := fleetMember{index: 3, gate: g, once: &sync.Once{}}
		wg.Go(func() {
			time.Sleep(5 * time.Second)
			m3.once.Do(g.arrive)
		})
		wg.Wait()
		if want := []time.Duration{5 * time.Second, 5*time.Second + 100*time.Millisecond}; starts[0] != want[0] || starts[1] != want[1] {
			t.Errorf("starts %v, want %v", starts[:2], want)
		}
		ctx, cancel := context.WithCancel(t.Context())
		never := newFleetGate(2, 0)
		done := make(chan bool)
		go func() { done <- fleetMember{index: 1, gate: never, once: &sync.Once{}}.ready(ctx) }()
		time.Sleep(time.Second)
		cancel()
		if <-done {
			t.Errorf("ready after the context ended")
		}
	})
}
