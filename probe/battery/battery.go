package battery

import (
	"fmt"
	"slices"
	"strings"
	"time"

	chaosscenario "github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/probe"
)

// Options are what a probe is asked to do.
type Options struct {
	Provider probe.Provider
	Model    string // default: the provider's
	// Samples is how many times the exhaustion runs (in parallel): the
	// jitter band and the backoff fit come from them. Default 4.
	Samples int
	// Repeat is how many attempts the exhaustion fault answers before ok:
	// a client that retries more is reported as "at least Repeat". Default 10.
	Repeat int
	// Budget bounds the wall time of each exhaustion run (its kill
	// deadline); LongDeadline that of the hang and large Retry-After
	// probes (default min(Budget, 15s)). Default Budget: 2 minutes.
	Budget, LongDeadline time.Duration
	// TimeScale is told to the client (RETRYLAB_TIME_SCALE); every wait
	// is divided by it, so a client that scales its waits is profiled in
	// its own policy time. Default 1.
	TimeScale float64
	// PerFault serves every decision fault Repeat times, not once (the
	// hang and the large Retry-After excepted), so that each fault's own
	// retry limit shows (a client with a limit per failure type): slower,
	// as each probe is then an exhaustion of its own.
	PerFault bool
	// NoWarmUp turns off the warm-up request: by default the client is
	// told to make two requests (RETRYLAB_REQUESTS=2) and the first is
	// answered ok, so that the probed request meets a client that has
	// started (a Node client's first request is late by its compiler).
	NoWarmUp bool
	// Only limits the decision probes to these fault names (empty: all).
	Only []string
	// StartGrace, when above 0, makes every deadline (Budget,
	// LongDeadline, a ceiling probe's) count from the client's first
	// request at the mock, not from its start (chaos.Runner.StartGrace):
	// a slow agent's start-up is not taken from the hang probe's 15s. A
	// client that sends no request within StartGrace is stopped then. 0:
	// deadlines count from the start (the CLI's default is
	// DefaultStartGrace).
	StartGrace time.Duration
	// CeilingRounds is how many rounds bisect the Retry-After ceiling
	// after the battery (probe.NextCeilingRound), each of
	// probe.CeilingPoints probes in parallel, each waiting up to the value
	// it probes; 0 turns it off (the CLI's default is DefaultCeilingRounds).
	CeilingRounds int
}

// DefaultStartGrace is chaos probe's --start-grace: how long a client may
// take to send its first request before its deadline starts counting.
const DefaultStartGrace = 30 * time.Second

// DefaultCeilingRounds is chaos probe's --ceiling-rounds: the rounds
// bisecting the Retry-After ceiling.
const DefaultCeilingRounds = 3

const (
	defaultSamples = 4
	defaultRepeat  = 10
	defaultBudget  = 2 * time.Minute
)

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
	if o.Model == "" {
		o.Model = o.Provider.Model
	}
	if o.Samples <= 0 {
		o.Samples = defaultSamples
	}
	if o.Repeat <= 0 {
		o.Repeat = defaultRepeat
	}
	if o.Budget <= 0 {
		o.Budget = defaultBudget
	}
	if o.LongDeadline <= 0 {
		o.LongDeadline = min(o.Budget, probe.MaxLongDeadline)
	}
	if o.TimeScale <= 0 {
		o.TimeScale = 1
	}
	return o
}

// Probe is one scenario of the battery and what it probes.
type Probe struct {
	Fault    probe.Fault
	WarmUp   bool // the first attempt is the warm-up request's
	Sample   int  // 1-based sample of the exhaustion; 0 for a decision probe
	Served   int  // attempts that meet the fault before ok
	Deadline time.Duration
	// Round is the bisection round of a Retry-After ceiling probe (0: not one).
	Round int
	// Outage is the steady outage kind (probe.OutageKinds) a run of its
	// own measures the survival of, or checks (Check: the side, OutageMs
	// the outage's length, policy ms); "" for the other probes.
	Outage   string
	Check    string
	OutageMs int64
	Scenario *chaosscenario.Scenario
}

// plan builds the battery: one scenario per decision fault (the fault once,
// then ok), Samples exhaustion runs (the exhaustion fault Repeat times,
// then ok) and the survival runs of each steady outage kind (survival.go). now is when the battery is built; an HTTP-date Retry-After is
// stamped by the mock when its attempt arrives, not relative to now.
func plan(o Options, now time.Time) ([]Probe, error) {
	o = o.withDefaults()
	var ps []Probe
	for _, f := range o.Provider.Faults {
		if len(o.Only) > 0 && !contains(o.Only, f.Name) {
			continue
		}
		p := Probe{Fault: f, Served: 1, Deadline: o.Budget, WarmUp: !o.NoWarmUp}
		if f.Long {
			p.Deadline = o.LongDeadline
		}
		attempt := f.Attempt
		if f.HTTPDate {
			// Stamped by the mock when the attempt arrives: a date fixed
			// here went stale in a scenario queued behind others, or behind
			// a slow client's start-up.
			attempt = fmt.Sprintf(`{status: 429, retryAfterDate: %s}`, time.Duration(f.RetryAfterMs)*time.Millisecond)
		}
		attempts := []string{attempt}
		if o.PerFault && !f.Long {
			p.Served = o.Repeat
			attempts = slices.Repeat(attempts, o.Repeat)
		}
		sc, err := scenario(o, slug(f.Name), attempts, p.Deadline)
		if err != nil {
			return nil, err
		}
		p.Scenario = sc
		ps = append(ps, p)
	}
	// The exhaustion runs first: chaos starts scenarios about in order,
	// and they are the longest.
	exh, err := exhaustion(o, 1)
	if err != nil {
		return nil, err
	}
	surv, err := survivalRuns(o)
	if err != nil {
		return nil, err
	}
	return slices.Concat(exh, surv, ps), nil
}

// exhaustion builds the Samples exhaustion runs.
// Their samples are numbered from first.
func exhaustion(o Options, first int) ([]Probe, error) {
	var ps []Probe
	for s := first; s < first+o.Samples; s++ {
		f := o.Provider.Exhaust
		attempts := make([]string, o.Repeat)
		for i := range attempts {
			attempts[i] = f.Attempt
		}
		sc, err := scenario(o, fmt.Sprintf("exhaust-%d", s), attempts, o.Budget)
		if err != nil {
			return nil, err
		}
		ps = append(ps, Probe{Fault: f, Sample: s, Served: o.Repeat, Deadline: o.Budget, Scenario: sc, WarmUp: !o.NoWarmUp})
	}
	return ps, nil
}

// scenario writes a chaos scenario and loads it with scenario.ParseScenario,
// so the probe's scenarios are checked as a user's file would be.
func scenario(o Options, name string, attempts []string, deadline time.Duration) (*chaosscenario.Scenario, error) {
	var b strings.Builder
	requests := 2
	if o.NoWarmUp {
		requests = 1
	}
	fmt.Fprintf(&b, "name: probe-%s\nprovider: %s\nmodel: %s\nrequests: %d\nattempts:\n", name, o.Provider.Name, o.Model, requests)
	if !o.NoWarmUp {
		b.WriteString("  - {ok: {}}\n")
	}
	// The harness splits attempts into requests with the scenario's policy
	// (a failure the policy does not retry ends a request, and the gap
	// after it is not a wait); the probe knows nothing of the client's, so
	// it says every failure is retried: only a success ends a request.
	pre := "client:\n  policy: {streamErrors: true, all: {retry: true, maxRetries: 1000}}\n"
	for _, a := range attempts {
		fmt.Fprintf(&b, "  - %s\n", a)
	}
	fmt.Fprintf(&b, "%sexpect:\n  maxDuration: %s\n", pre, deadline)
	sc, err := chaosscenario.ParseScenario("probe-"+name+".yaml", []byte(b.String()))
	if err != nil {
		return nil, fmt.Errorf("probe scenario %s: %w", name, err)
	}
	return sc, nil
}

// slug makes a fault name a scenario name: "429 retry-after 3" → "429-retry-after-3".
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '_' {
			return '-'
		}
		return r
	}, s)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ceilingProbes builds one round of the bisection: a 429 with each
// Retry-After value (whole seconds), once, then ok.
func ceilingProbes(o Options, round int, values []int64) ([]Probe, error) {
	o = o.withDefaults()
	var ps []Probe
	for _, v := range values {
		f := probe.CeilingFault(o.Provider, v)
		dl := probe.CeilingDeadline(v, o.TimeScale, o.Budget)
		sc, err := scenario(o, fmt.Sprintf("ceiling-%d-%ds", round, v/1000), []string{f.Attempt}, dl)
		if err != nil {
			return nil, err
		}
		ps = append(ps, Probe{Fault: f, Served: 1, Deadline: dl, Round: round, Scenario: sc, WarmUp: !o.NoWarmUp})
	}
	return ps, nil
}
