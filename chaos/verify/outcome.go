package verify

import (
	"fmt"
	"time"
)

// Outcomes of a run (expect.outcome, Result.Outcome).
const (
	OutcomeSuccess       = "success"
	OutcomeFailure       = "failure"
	OutcomeStillRetrying = "still_retrying"
)

// openMargin is how long before the client was stopped an attempt may
// have ended and still count as open when it was stopped: the mock stamps
// an attempt's end when it sees the connection close, which the kill
// causes, and the runner stamps the stop once the client is gone. It
// only chooses the evidence's words, never the outcome.
const openMargin = 250 * time.Millisecond

// StillRetrying returns the evidence that the client was still retrying
// when the scenario ended, or "" when it was not (docs/chaos.md,
// "Outcomes"): it was stopped at its deadline (ClientKilled), after at
// least one attempt, the last of which did not deliver a complete
// response, and its trace (when it wrote one) does not say that it gave up
// on that request. It was then either still reading that attempt (a
// stall, a slow answer, a hang) or waiting to send the next one; which of
// the two the evidence says comes from when the attempt ended and when the
// client was stopped (Stopped). A client that wrote no trace cannot tell
// a wait from a hang after giving up: the journal alone counts it as
// still retrying.
func StillRetrying(ob Observed) string {
	ev, _ := stillRetrying(ob)
	return ev
}

// stillRetrying is StillRetrying, and whether the client was waiting
// (rather than reading an open attempt) when it was stopped.
func stillRetrying(ob Observed) (evidence string, waiting bool) {
	k := ob.ServerAttempts - 1
	if !ob.ClientKilled || k < 0 || !failed(ob, k) || ob.GaveUp {
		return "", false
	}
	end := fact(ob, k).Ended
	arrived := time.Time{}
	if k < len(ob.ServerArrived) {
		arrived = ob.ServerArrived[k]
	}
	switch {
	case ob.Stopped.IsZero() || arrived.IsZero():
		return fmt.Sprintf("the client was stopped at the scenario's end after attempt %d (%s) failed, without giving up", k+1, failureOf(ob, k)), false
	case end.IsZero() || !end.Before(ob.Stopped.Add(-openMargin)):
		return fmt.Sprintf("the client was stopped at the scenario's end with attempt %d (%s) still open, %s (policy time) after it arrived",
			k+1, failureOf(ob, k), ob.policy(ob.Stopped.Sub(arrived)).Round(time.Millisecond)), false
	default:
		return fmt.Sprintf("the client was stopped at the scenario's end %s (policy time) after attempt %d (%s) failed, waiting to send the next one",
			ob.policy(ob.Stopped.Sub(end)).Round(time.Millisecond), k+1, failureOf(ob, k)), true
	}
}

// SettleOutcome sets Outcome to still_retrying, with StillRetryingEvidence
// (and OpenWait when it was waiting), when StillRetrying finds the client
// still retrying at the scenario's end.
func (ob *Observed) SettleOutcome() {
	if ev, waiting := stillRetrying(*ob); ev != "" {
		ob.Outcome, ob.StillRetryingEvidence, ob.OpenWait = OutcomeStillRetrying, ev, waiting
	}
}

// KillIsOutcome reports whether a client stopped at its deadline is judged
// by the outcome check alone: it was still retrying at the scenario's end
// and the scenario expects an outcome. Under outcome: still_retrying the
// stop is what the scenario asks for; under success or failure the outcome
// check fails and says the client was still retrying. Without
// expect.outcome, the stop fails the "client" check as before.
func KillIsOutcome(expected string, ob Observed) bool {
	return expected != "" && ob.Outcome == OutcomeStillRetrying
}

// outcomeCheck compares the observed outcome with the expected one; a
// still-retrying client says so, with its evidence.
func outcomeCheck(want string, ob Observed) Check {
	c := Check{Name: "outcome", Passed: ob.Outcome == want, Want: want, Got: ob.Outcome, Where: outcomeWhere(ob)}
	if ob.Outcome == OutcomeStillRetrying {
		c.Got = "still_retrying: " + ob.StillRetryingEvidence
		c.Where = "server.jsonl: the last attempt, and the client's stop at its deadline"
		if !c.Passed {
			c.Hint = "the client neither succeeded nor gave up before the scenario ended (expect.maxDuration, the deadline it was stopped at); expect outcome: still_retrying if that is what it should do, or lengthen expect.maxDuration"
		}
	}
	return c
}
