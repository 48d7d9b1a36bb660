package mock

import (
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// TestEnvOutagePhases checks that the mock gives each attempt the fault of
// its outage phase by the policy time of its arrival since attempt 1's, on
// an injected clock (no sleeping): attempts: first, then phase 1, phase 2
// and ok past the last phase; and that the journal records each draw.
func TestEnvOutagePhases(t *testing.T) {
	toxi := startToxi(t)
	seed := int64(7)
	status := func(s int) scenario.Fault { return scenario.Fault{Kind: fault.Status{Status: s}} }
	sc := &scenario.Scenario{Name: "outage-phases", Provider: wire.ProviderAnthropic,
		Attempts: []scenario.Fault{status(500)},
		Outage: &scenario.Outage{Seed: &seed, Phases: []scenario.Phase{
			{For: scenario.Duration(10 * time.Second), Mix: []scenario.MixEntry{{Weight: 1, Fault: status(529)}}},
			{For: scenario.Duration(10 * time.Second), Mix: []scenario.MixEntry{{Weight: 1, Fault: status(503)}}},
		}}}
	var mu sync.Mutex
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	clock := t0
	set := func(d time.Duration) { mu.Lock(); clock = t0.Add(d); mu.Unlock() }
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	// timeScale 0.5: a wall second is two policy seconds.
	e := startEnvWith(t, EnvConfig{Toxi: toxi, Scenario: sc, Now: now, TimeScale: 0.5})
	for i, tc := range []struct {
		wall   time.Duration // since attempt 1 arrived
		status int
		draw   *trace.OutageDraw
	}{
		{0, 500, nil}, // attempts[0]; the outage's clock starts here
		{1 * time.Second, 529, &trace.OutageDraw{Phase: 1, Entry: 1, AtMs: 2000}},
		{4999 * time.Millisecond, 529, &trace.OutageDraw{Phase: 1, Entry: 1, AtMs: 9998}},
		{5 * time.Second, 503, &trace.OutageDraw{Phase: 2, Entry: 1, AtMs: 10000}},
		{9 * time.Second, 503, &trace.OutageDraw{Phase: 2, Entry: 1, AtMs: 18000}},
		{10 * time.Second, 200, &trace.OutageDraw{Phase: 0, Entry: 0, AtMs: 20000}},
	} {
		set(tc.wall)
		resp, _, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
		if err != nil {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
		if resp.StatusCode != tc.status {
			t.Errorf("attempt %d at %v: status %d, want %d", i+1, tc.wall, resp.StatusCode, tc.status)
		}
		as := waitAttempts(t, e, i+1)
		a := as[i]
		if (a.Outage == nil) != (tc.draw == nil) || a.Outage != nil && *a.Outage != *tc.draw {
			t.Errorf("attempt %d at %v: drew %+v, want %+v", i+1, tc.wall, a.Outage, tc.draw)
		}
	}
	e.Close()
	raw, err := os.ReadFile(e.journalPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"outage":{"phase":2,"entry":1,"atMs":10000}`; !strings.Contains(string(raw), want) {
		t.Errorf("journal lacks %s:\n%s", want, raw)
	}
}

// TestDecideSeed checks that an outage without a seed draws with the run's
// (EnvConfig.OutageSeed), and that the draws follow the attempt numbers.
func TestDecideSeed(t *testing.T) {
	mix := []scenario.MixEntry{
		{Weight: 1, Fault: scenario.Fault{Kind: fault.Status{Status: 529}}},
		{Weight: 1, Fault: scenario.Fault{Kind: fault.Status{Status: 503}}},
		{Weight: 1, Fault: scenario.Fault{Kind: fault.OK{}}},
	}
	sc := &scenario.Scenario{Outage: &scenario.Outage{Phases: []scenario.Phase{{For: scenario.Duration(time.Hour), Mix: mix}}}}
	draws := func(seed int64) []int {
		e := &Env{cfg: EnvConfig{Scenario: sc, OutageSeed: seed}}
		var out []int
		at := time.Unix(0, 0)
		for n := 1; n <= 30; n++ {
			_, d := e.decideLocked(n, n, at)
			out = append(out, d.Entry)
			_, _, want := sc.Outage.Draw(seed, n, 0)
			if d.Entry != want {
				t.Fatalf("seed %d attempt %d: entry %d, Draw says %d", seed, n, d.Entry, want)
			}
		}
		return out
	}
	if a, b := draws(1), draws(2); slices.Equal(a, b) {
		t.Errorf("run seeds 1 and 2 gave the same draws %v", a)
	}
}
