// Package verify judges a run: observe.go turns the mock's journal and the
// client's trace into an Observed; the checks (check.go: outcome, attempts,
// failure types, escalations, prompts; delays.go: the waits against the
// policy's envelope or the listed delays; outputcheck.go: expect.output;
// check_selfreport.go, selfreport_align.go: the client's own OpenTelemetry
// against the journal) are pure functions of a Scenario and an Observed
// (Evaluate), so they are tested without a network. tolerance.go is the
// noise around a wait; attempthints.go, modelswitch.go and resend.go are what
// a check needs to know of the attempts (a failed attempts or delays check
// whose attempts carry different prompts hints at attemptsMatch, and one
// whose requests went to a path the mock does not serve at the base URL
// says so).
//
// # Verdicts
//
// A check passes, fails, is inconclusive (the noise measured around a wait is
// too large to tell a right wait from a wrong one) or unverified (nothing to
// check it against).
package verify
