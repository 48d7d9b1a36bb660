// Package battery runs `chaos probe`'s experiments against a client: it
// builds a battery of chaos scenarios from the probe's fault table (one per
// fault, each answered once so that the client's own decision shows, and a
// steady 5xx repeated until the client gives up, several times over), runs
// them in parallel with chaos.Runner, and observes in each scenario's
// result and server journal what the client did. What that means is
// decided by the pure core, probe.Infer; this package holds the I/O and
// the clock around it.
//
// The data flow, one file per step:
//
//	Options ──plan (battery.go)──▶ []Probe (their chaos scenarios)
//	  ──estimate (estimate.go: the bound said before the start)
//	  ──Runner.Run (run.go: the pilot of warmup.go, the battery, the
//	    exhaustion again when probe.MoreSamples says so, the ceiling's
//	    rounds as probe.NextCeilingRound decides them, the survival
//	    figures' checks as probe.SurvivalChecks decides them (survival.go:
//	    the runs of each steady outage kind, with the battery, and the
//	    outage: scenarios that check each figure); each phase after the
//	    battery started as soon as what it depends on has finished, and
//	    taken only when it is the phase decided at the end (sched.go); the
//	    client processes of every phase admitted by the CPU they use
//	    (chaos/client.Admission))
//	  ──Observe (observe.go: result.json + server.jsonl)──▶ []probe.Observation
//	  ──probe.Infer──▶ *probe.Profile
//
// Progress lines carry the time elapsed against the estimate and, once
// measured, the expected end (expect.go). Runner.Interim and Runner.Flush
// (interim.go) give the profile of what finished to a process that must
// exit before Run returns.
package battery
