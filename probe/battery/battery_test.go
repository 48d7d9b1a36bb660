package battery

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/probe"
	"github.com/retrylab/retrylab/retry"
)

// TestPlan: the exhaustion samples first, the survival runs of each
// outage kind (529, 429, drop: two each, one with --per-fault, whose
// decision probe is the other), then one scenario per decision fault; each
// with the warm-up ok; --per-fault serves each fault Repeat times but the
// long ones once.
func TestPlan(t *testing.T) {
	prov, _ := probe.LookupProvider("anthropic")
	now := time.Date(2026, 11, 27, 10, 0, 0, 500e6, time.UTC)
	tests := []struct {
		name     string
		o        Options
		served   map[string]int // fault → attempts served (the warm-up not counted)
		attempts map[string]int // fault → attempts in the scenario
		survival int            // survival runs
	}{
		{"default", Options{Provider: prov, Samples: 2, Repeat: 5},
			map[string]int{"400": 1, "hang": 1, prov.Exhaust.Name: 5},
			map[string]int{"400": 2, "hang": 2, prov.Exhaust.Name: 6}, 6},
		{"per fault", Options{Provider: prov, Samples: 2, Repeat: 5, PerFault: true},
			map[string]int{"400": 5, "hang": 1, "429 retry-after 3600": 1},
			map[string]int{"400": 6, "hang": 2}, 3},
		{"no warm-up", Options{Provider: prov, Samples: 2, Repeat: 5, NoWarmUp: true},
			map[string]int{"400": 1},
			map[string]int{"400": 1, prov.Exhaust.Name: 5}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := plan(tt.o, now)
			if err != nil {
				t.Fatal(err)
			}
			if want := len(prov.Faults) + 2 + tt.survival; len(ps) != want {
				t.Fatalf("%d probes, want %d", len(ps), want)
			}
			if ps[0].Sample != 1 || ps[1].Sample != 2 {
				t.Errorf("order: %s, %s; want the exhaustion runs first", ps[0].Fault.Name, ps[1].Fault.Name)
			}
			for _, p := range ps {
				// The mock stamps the date when the attempt arrives.
				if p.Fault.HTTPDate && p.Scenario.Attempts[len(p.Scenario.Attempts)-1].Kind.(fault.Status).RetryAfterDate.D() != 6*time.Second {
					t.Errorf("%s: %+v, want retryAfterDate 6s", p.Fault.Name, p.Scenario.Attempts)
				}
			}
			kinds := map[string]int{}
			for _, p := range ps[2 : 2+tt.survival] {
				kinds[p.Outage]++
				if p.Served != 5 || len(p.Scenario.Attempts) != 5+btoi(p.WarmUp) || p.Fault.Name != p.Outage {
					t.Errorf("survival run %s: served %d, %d attempts, fault %s", p.Scenario.Name, p.Served, len(p.Scenario.Attempts), p.Fault.Name)
				}
			}
			if len(kinds) != 3 || kinds["529"] != tt.survival/3 || kinds["429"] != tt.survival/3 || kinds["drop"] != tt.survival/3 {
				t.Errorf("survival runs per kind %v, want %d each of 529, 429, drop", kinds, tt.survival/3)
			}
			names := map[string]bool{}
			for _, p := range ps {
				if names[p.Scenario.Name] {
					t.Errorf("scenario name %s twice", p.Scenario.Name)
				}
				names[p.Scenario.Name] = true
				if n, ok := tt.served[p.Fault.Name]; ok && p.Sample <= 1 && p.Served != n {
					t.Errorf("%s: served %d, want %d", p.Fault.Name, p.Served, n)
				}
				if n, ok := tt.attempts[p.Fault.Name]; ok && p.Sample <= 1 && len(p.Scenario.Attempts) != n {
					t.Errorf("%s: %d attempts in the scenario, want %d", p.Fault.Name, len(p.Scenario.Attempts), n)
				}
			}
		})
	}
}

// TestProviders: each wire format's battery parses as chaos scenarios;
// 529 is Anthropic's alone; the in-stream faults are in the format's own
// terms and read by the retry core as an overload and a refused request.
func TestProviders(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name              string
		has529            bool
		overload, invalid string
		wantOver, wantInv retry.FailureType
	}{
		{"anthropic", true, "sse overloaded_error", "sse invalid_request_error", retry.Overloaded, retry.StreamParse},
		{"openai", false, "sse server_error", "sse invalid_request_error", retry.ServerError, retry.StreamParse},
		{"openai-responses", false, "sse server_is_overloaded", "sse invalid_prompt", retry.Overloaded, retry.StreamParse},
		{"gemini", false, "sse UNAVAILABLE", "sse INVALID_ARGUMENT", retry.Overloaded, retry.StreamParse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prov, err := probe.LookupProvider(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := prov.Fault("529"); ok != tt.has529 {
				t.Errorf("529 probed: %v, want %v", ok, tt.has529)
			}
			var got []any
			for _, n := range []string{tt.overload, tt.invalid} {
				f, ok := prov.Fault(n)
				if !ok {
					t.Fatalf("no fault %q", n)
				}
				got = append(got, retry.Classify(&f.Err).Type)
			}
			if diff := cmp.Diff([]any{tt.wantOver, tt.wantInv}, got); diff != "" {
				t.Errorf("stream faults classified (-want +got):\n%s", diff)
			}
			ps, err := plan(Options{Provider: prov, Samples: 1, Repeat: 3}, now)
			if err != nil {
				t.Fatal(err)
			}
			if ps[0].Scenario.Provider != tt.name {
				t.Errorf("scenario provider %q, want %q", ps[0].Scenario.Provider, tt.name)
			}
		})
	}
}

// TestCeilingProbes: a round of the bisection is one probe per value, each
// the core's fault for it (probe.CeilingFault), run once, stopped inside
// --budget.
func TestCeilingProbes(t *testing.T) {
	prov, _ := probe.LookupProvider("openai")
	o := Options{Provider: prov, Budget: 2 * time.Minute}
	ps, err := ceilingProbes(o, 2, []int64{16_000, 88_000})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		if p.Round != 2 || p.Served != 1 || p.Deadline > o.Budget || p.Fault.Name != probe.CeilingFault(prov, p.Fault.RetryAfterMs).Name {
			t.Errorf("%s: round %d, served %d, deadline %s", p.Fault.Name, p.Round, p.Served, p.Deadline)
		}
		got = append(got, p.Scenario.Name)
	}
	if diff := cmp.Diff([]string{"probe-ceiling-2-16s", "probe-ceiling-2-88s"}, got); diff != "" {
		t.Errorf("scenarios (-want +got):\n%s", diff)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSurvivalProbes: the checks of a survival figure are scenarios whose
// outage: is one phase of the kind's fault alone for the check's length
// (a steady storm), with no warm-up request (the outage's clock starts at
// the first request) and no attempts: list.
func TestSurvivalProbes(t *testing.T) {
	for _, name := range probe.ProviderNames() {
		t.Run(name, func(t *testing.T) { survivalProbes(t, name) })
	}
}

func survivalProbes(t *testing.T, provName string) {
	prov, _ := probe.LookupProvider(provName)
	var plans []probe.SurvivalCheckPlan
	for _, k := range probe.OutageKinds(prov) {
		plans = append(plans, probe.SurvivalCheckPlan{Kind: k, Side: probe.CheckLonger, OutageMs: 34500, Deadline: time.Minute})
	}
	ps, err := checkProbes(Options{Provider: prov, Model: prov.Model}, plans)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, p := range ps {
		names = append(names, p.Scenario.Name)
		sc := p.Scenario
		o := sc.Outage
		if p.WarmUp || sc.Requests != 1 || len(sc.Attempts) != 0 || o == nil || len(o.Phases) != 1 || o.Total() != 34500*time.Millisecond ||
			len(o.Phases[0].Mix) != 1 || p.Outage != plans[i].Kind.Key || p.Check != probe.CheckLonger || p.OutageMs != 34500 {
			t.Errorf("%s: %+v", sc.Name, p)
			continue
		}
		// The mix's fault is the kind's, as its attempt would be.
		want, err := scenario(Options{Provider: prov, Model: "m", NoWarmUp: true}, "x", []string{plans[i].Kind.Fault.Attempt}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if got, w := o.Phases[0].Mix[0].Fault.Kind, want.Attempts[0].Kind; !cmp.Equal(got, w) {
			t.Errorf("%s: mix fault %+v, want %+v", sc.Name, got, w)
		}
	}
	overload := "529"
	if provName != "anthropic" {
		overload = "503"
	}
	if diff := cmp.Diff([]string{"probe-check-" + overload + "-longer", "probe-check-429-longer", "probe-check-drop-longer"}, names); diff != "" {
		t.Errorf("scenarios (-want +got):\n%s", diff)
	}
}
