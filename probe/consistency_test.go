package probe

import (
	"strings"
	"testing"
)

// TestInferConsistency: where the probe has more than one run of the same
// failure (the exhaustion's samples and the 503 served once), runs that
// disagree make the decision inconclusive, never the majority's guess, and
// a client that disagrees with itself is not profiled (hostile report: a
// client sending 0–4 requests at random got a confident profile, and a run
// that sent nothing was "end: succeeded").
func TestInferConsistency(t *testing.T) {
	prov, _ := LookupProvider("anthropic")
	edit := func(f func(o *Observation)) []Observation {
		obs := sdkJournal(prov)
		for i := range obs {
			f(&obs[i])
		}
		return obs
	}
	exh := func(o *Observation) bool { return o.Sample > 0 }
	tests := []struct {
		name string
		obs  []Observation
		// nondet: a substring of Profile.Nondeterministic ("": deterministic).
		nondet string
		// end of the fault (sample 0) named endOf, when set.
		endOf, end string
		maxRetries *int
	}{
		{name: "an SDK: every run of the 503 agrees", obs: sdkJournal(prov), maxRetries: ptr(2)},
		{name: "the 503 not retried once, retried in every exhaustion run",
			obs: edit(func(o *Observation) {
				if o.Fault == "503" {
					o.Attempts, o.End, o.WaitsMs = 1, EndGaveUp, nil
				}
			}),
			nondet: "retried in 4 (503 until it gives up #1: 3 attempts, gave up; "},
		{name: "one exhaustion run sent no request while the others reached the mock",
			obs: edit(func(o *Observation) {
				if o.Sample == 2 {
					o.Attempts, o.End, o.WaitsMs, o.Client = 0, EndSucceeded, nil, "exit status 0"
				}
			}),
			nondet: "no request at all in 1 (503 until it gives up #2)"},
		{name: "give-up counts one apart: a limit in time, not inconsistent",
			obs: edit(func(o *Observation) {
				if o.Sample == 4 {
					o.Attempts, o.WaitsMs = 4, append(o.WaitsMs, 2000)
				}
			}),
			maxRetries: ptr(2)},
		{name: "give-up counts 2 to 5 attempts",
			obs: edit(func(o *Observation) {
				if exh(o) {
					o.Attempts = o.Sample + 1
					o.WaitsMs = []float64{500, 1000, 2000, 4000}[:o.Sample]
				}
			}),
			nondet: "the exhaustion runs gave up after [2 3 4 5] attempts"},
		{name: "a decision probe that sent no request is 'no request', not succeeded",
			obs: edit(func(o *Observation) {
				if o.Fault == "400" {
					o.Attempts, o.End, o.Client = 0, EndSucceeded, "exit status 0"
				}
			}),
			endOf: "400", end: EndNoRequest, maxRetries: ptr(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Infer(prov, tt.obs)
			if tt.nondet == "" && p.Nondeterministic != "" {
				t.Fatalf("said not deterministic: %s", p.Nondeterministic)
			}
			if tt.nondet != "" {
				if !strings.Contains(p.Nondeterministic, tt.nondet) {
					t.Fatalf("Nondeterministic = %q, want it to say %q", p.Nondeterministic, tt.nondet)
				}
				for _, f := range p.Faults {
					if f.Retried != nil {
						t.Errorf("%s #%d: retried %v in a profile of a client not deterministic", f.Fault, f.Sample, *f.Retried)
					}
				}
				if len(p.Confidence) != 0 || p.Policy.MaxRetries != nil || p.Policy.Backoff.InitialMs != nil || p.Policy.TimeoutMs != nil {
					t.Errorf("figures left in a profile of a client not deterministic: %+v %v", p.Policy, p.Confidence)
				}
				if p.LearntNothing != "" {
					t.Errorf("learntNothing said too: %s", p.LearntNothing)
				}
			}
			for _, f := range p.Faults {
				if f.Attempts == 0 && (f.End == EndSucceeded || f.End == EndGaveUp) {
					t.Errorf("%s #%d: no request, but end %q", f.Fault, f.Sample, f.End)
				}
				if tt.endOf != "" && f.Fault == tt.endOf && f.Sample == 0 {
					if f.End != tt.end || f.Retried != nil {
						t.Errorf("%s: end %q retried %v, want %q and null", f.Fault, f.End, f.Retried, tt.end)
					}
				}
			}
			if m := p.Policy.MaxRetries; tt.maxRetries != nil && (m == nil || *m != *tt.maxRetries) {
				t.Errorf("maxRetries = %v, want %d", m, *tt.maxRetries)
			}
		})
	}
}
