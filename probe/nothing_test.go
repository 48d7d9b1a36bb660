package probe

import (
	"strings"
	"testing"
)

// TestLearntNothing: a profile from which no decision and no figure could
// be told says why (the CLI exits 2 with it); one decision, or a client
// that never reached the mock (Unreached says it), does not.
func TestLearntNothing(t *testing.T) {
	prov, _ := LookupProvider("anthropic")
	every := func(o func(f Fault) Observation) []Observation {
		var obs []Observation
		for _, f := range prov.Faults {
			obs = append(obs, o(f))
		}
		for s := 1; s <= 2; s++ {
			ob := o(prov.Exhaust)
			ob.Sample = s
			obs = append(obs, ob)
		}
		return obs
	}
	tests := []struct {
		name string
		obs  []Observation
		want []string // each in LearntNothing; none: empty
	}{
		{"every run not run (the proxy failed under each)",
			every(func(f Fault) Observation {
				return Observation{Fault: f.Name, End: EndNotRun, Note: "stopped: toxiproxy went away"}
			}),
			[]string{"no decision and no figure could be told from the 28 runs", "28 not run (stopped: toxiproxy went away)"}},
		{"every run stopped at the deadline after its first attempt (a client that waits for ever)",
			every(func(f Fault) Observation {
				return Observation{Fault: f.Name, Attempts: 1, End: EndStopped, DeadlineMs: 5000}
			}),
			[]string{"28 stopped at the deadline (still waiting after the first attempt when stopped at 5s)"}},
		{"the warm-up only, exit 0, in each (the default mode on a one-request client, before the pilot)",
			every(func(f Fault) Observation {
				return Observation{Fault: f.Name, End: EndNotRun, WarmUpOnly: true, Note: "the client made one request only"}
			}),
			[]string{"28 not run (the client made one request only)"}},
		{"one decision told: something was learnt",
			append(every(func(f Fault) Observation { return Observation{Fault: f.Name, End: EndNotRun} })[1:],
				Observation{Fault: "400", Attempts: 1, End: EndGaveUp}),
			nil},
		{"never reached the mock: Unreached says it",
			every(func(f Fault) Observation { return Observation{Fault: f.Name, End: EndGaveUp, Client: "exit status 1"} }),
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Infer(prov, tt.obs)
			if len(tt.want) == 0 && p.LearntNothing != "" {
				t.Errorf("LearntNothing = %q, want none", p.LearntNothing)
			}
			if len(tt.want) > 0 && p.LearntNothing == "" {
				t.Fatalf("LearntNothing is empty; Unreached %q", p.Unreached)
			}
			for _, w := range tt.want {
				if !strings.Contains(p.LearntNothing, w) {
					t.Errorf("LearntNothing = %q, want it to contain %q", p.LearntNothing, w)
				}
			}
		})
	}
}
