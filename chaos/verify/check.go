package verify

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// Check is one verified expectation of a scenario. A failed check says what
// was expected (Want), what was seen (Got) and where it was seen (Where:
// the run file and the attempt).
//
// State is one of four: pass; fail; inconclusive (a timing check whose
// tolerance, after every widening for the noise measured around a gap, no
// longer tells the expected wait from a plausibly wrong one: no verdict);
// unverified (what the check asks about could not be seen, e.g. how a client
// that writes no trace classified its failures; Got says what was seen).
// Passed is true for pass alone.
type Check struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	State  string `json:"state"`
	Want   string `json:"want"`
	Got    string `json:"got"`
	Where  string `json:"where,omitempty"`
	Hint   string `json:"hint,omitempty"`
	// Line is the YAML line of the expectation the check verifies in the
	// scenario file (Scenario.ExpectLine), 0 when unknown.
	Line int `json:"line,omitempty"`
}

// Check states.
const (
	StatePass         = "pass"
	StateFail         = "fail"
	StateInconclusive = "inconclusive"
	StateUnverified   = "unverified"
)

// Timing reports whether the check measures wall-clock time, which a busy
// machine can disturb: such checks are re-run to confirm a failure. The
// findings check counts: several findings rest on measured waits, and a
// finding is not raised where the noise measured around a wait hides it.
// The fleet check counts: synchrony is measured on arrivals.
func (c Check) Timing() bool {
	return c.Name == "delays.server" || c.Name == "maxDuration" || c.Name == "findings" || c.Name == "fleet"
}

// StallChecks makes the failed checks of a run inconclusive when the
// machine stalled while the client ran into its deadline: the probe saw
// retrylab's own timers fire late by late, at least a second and a
// twentieth of the deadline. A client starved of CPU for that long may
// miss its deadline, make fewer attempts and wait longer than its policy
// says through no fault of its own, so those failures say nothing of the
// client; they are re-run (--confirm) like timing failures, and a failure
// counts when it reproduces. The checks of the run itself (journal, trace)
// stay as they are. It reports whether it applied.
func StallChecks(cs []Check, killed bool, late, deadline time.Duration) bool {
	if !killed || late < max(time.Second, deadline/20) {
		return false
	}
	for i := range cs {
		c := &cs[i]
		failed := c.State == StateFail || (c.State == "" && !c.Passed)
		if !failed || c.Name == "journal" || c.Name == "trace" {
			continue
		}
		c.State, c.Passed = StateInconclusive, false
		c.Hint = fmt.Sprintf("the machine stalled: retrylab's own timers fired up to %s late while the client ran into its deadline, so it may have had no CPU to retry in time; lower --parallel, or stop what else loads the machine", fmtDur(late))
	}
	return true
}

// Settle fills in State from Passed where a check did not set it, and
// Passed from State.
func Settle(cs []Check) []Check {
	for i := range cs {
		c := &cs[i]
		if c.State == "" {
			c.State = StateFail
			if c.Passed {
				c.State = StatePass
			}
		}
		c.Passed = c.State == StatePass
	}
	return cs
}

// Evaluate runs every check the scenario's expect block asks for, in a fixed
// order: client, outcome, attempts, failureTypes, delays.client,
// delays.server, escalations, maxDuration, prompts, and selfReport when the
// client sent telemetry or expect.selfReport asks for it. env may be nil when
// expect.delays is not "policy". A client stopped at its deadline while
// still retrying (Observed.SettleOutcome) in a scenario that expects an
// outcome is judged by the outcome check alone (KillIsOutcome): no client
// check, and no maxDuration check, whose limit is where it was stopped.
func Evaluate(sc *scenario.Scenario, ob Observed, env EnvelopeFunc) []Check {
	var cs []Check
	ex := sc.Expect
	if ob.Client != nil && ob.Client.Problem != "" && !KillIsOutcome(ex.Outcome, ob) {
		cs = append(cs, Check{Name: "client", Want: "the client exits by itself", Got: ob.Client.Problem,
			Where: "stderr.txt (" + ob.Client.Command + ")"})
	}
	if ex.Outcome != "" {
		cs = append(cs, outcomeCheck(ex.Outcome, ob))
	}
	if ex.Attempts != nil {
		cs = append(cs, Check{Name: "attempts", Passed: ob.ServerAttempts == *ex.Attempts,
			Want: fmt.Sprint(*ex.Attempts), Got: fmt.Sprint(ob.ServerAttempts),
			Where: "server.jsonl: " + faultList(ob.ServerFaults)})
	}
	if ex.FailureTypes != nil {
		got, where := ob.FailureTypes()
		c := Check{Name: "failureTypes", Passed: equalStrings(ex.FailureTypes, got),
			Want: list(ex.FailureTypes), Got: list(got), Where: where}
		if c.Passed && !ob.ClientTrace {
			verifyFromSelfReport(&c, ex.FailureTypes, ob)
		}
		if !c.Passed {
			for i := 0; i < max(len(got), len(ex.FailureTypes)); i++ {
				if i >= len(got) || i >= len(ex.FailureTypes) || got[i] != ex.FailureTypes[i] {
					c.Where = fmt.Sprintf("%s, failed attempt %d", where, i+1)
					break
				}
			}
		}
		cs = append(cs, c)
	}
	if ex.Delays.Set {
		cs = append(cs, delayChecks(sc, ob, env)...)
	}
	if ex.Escalations != nil {
		cs = append(cs, escalationCheck(ex.Escalations, ob))
	}
	if ex.MaxDuration > 0 && ex.Outcome != OutcomeStillRetrying && !KillIsOutcome(ex.Outcome, ob) {
		// Under still_retrying, maxDuration is where the scenario ends; a
		// client stopped there overruns it, which the outcome check says.
		cs = append(cs, maxDurationCheck(ex.MaxDuration.D(), ob))
	}
	if ex.Output != nil {
		cs = append(cs, outputCheck(*ex.Output, ob))
	}
	if ex.Findings != nil {
		cs = append(cs, FindingsCheck(*ex.Findings, Findings(ob, sc)))
	}
	for _, pe := range ex.Prompts {
		cs = append(cs, promptCheck(pe, ob))
	}
	switch {
	case ob.SelfReport != nil:
		cs = append(cs, SelfReportCheck(ob))
	case ex.SelfReport:
		cs = append(cs, noSelfReport(ob.Telemetry))
	}
	for i := range cs {
		cs[i].Line = sc.ExpectLine(cs[i].Name)
	}
	hintMixedAttempts(cs, sc, ob)
	hintUnserved(cs, ob)
	return Settle(cs)
}

// maxDurationCheck compares the scenario's duration in policy time with max:
// expectations are written in policy time (DESIGN.md), so with timeScale 0.05
// a 6s schedule must not pass "maxDuration: 3s" because it took 300ms of
// wall clock. Policy time is the wall clock with each wait put back at its
// policy length: the client's recorded waits when it wrote a trace (as
// ProviderRequestFinished.durationMs does), else the server's gaps ÷ timeScale.
func maxDurationCheck(max time.Duration, ob Observed) Check {
	scale := ob.TimeScale
	if scale <= 0 {
		scale = 1
	}
	d := ob.Duration
	if ob.ClientTrace {
		for _, w := range ob.ClientWaits() {
			d += w.Delay - scaleDur(w.Delay, scale)
		}
	} else {
		for _, w := range ob.ServerWaits {
			d += time.Duration(float64(w.Gap)/scale) - w.Gap
		}
	}
	c := Check{Name: "maxDuration", Passed: d <= max, Want: "<= " + fmtDur(max), Got: fmtDur(d),
		Where: "the whole scenario, in policy time"}
	if scale != 1 {
		c.Where = fmt.Sprintf("the whole scenario, in policy time (%s wall clock, waits × 1/timeScale %g)", fmtDur(ob.Duration), scale)
	}
	return c
}

func outcomeWhere(ob Observed) string {
	if ob.Client != nil {
		return fmt.Sprintf("exit code %d of %s", ob.Client.ExitCode, ob.Client.Command)
	}
	return "trace.jsonl: ProviderRequestFinished.success"
}

func (ob Observed) FailureTypes() ([]string, string) {
	if ob.ClientTrace {
		got := make([]string, 0, len(ob.Retries))
		for _, r := range ob.Retries {
			got = append(got, r.FailureType)
		}
		return got, "trace.jsonl: RetryAttempt.failureType"
	}
	got := ob.InferredTypes
	if got == nil {
		got = []string{}
	}
	return got, "server.jsonl: failure types the faults imply (the client wrote no trace)"
}

// WarningPrefix starts the hint of a check that passed with a warning: the
// scenario's own tolerance is so wide that a wrong wait would pass too.
const WarningPrefix = "warning: "

// Warning reports whether the check passed with a warning (its Hint).
func (c Check) Warning() bool {
	return c.State == StatePass && strings.HasPrefix(c.Hint, WarningPrefix)
}

// shouldRetryHeaders maps a fault's index to the x-should-retry value its
// response carried, for the faults that carry one.
func shouldRetryHeaders(sc *scenario.Scenario) map[int]bool {
	m := map[int]bool{}
	for i, f := range sc.Attempts {
		he, ok := f.Kind.(fault.HTTPError)
		if !ok {
			continue
		}
		for h, vs := range he.ResponseHeaders(fault.Met{}) {
			v := strings.Join(vs, "")
			if strings.EqualFold(h, "x-should-retry") {
				m[i] = strings.EqualFold(strings.TrimSpace(v), "true")
			}
		}
	}
	return m
}

func escalationCheck(want []scenario.Escalation, ob Observed) Check {
	var ws, gs []string
	for _, e := range want {
		w := escString(e.From, e.To, e.Reason)
		if e.Attempt > 0 {
			w += fmt.Sprintf(" at attempt %d", e.Attempt)
		}
		ws = append(ws, w)
	}
	if ob.EscalationsFromServer || (!ob.ClientTrace && len(ob.Escalations) == 0) {
		return serverEscalationCheck(want, ws, ob)
	}
	pass := len(want) == len(ob.Escalations)
	where := "trace.jsonl: RunEscalated"
	for i, g := range ob.Escalations {
		reason := ""
		if i < len(want) && want[i].Reason != "" {
			reason = g.Reason
		}
		gs = append(gs, escString(g.From, g.To, reason))
		if i < len(want) && (g.From != want[i].From || g.To != want[i].To || (want[i].Reason != "" && g.Reason != want[i].Reason)) {
			if pass {
				where = fmt.Sprintf("trace.jsonl: RunEscalated #%d", i+1)
			}
			pass = false
		}
	}
	return Check{Name: "escalations", Passed: pass, Want: orNone(strings.Join(ws, ", ")), Got: orNone(strings.Join(gs, ", ")), Where: where}
}

// serverEscalationCheck checks the escalations of a client without a
// trace against the model switches the journal saw (addModelSwitches):
// from, to and, when expected, the attempt. The journal cannot tell a
// reason, so an expected reason is not checked (the where says so).
func serverEscalationCheck(want []scenario.Escalation, ws []string, ob Observed) Check {
	var gs []string
	pass := len(want) == len(ob.Escalations)
	where := "server.jsonl: the model each attempt asked for"
	if len(ob.Escalations) == 0 {
		where += ": one model throughout each request"
	}
	for i, g := range ob.Escalations {
		at := ob.ModelSwitches[i]
		gs = append(gs, fmt.Sprintf("%s at attempt %d", escString(g.From, g.To, ""), at))
		if i >= len(want) {
			continue
		}
		w := want[i]
		if g.From != w.From || g.To != w.To || (w.Attempt > 0 && at != w.Attempt) {
			if pass {
				where = fmt.Sprintf("server.jsonl: attempt %d asked for %s after %s", at, g.To, g.From)
			}
			pass = false
		}
	}
	if slices.ContainsFunc(want, func(e scenario.Escalation) bool { return e.Reason != "" }) {
		where += " (the client wrote no trace: reasons are not checked)"
	}
	return Check{Name: "escalations", Passed: pass, Want: orNone(strings.Join(ws, ", ")), Got: orNone(strings.Join(gs, ", ")), Where: where}
}

func escString(from, to, reason string) string {
	s := from + " → " + to
	if reason != "" {
		s += " (" + reason + ")"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func faultList(fs []string) string {
	if len(fs) == 0 {
		return "no attempts"
	}
	return strings.Join(fs, ", ")
}

func durList(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmtDur(d)
	}
	return strings.Join(s, ", ")
}

// fmtDur prints d rounded to the millisecond.
func fmtDur(d time.Duration) string { return d.Round(time.Millisecond).String() }

func envString(lo, hi time.Duration, ok bool) string {
	if !ok {
		return "no retry"
	}
	if lo == hi {
		return fmtDur(lo)
	}
	return "[" + fmtDur(lo) + ", " + fmtDur(hi) + "]"
}

// promptCheck checks one expect.prompts entry against the prompt the server
// saw on that attempt. Got quotes the prompt (cut to 300 bytes) or says the
// attempt never came.
func promptCheck(pe scenario.PromptExpect, ob Observed) Check {
	var want []string
	for _, c := range pe.Contains {
		want = append(want, "contains "+strconv.Quote(c))
	}
	for _, c := range pe.NotContains {
		want = append(want, "does not contain "+strconv.Quote(c))
	}
	c := Check{Name: fmt.Sprintf("prompts[attempt %d]", pe.Attempt), Want: strings.Join(want, ", "),
		Where: fmt.Sprintf("server.jsonl: MockRequest attempt %d, prompt", pe.Attempt)}
	if pe.Attempt < 1 || pe.Attempt > len(ob.Prompts) {
		c.Got = fmt.Sprintf("no attempt %d (the server saw %d)", pe.Attempt, len(ob.Prompts))
		return c
	}
	got := ob.Prompts[pe.Attempt-1]
	c.Passed = true
	var missing []string
	for _, s := range pe.Contains {
		if !strings.Contains(got, s) {
			c.Passed = false
			missing = append(missing, "lacks "+strconv.Quote(s))
		}
	}
	for _, s := range pe.NotContains {
		if strings.Contains(got, s) {
			c.Passed = false
			missing = append(missing, "holds "+strconv.Quote(s))
		}
	}
	c.Got = strconv.Quote(scenario.Excerpt(got, 300))
	if got == "" {
		c.Got = "an empty prompt (no user message text in the request body)"
	}
	if len(missing) > 0 {
		c.Got = strings.Join(missing, ", ") + ": " + c.Got
	}
	return c
}
