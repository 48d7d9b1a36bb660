package verify

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/trace"
)

// EnvelopeFunc returns the range of waits a policy allows after attempt
// (1-based) failed with failure type ft; ok is false when the policy does
// not retry.
type EnvelopeFunc func(ft string, attempt int, retryAfter time.Duration, hasRetryAfter bool) (lo, hi time.Duration, ok bool)

// EnvelopeFor returns the policy's envelope as an EnvelopeFunc.
func EnvelopeFor(sc *scenario.Scenario) (EnvelopeFunc, error) {
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

// ClientWait is one wait the client recorded (or, without a client trace,
// the server's inference of it).
type ClientWait struct {
	ft            string
	attempt       int
	Delay         time.Duration
	retryAfter    time.Duration
	hasRetryAfter bool
	// switched: the client moved to another model or provider instead of
	// retrying on the same one, which happens at once (delaySource none).
	switched bool
}

func (ob Observed) ClientWaits() []ClientWait {
	var ws []ClientWait
	for _, r := range ob.Retries {
		if !r.WillRetry {
			continue
		}
		w := ClientWait{ft: r.FailureType, attempt: r.Attempt, Delay: time.Duration(r.DelayMs) * time.Millisecond,
			switched: r.DelaySource == trace.DelayNone}
		if r.RetryAfterMs != nil {
			w.retryAfter, w.hasRetryAfter = time.Duration(*r.RetryAfterMs)*time.Millisecond, true
		}
		ws = append(ws, w)
	}
	return ws
}

func delayChecks(sc *scenario.Scenario, ob Observed, env EnvelopeFunc) []Check {
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
	env    EnvelopeFunc
	should map[int]bool // should[k]: x-should-retry of server attempt k+1
	pol    *retry.Policy
}

func newPolicyEnvelopes(sc *scenario.Scenario, env EnvelopeFunc) policyEnvelopes {
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
func policyDelayChecks(sc *scenario.Scenario, ob Observed, env EnvelopeFunc) []Check {
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
func (d delayEnvelopes) client(i int, w ClientWait) envl {
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
func (d delayEnvelopes) server(i int, sw Wait, cw []ClientWait) envl {
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
func clientDelayCheck(cw []ClientWait, de delayEnvelopes, ctol scenario.Tolerance) Check {
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
func serverDelayMismatch(ob Observed, pe policyEnvelopes, cw []ClientWait) (where string, split, failed bool) {
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
	where := ""
	if ob.OpenWait && len(want) == len(ob.ServerWaits)+1 {
		// The client was stopped in its last wait: the server saw it
		// begin, never end; its own trace (delays.client) says its length.
		want, where = want[:len(ob.ServerWaits)], fmt.Sprintf("; wait %d was still running at the scenario's end", len(want))
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
	c := gapCheck(ob, bands, "", fmt.Sprintf(" (wall clock = policy × timeScale %g)", scale))
	c.Where += where
	return append(cs, c)
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
func (ob Observed) gaveUpEarly(pe policyEnvelopes, cw []ClientWait) (string, bool) {
	if len(ob.Escalations) > 0 || slices.ContainsFunc(cw, func(w ClientWait) bool { return w.switched }) {
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
