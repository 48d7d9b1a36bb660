package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/fleet"
	"github.com/retrylab/retrylab/chaos/verify"
)

// A fleet's scenario draws its chart: a stacked bar per step by outcome,
// the outage phase shaded, the limit across, its figures in words; a
// scenario of one client draws none.
func TestPageFleetChart(t *testing.T) {
	t.Parallel()
	sync, rec := 0.95, int64(5600)
	r := chaos.Result{Name: "lockstep <fleet>", Verdict: chaos.VerdictPass, Passed: true, Outcome: "success", TimeScale: 0.5,
		Checks: []verify.Check{}, Attempts: 5,
		Fleet: &fleet.Figures{Clients: 2, Survived: 2, Requests: 2, Attempts: 5, Amplification: 2.5, Synchrony: &sync, Status529: 3, RecoveryMs: &rec},
		FleetTimeline: &chaos.FleetTimeline{StepMs: 1000, LimitPerStep: 4, Phases: []chaos.FleetPhaseSpan{{FromMs: 0, ToMs: 2000}},
			Buckets: []chaos.FleetBucket{
				{AtMs: 0, Counts: map[string]int{fleet.ClassOverloaded: 2}},
				{AtMs: 1000, Counts: map[string]int{fleet.ClassOverloaded: 1, fleet.ClassRateLimit: 1}},
				{AtMs: 2000, Counts: map[string]int{fleet.ClassOK: 2}},
			}}}
	one := chaos.Result{Name: "single", Verdict: chaos.VerdictPass, Passed: true, Checks: []verify.Check{}, Attempts: 1}
	var b bytes.Buffer
	if err := PageHTML(&b, Page{Runs: []*chaos.Summary{{RunDir: "runs/x", Scenarios: []chaos.Result{r, one}}}}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, `class="fleet-chart"`); n != 1 {
		t.Errorf("%d fleet charts, want 1 (the single client draws none)", n)
	}
	bars := regexp.MustCompile(`<rect class="fc-(\w+)" x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)">`).FindAllStringSubmatch(page, -1)
	var classes []string
	for _, m := range bars {
		classes = append(classes, m[1])
	}
	if got, want := strings.Join(classes, " "), "overloaded rateLimited overloaded ok"; got != want {
		t.Errorf("bars %q, want %q (stacked in class order, step by step)", got, want)
	}
	for _, w := range []string{
		`<rect class="outage-phase" x="60" y="10" width="453" height="170"><title>outage phase 0ms–2000ms</title>`,
		`request limit: 4 per 1s`,
		`Fleet: 2 of 2 clients survived; 5 attempts for 2 requests (amplification 2.50); synchrony 0.95; 0×429, 3×529`,
		`recovered 5600ms after the outage`,
		`lockstep &lt;fleet&gt;`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}
