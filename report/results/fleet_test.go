package results

import (
	"bytes"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/fleet"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
)

// A fleet's figures are in every output format: a line after the table,
// a Markdown table, JUnit properties; null figures are said as such.
func TestFleetOutputs(t *testing.T) {
	t.Parallel()
	sync, rec := 0.95, int64(5600)
	f := &fleet.Figures{Clients: 10, Survived: 9, Requests: 10, Attempts: 30, Amplification: 3, Synchrony: &sync,
		Status529: 20, GoodputPerMin: 89.108, RecoveryMs: &rec, WastedOutputTokens: 144}
	s := &chaos.Summary{RunDir: "runs/x", Seed: 1, Scenarios: []chaos.Result{
		{Name: "lockstep", File: "scenarios/fleet/lockstep.yaml", Passed: true, Verdict: chaos.VerdictPass, Outcome: "success", Attempts: 30,
			FailureTypes: []string{}, Escalations: []scenario.Escalation{}, Checks: []verify.Check{{Name: "fleet", Passed: true, State: verify.StatePass}},
			Client: "built-in", Fleet: f},
		{Name: "spread", Passed: true, Verdict: chaos.VerdictPass, Outcome: "success", Attempts: 3, FailureTypes: []string{},
			Escalations: []scenario.Escalation{}, Checks: []verify.Check{}, Client: "built-in",
			Fleet: &fleet.Figures{Clients: 3, Survived: 3, Requests: 3, Attempts: 3, Amplification: 1}},
	}}
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
		want   []string
	}{
		{"table", func(b *bytes.Buffer) error { return Table(b, s) }, []string{
			"lockstep: 9/10 clients survived, 30 attempts for 10 requests (amplification 3), synchrony 0.95, 0×429 20×529, goodput 89.11/min, recovered 5.6s after the outage, 144 output tokens wasted",
			"spread: 3/3 clients survived, 3 attempts for 3 requests (amplification 1), synchrony - (no retries)",
			"no recovery measured"}},
		{"markdown", func(b *bytes.Buffer) error { return Markdown(b, s) }, []string{
			"### Fleets", "| lockstep | 10 | 9 | 10 | 30 | 3 | 0.95 | 0 | 20 | 89.11 | 5600ms | 144 |", "| spread | 3 | 3 | 3 | 3 | 1 | - (no retries) |"}},
		{"junit", func(b *bytes.Buffer) error { return JUnit(b, s) }, []string{
			`<property name="fleet.clients" value="10">`, `<property name="fleet.synchrony" value="0.95">`,
			`<property name="fleet.recoveryMs" value="5600">`, `<property name="fleet.wastedOutputTokens" value="144">`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.render(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("%s output lacks %q:\n%s", tc.name, w, b.String())
				}
			}
		})
	}
}
