package battery

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	chaosscenario "github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/probe"
)

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

// TestExpectEnd works the measured expectation out on fake times: the
// scenarios still to run take as long as the finished ones of their kind.
func TestExpectEnd(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	done := func(kind string, from, to float64) job {
		return job{kind: kind, deadline: 2 * time.Minute, started: at(from), done: at(to)}
	}
	running := func(kind string, from float64) job {
		return job{kind: kind, deadline: 2 * time.Minute, started: at(from)}
	}
	pending := func(kind string, n int) []job {
		out := make([]job, n)
		for i := range out {
			out[i] = job{kind: kind, deadline: 2 * time.Minute}
		}
		return out
	}
	long := job{kind: kindLong, deadline: 15 * time.Second}
	tests := []struct {
		name     string
		now      float64
		jobs     []job
		parallel int
		wantEnd  float64 // seconds after t0; -1: no expectation
		why      string
		basis    string
	}{
		{name: "nothing finished: no expectation", now: 5, parallel: 4,
			jobs:    append([]job{running(kindExhaustion, 0), running(kindDecision, 0)}, pending(kindDecision, 3)...),
			wantEnd: -1, why: "the first exhaustion run to finish"},
		{name: "agent.py: a 16s exhaustion measured, decision probes of 1s, 20 still to run on 4 slots", now: 16, parallel: 4,
			jobs: append([]job{done(kindExhaustion, 0, 16), running(kindExhaustion, 0), running(kindExhaustion, 1), done(kindDecision, 0, 1),
				done(kindDecision, 1, 2), running(kindDecision, 15)}, pending(kindDecision, 20)...),
			// slots free in 0s (the first exhaustion's mean is past), 1s (the one started at 1),
			// 0s (the decision probe started at 15 has had its mean 1s), 0s (free): 20 probes
			// of 1s placed as each frees end 6s on (5 on each slot, the one busy for 1s too).
			wantEnd: 16 + 6, basis: "1 exhaustion run(s) finished, 16s each on average; 2 decision probe(s) finished, 1s each on average"},
		{name: "a running scenario past its kind's mean is expected to end now", now: 60, parallel: 2,
			jobs:    []job{done(kindExhaustion, 0, 20), running(kindExhaustion, 10), done(kindDecision, 0, 2)},
			wantEnd: 60, basis: "1 exhaustion run(s) finished, 20s each on average; 1 decision probe(s) finished, 2s each on average"},
		{name: "a long probe not yet measured: its short deadline", now: 3, parallel: 2,
			jobs:    []job{done(kindDecision, 0, 3), long},
			wantEnd: 3 + 15, basis: "1 decision probe(s) finished, 3s each on average"},
		{name: "ceiling probes: the value in wall time plus a decision probe's time, at most the deadline", now: 0, parallel: 3,
			jobs: []job{done(kindDecision, -2, 0), {kind: kindCeiling, deadline: 30 * time.Second, wait: 9 * time.Second},
				{kind: kindCeiling, deadline: 46 * time.Second, wait: 29 * time.Second}, {kind: kindCeiling, deadline: 120 * time.Second, wait: 88 * time.Second}},
			wantEnd: 90, basis: "1 decision probe(s) finished, 2s each on average"},
		{name: "ceiling probes before any decision probe finished: none", now: 0, parallel: 3,
			jobs:    []job{{kind: kindCeiling, deadline: 30 * time.Second, wait: 9 * time.Second}},
			wantEnd: -1, why: "the first ceiling probe to finish"},
		{name: "all finished: now", now: 40, parallel: 2,
			jobs:    []job{done(kindExhaustion, 0, 30), done(kindDecision, 0, 1)},
			wantEnd: 40, basis: "1 exhaustion run(s) finished, 30s each on average; 1 decision probe(s) finished, 1s each on average"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok, why := expectEnd(at(tt.now), tt.jobs, tt.parallel)
			if tt.wantEnd < 0 {
				if ok || why != tt.why {
					t.Errorf("expectEnd = %v, %t, %q; want none, %q", e.End.Sub(t0), ok, why, tt.why)
				}
				return
			}
			if !ok {
				t.Fatalf("no expectation: %s", why)
			}
			if got := e.End.Sub(t0); got != time.Duration(tt.wantEnd*float64(time.Second)) {
				t.Errorf("end = %v, want %gs", got, tt.wantEnd)
			}
			if diff := cmp.Diff(tt.basis, e.Basis); diff != "" {
				t.Errorf("basis (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPaceProgressPrefix: the progress prefix says the measured
// expectation once a scenario of every kind still to run has finished,
// on a fake clock.
func TestPaceProgressPrefix(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	pc := newPace(func() time.Time { return now }, 2)
	prov, _ := probe.LookupProvider("anthropic")
	ps := slices2(probes(prov, prov.Exhaust.Name, 1, 2*time.Minute), probes(prov, "400", 3, 2*time.Minute))
	ps[0].Sample = 1
	for i := range ps {
		ps[i].Scenario = &chaosscenario.Scenario{Name: []string{"ex-1", "p-1", "p-2", "p-3"}[i]}
	}
	pc.add(ps, 1)
	var out []string
	w := &elapsedWriter{w: writerFunc(func(b []byte) { out = append(out, string(b)) }), start: t0, now: func() time.Time { return now },
		est: 21*time.Minute + 30*time.Second, expect: pc.expect}
	step := func(s float64, name string, done bool) {
		now = t0.Add(time.Duration(s * float64(time.Second)))
		if _, first := pc.mark(name, done); first {
			w.Write([]byte("first\n"))
		}
		w.Write([]byte(name + "\n"))
	}
	step(0, "ex-1", false)
	step(0, "p-1", false)
	step(1, "p-1", true)
	step(1, "p-2", false)
	step(2, "p-2", true)
	step(2, "p-3", false)
	step(15, "ex-1", true)
	want := []string{"[0:00 of ≤ 21:30] ex-1\n", "[0:00 of ≤ 21:30] p-1\n", "[0:01 of ≤ 21:30] p-1\n", "[0:01 of ≤ 21:30] p-2\n",
		"[0:02 of ≤ 21:30] p-2\n", "[0:02 of ≤ 21:30] p-3\n",
		"[0:15, expected end ~0:15, at most 21:30] first\n", "[0:15, expected end ~0:15, at most 21:30] ex-1\n"}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
