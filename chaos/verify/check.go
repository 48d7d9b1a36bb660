package verify

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/trace"
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
// machine can disturb: such checks are re-run to confirm a failure.
func (c Check) Timing() bool { return c.Name == "delays.server" || c.Name == "maxDuration" }

// stallChecks makes the failed checks of a run inconclusive when the
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

// settle fills in State from Passed where a check did not set it, and
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

// envelopeFunc returns the range of waits a policy allows after attempt
// (1-based) failed with failure type ft; ok is false when the policy does
// not retry.
type envelopeFunc func(ft string, attempt int, retryAfter time.Duration, hasRetryAfter bool) (lo, hi time.Duration, ok bool)

// evaluate runs every check the scenario's expect block asks for, in a fixed
// order: client, outcome, attempts, failureTypes, delays.client,
// delays.server, escalations, maxDuration, prompts, and selfReport when the
// client sent telemetry or expect.selfReport asks for it. env may be nil when
// expect.delays is not "policy".
func Evaluate(sc *scenario.Scenario, ob Observed, env envelopeFunc) []Check {
	var cs []Check
	ex := sc.Expect
	if ob.Client != nil && ob.Client.Problem != "" {
		cs = append(cs, Check{Name: "client", Want: "the client exits by itself", Got: ob.Client.Problem,
			Where: "stderr.txt (" + ob.Client.Command + ")"})
	}
	if ex.Outcome != "" {
		cs = append(cs, Check{Name: "outcome", Passed: ob.Outcome == ex.Outcome, Want: ex.Outcome, Got: ob.Outcome,
			Where: outcomeWhere(ob)})
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
	if ex.MaxDuration > 0 {
		cs = append(cs, maxDurationCheck(ex.MaxDuration.D(), ob))
	}
	if ex.Output != nil {
		cs = append(cs, outputCheck(*ex.Output, ob))
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

// clientWait is one wait the client recorded (or, without a client trace,
// the server's inference of it).
type clientWait struct {
	ft            string
	attempt       int
	Delay         time.Duration
	retryAfter    time.Duration
	hasRetryAfter bool
	// switched: the client moved to another model or provider instead of
	// retrying on the same one, which happens at once (delaySource none).
	switched bool
}

func (ob Observed) ClientWaits() []clientWait {
	var ws []clientWait
	for _, r := range ob.Retries {
		if !r.WillRetry {
			continue
		}
		w := clientWait{ft: r.FailureType, attempt: r.Attempt, Delay: time.Duration(r.DelayMs) * time.Millisecond,
			switched: r.DelaySource == trace.DelayNone}
		if r.RetryAfterMs != nil {
			w.retryAfter, w.hasRetryAfter = time.Duration(*r.RetryAfterMs)*time.Millisecond, true
		}
		ws = append(ws, w)
	}
	return ws
}

func delayChecks(sc *scenario.Scenario, ob Observed, env envelopeFunc) []Check {
	if sc.Expect.Delays.Policy {
		if env == nil {
			return []Check{{Name: "delays", Want: "waits inside the policy's envelope", Got: "no policy to check against", Where: "client.policy"}}
		}
		return policyDelayChecks(sc, ob, env)
	}
	return listDelayChecks(sc, ob)
}

// envl is the range of waits a policy allows for one wait; ok is false
// when the policy does not retry there.
type envl struct {
	lo, hi time.Duration
	ok     bool
}

// policyEnvelopes looks up the policy's envelope for each wait, honouring
// the x-should-retry header each fault carried.
type policyEnvelopes struct {
	env    envelopeFunc
	should map[int]bool // should[k]: x-should-retry of server attempt k+1
	pol    *retry.Policy
}

func newPolicyEnvelopes(sc *scenario.Scenario, env envelopeFunc) policyEnvelopes {
	pe := policyEnvelopes{env: env, should: shouldRetryHeaders(sc)}
	pe.pol, _ = scenario.PolicyFor(sc)
	for i := range pe.should {
		if h, ok := sc.Attempts[i].Kind.(fault.HTTPError); ok && pe.pol != nil && !pe.pol.ObeysShouldRetry(h.HTTPStatus()) {
			delete(pe.should, i) // Claude Code retries a 503 whatever the header says
		}
	}
	return pe
}

// limitKnown reports whether the policy knows how many attempts ft gets
// (retry.Policy.LimitKnown): with an unknown limit (a policy learnt by
// chaos probe before the client gave up) a client may stop anywhere.
func (pe policyEnvelopes) limitKnown(ft string) bool {
	return pe.pol == nil || pe.pol.LimitKnown(retry.FailureType(ft))
}

// of returns the envelope of the wait after server attempt after (1-based;
// 0: unknown) that failed as ft on its target's attempt-th attempt.
func (pe policyEnvelopes) of(after int, ft string, attempt int, ra time.Duration, has bool) envl {
	if sr, ok := pe.should[after-1]; ok && pe.pol != nil {
		lo, hi, ok := pe.pol.EnvelopeShouldRetry(retry.FailureType(ft), attempt, ra, has, &sr)
		return envl{lo, hi, ok}
	}
	lo, hi, ok := pe.env(ft, attempt, ra, has)
	return envl{lo, hi, ok}
}

// policyDelayChecks checks each wait against the envelope the policy
// allows for it: the client's recorded waits (policy time) and the server's
// gaps (wall clock), and that the client did not stop retrying while its
// policy still allowed a retry.
func policyDelayChecks(sc *scenario.Scenario, ob Observed, env envelopeFunc) []Check {
	scale := ob.scale()
	ctol, _ := tolerances(sc.Expect.Tolerance, scale)
	de := delayEnvelopes{ob: ob, pe: newPolicyEnvelopes(sc, env)}
	cw := ob.ClientWaits()
	var cs []Check
	if ob.ClientTrace {
		cs = append(cs, clientDelayCheck(cw, de, ctol))
	}
	// Server side: the envelope of each gap, from the client's waits or,
	// without a client trace, from the failure types the faults imply.
	bands := make([]gapBand, len(ob.ServerWaits))
	for i, sw := range ob.ServerWaits {
		e := de.server(i, sw, cw)
		bands[i] = ob.serverBand(sc, sw, scaleDur(e.lo, scale), scaleDur(e.hi, scale), e.ok)
	}
	c := gapCheck(ob, bands, "wall-clock gaps inside the envelope × timeScale: ", "")
	if c.State != StateFail {
		if where, split, failed := serverDelayMismatch(ob, de.pe, cw); failed {
			warned := c.Warning()
			c.Passed, c.State, c.Where = false, StateFail, where
			if split || warned {
				c.Hint = "" // the where says it all
			}
		}
	}
	unverifiedDelays(&c, ob, sc)
	return append(cs, c)
}

// delayEnvelopes gives each wait the envelope the policy allows for it.
type delayEnvelopes struct {
	ob Observed
	pe policyEnvelopes
}

// client is the envelope of the client's i-th wait w. A switch to another
// model or provider is not a retry on the same target: it waits 0,
// whatever the policy's envelope says. The failure the mock sent decides
// whether the policy retries it, whatever type the client recorded for it
// (a 400 written down as server_error is still a 400).
func (d delayEnvelopes) client(i int, w clientWait) envl {
	after := 0
	if i < len(d.ob.ServerWaits) {
		after = d.ob.ServerWaits[i].After
	}
	if m, ok := d.ob.resentAt(after); ok {
		return envl{m.lo, m.hi, true} // a loop of its own (retry.Resend)
	}
	if d.ob.unmodelledAt(after) {
		return unmodelledWait
	}
	if w.switched {
		return envl{0, 0, true}
	}
	if in, ok := d.ob.inferredAt(d.ob.failedIndex(after)); after > 0 && ok && in.notRetried {
		return envl{}
	}
	attempt := w.attempt
	if after > 0 && d.ob.LoopAttempts != nil {
		// The backoff loop's count, which a re-send does not advance
		// (addResends): the server's side uses the same.
		attempt = d.ob.attemptOnTarget(after)
	}
	return d.pe.of(after, w.ft, attempt, w.retryAfter, w.hasRetryAfter)
}

// server is the envelope of the server's i-th gap sw: the client's wait's
// when the client's trace speaks, else the one of the failure the fault
// implies (none when the policy does not retry it).
func (d delayEnvelopes) server(i int, sw Wait, cw []clientWait) envl {
	switch {
	case d.ob.ClientTrace && i < len(cw):
		return d.client(i, cw[i])
	case !d.ob.ClientTrace && d.ob.switchedAt(sw.After+1):
		return envl{0, 0, true} // a switch of model, at once (see client)
	case !d.ob.ClientTrace && d.ob.Resends != nil:
		if d.ob.unmodelledAt(sw.After) {
			return unmodelledWait
		}
		if m, ok := d.ob.resentAt(sw.After); ok {
			return envl{m.lo, m.hi, true} // a loop of its own (retry.Resend)
		}
		if in, ok := d.ob.inferredAt(d.ob.failedIndex(sw.After)); ok && !in.notRetried {
			return d.pe.of(sw.After, in.ft, d.ob.attemptOnTarget(sw.After), in.ra, in.has)
		}
	case !d.ob.ClientTrace:
		if in, ok := d.ob.inferredAt(d.ob.failedIndex(sw.After)); ok && !in.notRetried {
			return d.pe.of(sw.After, in.ft, d.ob.attemptOnTarget(sw.After), in.ra, in.has)
		}
	}
	return envl{}
}

// clientDelayCheck checks each wait the client recorded against its
// envelope.
func clientDelayCheck(cw []clientWait, de delayEnvelopes, ctol scenario.Tolerance) Check {
	c := Check{Name: "delays.client", Passed: true, Where: "trace.jsonl: RetryAttempt.delayMs"}
	var wants, gots []string
	for i, w := range cw {
		e := de.client(i, w)
		wants = append(wants, envString(e.lo, e.hi, e.ok))
		gots = append(gots, fmtDur(w.Delay))
		if !e.ok || !inside(w.Delay, e.lo, e.hi, ctol) {
			if c.Passed {
				c.Where = fmt.Sprintf("trace.jsonl: RetryAttempt attempt %d (%s), wait %d", w.attempt, w.ft, i+1)
			}
			c.Passed = false
		}
	}
	c.Want, c.Got = strings.Join(wants, ", "), strings.Join(gots, ", ")
	if len(cw) == 0 {
		c.Want, c.Got = "waits inside the policy's envelope", "no waits"
	}
	return c
}

// serverDelayMismatch finds what fails the server's delay check even when
// every gap is inside its envelope: a count of waits that differs from the
// client's trace, a client that gave up before the policy would, or
// requests split where the policy would not split them (split).
func serverDelayMismatch(ob Observed, pe policyEnvelopes, cw []clientWait) (where string, split, failed bool) {
	if ob.ClientTrace && len(ob.ServerWaits) != len(cw) {
		return fmt.Sprintf("server.jsonl saw %d waits, trace.jsonl recorded %d", len(ob.ServerWaits), len(cw)), false, true
	}
	if where, ok := ob.gaveUpEarly(pe, cw); !ok {
		return where, false, true
	}
	if ob.RequestsWanted > 0 && ob.RequestsSeen != ob.RequestsWanted {
		where := fmt.Sprintf("server.jsonl: split where the policy ends a request, the attempts make %d requests, the scenario %d: ", ob.RequestsSeen, ob.RequestsWanted)
		if ob.RequestsSeen < ob.RequestsWanted {
			return where + "a failure the policy retries was not retried (a new request came instead of the retry)", true, true
		}
		return where + "a failure the policy does not retry (or no attempt left) was retried", true, true
	}
	return "", false, false
}

// listDelayChecks checks the waits against expect.delays as written.
func listDelayChecks(sc *scenario.Scenario, ob Observed) []Check {
	scale := ob.scale()
	ctol, _ := tolerances(sc.Expect.Tolerance, scale)
	want := make([]time.Duration, len(sc.Expect.Delays.List))
	for i, d := range sc.Expect.Delays.List {
		want[i] = d.D()
	}
	var cs []Check
	if ob.ClientTrace {
		cw := ob.ClientWaits()
		got := make([]time.Duration, len(cw))
		for i, w := range cw {
			got[i] = w.Delay
		}
		c := Check{Name: "delays.client", Passed: true, Want: durList(want), Got: durList(got), Where: "trace.jsonl: RetryAttempt.delayMs (policy time)"}
		if len(got) != len(want) {
			c.Passed = false
			c.Where = fmt.Sprintf("trace.jsonl: %d waits recorded, %d expected", len(got), len(want))
		} else {
			for i := range want {
				if !near(got[i], want[i], ctol) {
					c.Passed = false
					c.Where = fmt.Sprintf("trace.jsonl: RetryAttempt attempt %d (%s), wait %d, tolerance ± %s", cw[i].attempt, cw[i].ft, i+1, tolString(ctol))
					break
				}
			}
		}
		cs = append(cs, c)
	}
	if len(ob.ServerWaits) != len(want) {
		got := make([]time.Duration, len(ob.ServerWaits))
		for i, w := range ob.ServerWaits {
			got[i] = w.Gap
		}
		wantWall := make([]time.Duration, len(want))
		for i, w := range want {
			wantWall[i] = scaleDur(w, scale)
		}
		return append(cs, Check{Name: "delays.server", State: StateFail,
			Want: durList(wantWall) + fmt.Sprintf(" (wall clock = policy × timeScale %g)", scale), Got: durList(got),
			Where: fmt.Sprintf("server.jsonl: %d waits seen, %d expected", len(got), len(want))})
	}
	bands := make([]gapBand, len(want))
	for i, w := range ob.ServerWaits {
		d := scaleDur(want[i], scale)
		bands[i] = ob.serverBand(sc, w, d, d, true)
	}
	return append(cs, gapCheck(ob, bands, "", fmt.Sprintf(" (wall clock = policy × timeScale %g)", scale)))
}

// gapCheck is the delays.server check of the bands: failed when a gap lies
// outside its band, inconclusive when every gap lies inside but the noise
// measured around one no longer separates its wait from a plausibly wrong
// one, else passed; passed with a warning in its hint when a band is so
// wide, by the scenario's own tolerance, that a wrong wait would pass too.
func gapCheck(ob Observed, bands []gapBand, wantPrefix, wantSuffix string) Check {
	c := Check{Name: "delays.server", State: StatePass, Where: "server.jsonl: gaps between attempts"}
	var wants, gots []string
	inconclusive, warned := false, ""
	for _, b := range bands {
		wants = append(wants, envString(b.lo, b.hi, b.ok))
		gots = append(gots, fmtDur(b.wait.Gap))
		where := fmt.Sprintf("server.jsonl: gap between attempts %d and %d (wall clock, timeScale %g), tolerance −%s / +%s",
			b.wait.After, b.wait.After+1, ob.scale(), b.describeBelow, b.describeAbove)
		switch {
		case !b.accepts(b.wait.Gap):
			if c.State != StateFail {
				c.State, c.Where = StateFail, where
			}
		case !b.conclusive() && !b.conclusiveAt(b.wait.Gap) && !inconclusive:
			inconclusive = true
			if c.State == StatePass {
				c.State = StateInconclusive
				c.Where = where + fmt.Sprintf("; with this much measured noise a wrong wait (%s) could pass too", wrongWaits(b, true, true))
				c.Hint = inconclusiveHint
			}
		case warned == "" && b.authored && b.conclusive():
			warned = wideWarning(b)
		}
	}
	switch c.State {
	case StateFail:
		c.Hint = "" // a wait outside its band is wrong, however busy the machine
	case StatePass:
		c.Hint = warned
	}
	c.Passed = c.State == StatePass
	c.Want = wantPrefix + orNone(strings.Join(wants, ", ")) + wantSuffix
	c.Got = orNone(strings.Join(gots, ", "))
	if len(bands) == 0 {
		c.Got = "no waits"
	}
	return c
}

// inconclusiveHint says what to do about an inconclusive timing check.
const inconclusiveHint = "the noise measured around the wait (timer lateness, run-queue time, the client's process costs) is too large to tell a right wait from a wrong one: " +
	"run fewer scenarios at once (chaos run --parallel) or on a quieter machine, or raise the scenario's timeScale so the waits are longer than the noise"

// WarningPrefix starts the hint of a check that passed with a warning: the
// scenario's own tolerance is so wide that a wrong wait would pass too.
const WarningPrefix = "warning: "

// Warning reports whether the check passed with a warning (its Hint).
func (c Check) Warning() bool {
	return c.State == StatePass && strings.HasPrefix(c.Hint, WarningPrefix)
}

// wideWarning is the warning of a conclusive band that the scenario's
// tolerance makes wide enough to accept a wrong wait; "" when it is not.
func wideWarning(b gapBand) string {
	short, long := b.wide()
	if !short && !long {
		return ""
	}
	from := b.lo - width(b.allowed, b.lo) - width(b.below, b.lo)
	to := b.hi + width(b.allowed, b.hi) + width(b.above, b.hi)
	return fmt.Sprintf("%s%s is wide: with the noise measured it accepts gaps from %s to %s between attempts %d and %d for %s, so a wrong wait (%s) would pass too; "+
		"the check passes because the tolerance is the scenario's choice: narrow it if such a mistake should fail",
		WarningPrefix, b.allowedFrom, fmtDur(max(0, from)), fmtDur(to), b.wait.After, b.wait.After+1, envString(b.lo, b.hi, true), wrongWaits(b, short, long))
}

// wrongWaits names the plausibly wrong waits a band is meant to reject, on
// the short side, the long side or both.
func wrongWaits(b gapBand, short, long bool) string {
	var s []string
	if short && b.lo > 0 {
		s = append(s, "≤ "+fmtDur(b.lo/2))
	}
	if long {
		s = append(s, "≥ "+fmtDur(b.hi+max(b.hi, minSeparation)))
	}
	return strings.Join(s, " or ")
}

// inferredAt returns the inference for the j-th failed attempt (0-based);
// ok is false when there is none.
func (ob Observed) inferredAt(j int) (in inferredFailure, ok bool) {
	if j < 0 || j >= len(ob.InferredTypes) {
		return in, false
	}
	in.ft = ob.InferredTypes[j]
	if j < len(ob.InferredRetryAfter) && ob.InferredRetryAfter[j] != nil {
		in.ra, in.has = *ob.InferredRetryAfter[j], true
	}
	in.notRetried = j < len(ob.InferredNotRetried) && ob.InferredNotRetried[j]
	return in, true
}

// failedIndex is the index of server attempt k (1-based) among the failed
// attempts (InferredTypes, the client's RetryAttempt events), or -1 when it
// did not fail.
func (ob Observed) failedIndex(k int) int {
	if k < 1 || k > len(ob.FailedAttempts) || !ob.FailedAttempts[k-1] {
		if len(ob.FailedAttempts) == 0 && k >= 1 {
			return k - 1 // hand-built Observed: every attempt before the last failed
		}
		return -1
	}
	j := 0
	for i := 0; i < k-1; i++ {
		if ob.FailedAttempts[i] {
			j++
		}
	}
	return j
}

// attemptOnTarget is the number of server attempt k (1-based) within its
// logical request: the attempt number a policy counts.
func (ob Observed) attemptOnTarget(k int) int {
	if k >= 1 && k <= len(ob.LoopAttempts) {
		return ob.LoopAttempts[k-1] // the policy re-sends some failures outside its count
	}
	n := 1
	for j := k - 1; j >= 1; j-- {
		if j-1 < len(ob.RequestEnds) && ob.RequestEnds[j-1] || ob.switchedAt(j+1) {
			break
		}
		n++
	}
	return n
}

// gaveUpEarly reports (ok false) a client that stopped retrying where its
// policy still allowed a retry: at the last attempt of a logical request that
// failed, the policy's envelope for that failure says retry. The failure
// type is the client's own when it wrote one, else the one the fault
// implies. Scenarios with model switches are left alone: the attempt
// numbers on each target are the client's to tell.
func (ob Observed) gaveUpEarly(pe policyEnvelopes, cw []clientWait) (string, bool) {
	if len(ob.Escalations) > 0 || slices.ContainsFunc(cw, func(w clientWait) bool { return w.switched }) {
		return "", true
	}
	failed := 0 // failed server attempts so far
	for k := 1; k <= ob.ServerAttempts; k++ {
		if k-1 >= len(ob.FailedAttempts) || !ob.FailedAttempts[k-1] {
			continue
		}
		failed++
		end := k == ob.ServerAttempts || (k-1 < len(ob.RequestEnds) && ob.RequestEnds[k-1])
		if !end || ob.Outcome == "success" && k == ob.ServerAttempts {
			continue
		}
		if ob.unmodelledAt(k) {
			continue // what the client does next is not modelled
		}
		if m, ok := ob.resentAt(k); ok {
			return fmt.Sprintf("server.jsonl: the client stopped after attempt %d, where its policy sends it again (a loop of its own) after %s",
				k, envString(m.lo, m.hi, true)), false
		}
		in, inferred := ob.inferredAt(failed - 1)
		if inferred && in.notRetried {
			continue // the policy does not retry this very failure (its status, a stream already begun)
		}
		// The client's own account of the failure when it recorded one; a
		// client that did not record its last failure is judged by the
		// failure the fault implies.
		ft, attempt, ra, has := in.ft, ob.attemptOnTarget(k), in.ra, in.has
		switch {
		case ob.ClientTrace && failed-1 < len(ob.Retries):
			r := ob.Retries[failed-1]
			ft, attempt, ra, has = r.FailureType, r.Attempt, 0, false
			if r.RetryAfterMs != nil {
				ra, has = time.Duration(*r.RetryAfterMs)*time.Millisecond, true
			}
		case !inferred:
			continue
		}
		if e := pe.of(k, ft, attempt, ra, has); e.ok && pe.limitKnown(ft) {
			return fmt.Sprintf("server.jsonl: the client stopped after attempt %d (%s, attempt %d of its request), where its policy retries after %s",
				k, ft, attempt, envString(e.lo, e.hi, true)), false
		}
	}
	return "", true
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

// envelopeFor returns the policy's envelope as an envelopeFunc.
func EnvelopeFor(sc *scenario.Scenario) (envelopeFunc, error) {
	if !sc.Expect.Delays.Policy {
		return nil, nil
	}
	p, err := scenario.PolicyFor(sc)
	if err != nil {
		return nil, err
	}
	return func(ft string, attempt int, ra time.Duration, has bool) (time.Duration, time.Duration, bool) {
		return p.Envelope(retry.FailureType(ft), attempt, ra, has)
	}, nil
}
