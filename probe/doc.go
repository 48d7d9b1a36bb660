// Package probe learns a client's retry policy by experiment: it builds a
// battery of chaos scenarios (one per fault, each answered once so that the
// client's own decision shows, and a steady 5xx repeated until the client
// gives up, several times over), runs them in parallel with chaos.Runner
// against the client, and infers from the server's journal what the client
// retries, how many times, how long it waits and how it reads Retry-After.
//
// The data flow, one file per step:
//
//	Provider (provider.go: the fault table per wire format)
//	  ──Plan (battery.go)──▶ []*scenario.Scenario ──Run (run.go, chaos.Runner)──▶ []chaos.Result
//	  ──observe (observe.go: result.json + server.jsonl)──▶ []Observation
//	  ──Infer (infer.go, fit.go)──▶ Profile (profile.go) ──Conformance (conformance.go)
//	  ──PolicyYAML (policyout.go), Compare (against.go)
//
// Inference is a pure function of the observations, so it is tested with
// synthetic journals and golden files; only an end-to-end test runs a
// client. Every figure carries a confidence; a figure the measurements
// cannot tell (too few samples, noise as large as the effect, a client
// stopped at the deadline) is null and listed in Profile.Inconclusive with
// the measured reason, never guessed.
package probe
