package verify

import (
	"slices"
	"testing"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/trace"
)

// TestMetOutage: for a client without a trace, the checks infer each
// attempt's failure and its wait from the fault it met. With an outage
// that is the journal's draw (Met), not the attempts: list, which an
// outage may leave empty: the failure types and the server-side waits of
// the core's run against an outage's draws hold only through Met.
func TestMetOutage(t *testing.T) {
	ra := "5"
	drawn := []scenario.Fault{
		{Kind: fault.Status{Status: 429, RetryAfter: &ra}},
		{Kind: fault.Status{Status: 529}},
		{Kind: fault.Status{Status: 503}},
	}
	// The core's run against the faults the attempts drew.
	listed := &scenario.Scenario{Name: "outage", Provider: "anthropic", Model: "m", Attempts: drawn}
	if err := listed.Client.Policy.Encode("forgeflare"); err != nil {
		t.Fatal(err)
	}
	pol, err := scenario.PolicyFor(listed)
	if err != nil {
		t.Fatal(err)
	}
	run := runCore(t, listed, pol, 1)
	// The same run as the mock journals it for a scenario with an outage
	// whose one phase mixes the three faults: attempt k drew entry k, the
	// 4th came past the phase (ok).
	mix := []scenario.MixEntry{{Weight: 1, Fault: drawn[0]}, {Weight: 1, Fault: drawn[1]}, {Weight: 1, Fault: drawn[2]}}
	sc := &scenario.Scenario{Name: "outage", Provider: "anthropic", Model: "m", Client: listed.Client,
		Outage: &scenario.Outage{Phases: []scenario.Phase{{For: 1, Mix: mix}}}}
	sc.Expect.Delays.Policy, sc.Expect.Delays.Set = true, true
	journal := slices.Clone(run.journal)
	for k := range journal {
		d := &trace.OutageDraw{Phase: 1, Entry: k + 1}
		if k >= len(drawn) {
			d = &trace.OutageDraw{}
		}
		journal[k].Outage = d
	}
	if len(journal) != 4 || run.outcome != "success" {
		t.Fatalf("core run: %d attempts, %s", len(journal), run.outcome)
	}

	met := Met(sc, journal)
	if met.Outage != nil || len(met.Attempts) != 4 || met.Attempts[0].Name() != "status" || met.Attempts[3].Name() != "ok" {
		t.Fatalf("Met = %+v", met.Attempts)
	}
	ob, _ := Observe(met, journal, "", 1)
	ob.Outcome = run.outcome
	if got, _ := ob.FailureTypes(); !slices.Equal(got, []string{"rate_limit", "overloaded", "overloaded"}) {
		t.Errorf("failure types from what the attempts met = %q", got)
	}
	if c := delaysCheck(t, met, ob, "delays.server"); c.State == StateFail {
		t.Errorf("delays.server fails the core against its draws\nwant: %s\ngot:  %s", c.Want, c.Got)
	}
	// Without Met the checks would read an empty attempts: list.
	bare, _ := Observe(sc, journal, "", 1)
	if got, _ := bare.FailureTypes(); slices.Equal(got, []string{"rate_limit", "overloaded", "overloaded"}) {
		t.Errorf("the test does not tell Met from the attempts: list: %q", got)
	}
	bare.Outcome = run.outcome
	if c := delaysCheck(t, sc, bare, "delays.server"); c.State != StateFail {
		t.Errorf("delays.server against the attempts: list = %s (%s), want fail: the core waited 5s for a Retry-After", c.State, c.Got)
	}
	if Met(listed, journal) != listed {
		t.Error("Met changed a scenario without an outage")
	}
}
