package battery

import (
	"fmt"
	"slices"
	"strings"
	"time"

	chaosscenario "github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/probe"
)

// survivalRuns are the runs that measure how long a steady outage of
// each kind the client survives (probe/survival.go), run with the
// battery: probe.SurvivalSamples exhaustion runs per kind, the kind's
// fault served Repeat times, then ok. A kind the exhaustion runs already
// serve (the 503 of the formats without 529) gets none, and with
// --per-fault the kind's decision probe is one of its runs.
func survivalRuns(o Options) ([]Probe, error) {
	var ps []Probe
	for _, k := range probe.OutageKinds(o.Provider) {
		if k.FromExhaustion || len(o.Only) > 0 && !contains(o.Only, k.Fault.Name) {
			continue
		}
		n := probe.SurvivalSamples
		if o.PerFault && !k.Fault.Long {
			n--
		}
		for s := 1; s <= n; s++ {
			sc, err := scenario(o, fmt.Sprintf("survive-%s-%d", slug(k.Key), s), slices.Repeat([]string{k.Fault.Attempt}, o.Repeat), o.Budget)
			if err != nil {
				return nil, err
			}
			ps = append(ps, Probe{Fault: k.Fault, Sample: s, Served: o.Repeat, Deadline: o.Budget, Scenario: sc,
				WarmUp: !o.NoWarmUp, Outage: k.Key})
		}
	}
	return ps, nil
}

// checkProbes are the outages that check the survival figures
// (probe.SurvivalChecks): one scenario each, its outage: block a single
// phase of the kind's fault alone (a steady storm) as long as the check
// says, then ok. They run without the warm-up request: the outage's clock
// starts at the first request's arrival, which must be the probed one.
func checkProbes(o Options, plans []probe.SurvivalCheckPlan) ([]Probe, error) {
	o.NoWarmUp = true
	var ps []Probe
	for _, c := range plans {
		name := fmt.Sprintf("check-%s-%s", slug(c.Kind.Key), c.Side)
		sc, err := outageScenario(o, name, c.Kind.Fault.Attempt, c.OutageMs, c.Deadline)
		if err != nil {
			return nil, err
		}
		ps = append(ps, Probe{Fault: c.Kind.Fault, Served: 0, Deadline: c.Deadline, Scenario: sc,
			Outage: c.Kind.Key, Check: c.Side, OutageMs: c.OutageMs})
	}
	return ps, nil
}

// outageScenario writes a probe scenario whose attempts meet a steady
// outage of attempt (a YAML flow mapping, "{status: 529}") for ms of
// policy time, then ok; loaded with scenario.ParseScenario as a user's
// file would be.
func outageScenario(o Options, name, attempt string, ms int64, deadline time.Duration) (*chaosscenario.Scenario, error) {
	inner := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(attempt), "{"), "}")
	var b strings.Builder
	fmt.Fprintf(&b, "name: probe-%s\nprovider: %s\nmodel: %s\nrequests: 1\n", name, o.Provider.Name, o.Model)
	fmt.Fprintf(&b, "outage:\n  phases:\n    - for: %dms\n      mix:\n        - {weight: 1, %s}\n", ms, inner)
	b.WriteString("client:\n  policy: {streamErrors: true, all: {retry: true, maxRetries: 1000}}\n")
	fmt.Fprintf(&b, "expect:\n  maxDuration: %s\n", deadline)
	sc, err := chaosscenario.ParseScenario("probe-"+name+".yaml", []byte(b.String()))
	if err != nil {
		return nil, fmt.Errorf("probe scenario %s: %w", name, err)
	}
	return sc, nil
}

// survivalChecks plans the checks of prof's survival figures: the probes,
// and why a side is not run (probe.SurvivalChecks).
func (r *Runner) survivalChecks(o Options, prof *probe.Profile) ([]Probe, map[string]string) {
	plans, why := probe.SurvivalChecks(prof, o.Provider, o.Budget, o.TimeScale)
	ps, err := checkProbes(o, plans)
	if err != nil {
		for _, k := range probe.OutageKinds(o.Provider) {
			why[k.Key] = "checks not run: " + err.Error()
		}
		return nil, why
	}
	if len(ps) > 0 {
		var say []string
		for _, p := range ps {
			say = append(say, fmt.Sprintf("%s %s", p.Outage, probe.FormatDur(p.OutageMs)))
		}
		r.progressf("checking the survival figures with steady outages of %s\n", strings.Join(say, ", "))
	}
	return ps, why
}
