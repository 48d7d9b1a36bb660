// Package probe is the pure decision core of `chaos probe`: it infers a
// client's retry policy from what its probe scenarios showed. What the
// client retries, how many times, how long it waits and how it reads
// Retry-After are decided by Infer from []Observation alone (no process,
// file or clock); running the scenarios against a client is package
// battery's (probe/battery), which builds the battery from this package's
// fault table, runs it with chaos.Runner and turns each result into an
// Observation.
//
// The data flow, one file per step:
//
//	Provider (provider.go: the fault table per wire format; LookupProvider
//	  rejects an unknown name with the list of known ones)
//	  []Observation (observation.go, from battery.Observe)
//	  ──Infer (infer.go, fit.go, jitter.go, ceiling.go, consistency.go,
//	    degenerate.go, survival.go)──▶ Profile (profile.go)
//	  ──Conform (conformance.go: every preset held against it)
//	  ──LearntPolicy (policyout.go, resendout.go, verify.go: the policy
//	    file, verified against the runs it was learnt from)
//	  ──Compare, LoadProfile (against.go: an earlier profile)
//
// Infer, Conform and Compare are pure functions (LearntPolicy too, but for
// the clock an HTTP-date Retry-After is read at): the same observations give
// the same profile, so they are tested with synthetic
// journals and golden files. So are the decisions the runner asks between
// its rounds: MoreSamples (run the exhaustion again?), NextCeilingRound
// (which Retry-After values bisect the ceiling next?) and SurvivalChecks
// (which outages check the survival figures?). Every figure carries a
// confidence; a figure the measurements cannot tell (too few samples, noise
// as large as the effect, a client stopped at the deadline) is null and
// listed in Profile.Inconclusive with the measured reason, never guessed.
package probe
