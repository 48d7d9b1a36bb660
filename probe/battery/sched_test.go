package battery

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/probe"
)

// fakePhase is a phase that takes d of fake time, or ends when its
// context does (then it is interrupted).
func fakePhase(d time.Duration, ran *[]string, mu *sync.Mutex, name string) func(context.Context) phase {
	return func(ctx context.Context) phase {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return phase{sum: &chaos.Summary{Interrupted: 1}, err: ctx.Err()}
		}
		mu.Lock()
		*ran = append(*ran, name)
		mu.Unlock()
		return phase{obs: []probe.Observation{{Fault: name}}, sum: &chaos.Summary{}}
	}
}

func TestSpecsTakeWhatWasAskedFor(t *testing.T) {
	tests := []struct {
		name string
		// key asked for at the join, and when (the speculation takes 10s)
		ask   string
		after time.Duration
		ok    bool
		// how long after the join the answer comes
		wait time.Duration
	}{
		{"the same probes, still running: waited for", "k1", 4 * time.Second, true, 6 * time.Second},
		{"the same probes, already done: at once", "k1", 12 * time.Second, true, 0},
		{"other probes: stopped at once, dropped", "k2", 4 * time.Second, false, 0},
		{"other probes, done: dropped", "k2", 12 * time.Second, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var ran []string
				s := newSpecs()
				if s.start(context.Background(), "more", "k1", fakePhase(10*time.Second, &ran, &mu, "more")) == nil {
					t.Fatal("a speculation did not start")
				}
				if s.start(context.Background(), "more", "k1", fakePhase(time.Second, &ran, &mu, "twice")) != nil {
					t.Fatal("a second speculation started in a taken slot")
				}
				time.Sleep(tt.after)
				s.close()
				if s.start(context.Background(), "checks", "k", fakePhase(time.Second, &ran, &mu, "late")) != nil {
					t.Fatal("a speculation started once closed")
				}
				join := time.Now()
				sp, ok := s.claim("more", tt.ask)
				if sp == nil {
					t.Fatal("the speculation is gone")
				}
				ph := sp.wait()
				if ok != tt.ok {
					t.Errorf("claim ok = %v, want %v", ok, tt.ok)
				}
				if got := time.Since(join); got != tt.wait {
					t.Errorf("answered %s after the join, want %s", got, tt.wait)
				}
				if tt.ok && (len(ph.obs) != 1 || ph.obs[0].Fault != "more") {
					t.Errorf("phase taken = %+v, want the speculation's", ph.obs)
				}
				if sp, _ := s.claim("more", tt.ask); sp != nil {
					t.Error("a slot claimed twice")
				}
			})
		})
	}
}

func TestSpecsDropStopsEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var ran []string
		s := newSpecs()
		s.start(context.Background(), "round-1", "a", fakePhase(time.Minute, &ran, &mu, "round-1"))
		s.start(context.Background(), "checks", "b", fakePhase(time.Minute, &ran, &mu, "checks"))
		time.Sleep(time.Second)
		start := time.Now()
		got := s.drop()
		if len(got) != 2 || time.Since(start) != 0 {
			t.Errorf("drop returned %d phases after %s, want 2 at once", len(got), time.Since(start))
		}
		if len(ran) != 0 {
			t.Errorf("phases ran to their end: %v", ran)
		}
		if s.start(context.Background(), "x", "y", fakePhase(time.Second, &ran, &mu, "x")) != nil {
			t.Error("a speculation started after drop")
		}
	})
}

func TestSpecsEndWithTheirContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var ran []string
		ctx, cancel := context.WithCancel(context.Background())
		s := newSpecs()
		sp := s.start(ctx, "more", "k", fakePhase(time.Minute, &ran, &mu, "more"))
		time.Sleep(time.Second)
		cancel() // Ctrl-C
		ph := sp.wait()
		if ph.err == nil || len(ran) != 0 {
			t.Errorf("an interrupted speculation ran to its end: %+v, %v", ph, ran)
		}
		if s.start(ctx, "checks", "k", fakePhase(time.Second, &ran, &mu, "checks")) != nil {
			t.Error("a speculation started after its context ended")
		}
	})
}

// TestGroupsFireOnce: a group's function runs once, when its last
// scenario has ended, with every scenario ended by then; scenarios of no
// group and repeated ends are ignored.
func TestGroupsFireOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wg sync.WaitGroup
		gs := newGroups(&wg)
		for _, n := range []string{"exhaust-1", "exhaust-2"} {
			gs.add("exhaustion", n)
		}
		for _, n := range []string{"400", "hang"} {
			gs.add("decision", n)
		}
		var mu sync.Mutex
		fired := map[string][]int{}
		for _, g := range []string{"exhaustion", "decision"} {
			gs.on(g, func(ended map[string]bool) {
				mu.Lock()
				defer mu.Unlock()
				fired[g] = append(fired[g], len(ended))
			})
		}
		for _, n := range []string{"exhaust-1", "400", "unknown", "400", "exhaust-2", "exhaust-2"} {
			gs.end(n)
		}
		wg.Wait()
		if got := fired["exhaustion"]; len(got) != 1 || got[0] != 3 {
			t.Errorf("exhaustion fired %v, want once with the 3 scenarios ended by then", got)
		}
		if got := fired["decision"]; len(got) != 0 {
			t.Errorf("decision fired %v before its hang ended", got)
		}
		gs.end("hang")
		wg.Wait()
		if got := fired["decision"]; len(got) != 1 || got[0] != 4 {
			t.Errorf("decision fired %v, want once with all 4", got)
		}
		if got := gs.endedNow(); len(got) != 4 {
			t.Errorf("endedNow = %v", got)
		}
	})
}

func TestKeyOf(t *testing.T) {
	prov, err := probe.LookupProvider("anthropic")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Provider: prov}.withDefaults()
	a, err := ceilingProbes(o, 1, []int64{9000, 28000})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ceilingProbes(o, 1, []int64{9000, 27000})
	c, _ := ceilingProbes(o, 2, []int64{9000, 28000})
	a2, _ := ceilingProbes(o, 1, []int64{9000, 28000})
	if keyOf(a) != keyOf(a2) {
		t.Error("the same probes have different keys")
	}
	if keyOf(a) == keyOf(b) || keyOf(a) == keyOf(c) {
		t.Error("other values or another round have the same key")
	}
}
