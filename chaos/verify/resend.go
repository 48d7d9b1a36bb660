package verify

import (
	"fmt"
	"slices"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/retry"
)

// resendMark is the wait before a re-send of one of a policy's loops of
// its own (retry.Resend): Claude Code re-sends a 400 at once, Gemini CLI
// an error frame after 1s, 2s, 4s. ok is false for an attempt that is not
// re-sent so.
type resendMark struct {
	lo, hi time.Duration
	ok     bool
}

// addResends marks the failed attempts that the scenario's policy re-sends
// in a loop of its own (Observed.Resends) and numbers every attempt as the
// policy's backoff loop counts it (Observed.LoopAttempts): a re-send is
// not one of its attempts, and some start its count again. The count is
// the retry core's own (retry.Replay runs Retrier.Run's plan over the
// failures), so the checker and the built-in client agree on it. Both
// restart with each logical request and each switch of model. A policy
// without such loops leaves both nil: the attempts are numbered within
// their request (attemptOnTarget).
func (ob *Observed) addResends(sc *scenario.Scenario, pol *retry.Policy, attempts []mock.ServerAttempt, inferred []inference) {
	if pol == nil || len(pol.Resends) == 0 {
		return
	}
	ob.Resends = make([]resendMark, len(attempts))
	ob.LoopAttempts = make([]int, len(attempts))
	rp, noStream := pol.NewReplay(), false
	for k, a := range attempts {
		switch {
		case k > 0 && k-1 < len(ob.RequestEnds) && ob.RequestEnds[k-1]:
			rp, noStream = pol.NewReplay(), false
		case k > 0 && ob.switchedAt(k+1):
			rp.Switch()
			noStream = false
		}
		if mock.Succeeded(a) {
			ob.LoopAttempts[k] = rp.Succeed().Attempt
			continue
		}
		c := inferred[k].c
		if unmodelledStreamError(pol, sc.FaultAt(k), c, noStream) {
			ob.LoopAttempts[k] = rp.Succeed().Attempt // counted, not planned
			ob.Unmodelled = append(ob.Unmodelled, k+1)
			rp.Restart() // what the client counts next is not known; Claude Code starts again
			continue
		}
		st := rp.Fail(c)
		ob.LoopAttempts[k] = st.Attempt
		if !st.Resend {
			continue
		}
		ob.Resends[k] = resendMark{lo: st.Lo, hi: st.Hi, ok: true}
		rs, _ := pol.ResendRule(c)
		noStream = noStream || rs.NoStream
	}
}

// unmodelledStreamError reports an in-stream error fault f whose sequel
// the policy does not model (retry.Resend.NoStream): one after a re-send
// that asked for no stream (noStream), or one before the stream's first
// event when a loop of the policy that asks for no stream takes such
// errors. A re-send that asked for no stream meets the fault as the
// provider's HTTP error for its type (wire.NonStreamedError); what the
// client does after that is not modelled either.
func unmodelledStreamError(pol *retry.Policy, f scenario.Fault, c retry.Classification, noStream bool) bool {
	se := fault.WireFault(f.Kind).SSEError // the error event its answer ends with
	if se == nil {
		return false
	}
	rs, ok := pol.ResendRule(c)
	return noStream || ok && rs.NoStream && se.AfterEvents == 0
}

// unmodelledAt reports whether server attempt k (1-based) met a fault
// whose sequel the policy does not model (Observed.Unmodelled).
func (ob Observed) unmodelledAt(k int) bool { return slices.Contains(ob.Unmodelled, k) }

// unmodelledWait is the envelope of a wait the policy cannot tell: any.
var unmodelledWait = envl{0, 24 * time.Hour, true}

// unverifiedDelays turns a delays check that passed into unverified when
// some waits were not checked: they follow a fault whose sequel the
// policy does not model.
func unverifiedDelays(c *Check, ob Observed, sc *scenario.Scenario) {
	if len(ob.Unmodelled) == 0 || c.State != StatePass {
		return
	}
	pol, _ := scenario.PolicyFor(sc)
	name := "the policy"
	if pol != nil {
		name = pol.Name
	}
	c.State, c.Passed = StateUnverified, false
	c.Where = fmt.Sprintf("server.jsonl: attempt(s) %v met an in-stream error after a re-send that asked for no stream, or before the stream's first event: what %s does next is not modelled, so the wait after it is not checked", ob.Unmodelled, name)
	c.Hint = "every other wait is inside its envelope; docs/agents.md lists what each agent preset does not model"
}

// resentAt is the re-send after server attempt k (1-based), when its
// policy re-sends that failure in a loop of its own.
func (ob Observed) resentAt(k int) (resendMark, bool) {
	if k < 1 || k > len(ob.Resends) {
		return resendMark{}, false
	}
	m := ob.Resends[k-1]
	return m, m.ok
}
