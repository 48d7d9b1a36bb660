package battery

import (
	"fmt"

	"github.com/retrylab/retrylab/probe"
)

// The warm-up request (Options.NoWarmUp) helps a client that makes the
// requests it is told (RETRYLAB_REQUESTS=2): its first request is late by
// its start-up, its second is not. A client that makes one request
// whatever it is told (claude -p, codex exec, most agents and scripts)
// shows only the warm-up, and a battery run with it learns nothing. So
// Runner.Run runs one probe of the battery alone first (the pilot) and
// reads from it which kind of client it has: one that made its warm-up
// request only is probed without the warm-up from then on, and the
// profile says so (Profile.WarmUp).

// pilotFault is the fault the pilot probes, when the plan has it: a 400
// is final for most clients (no backoff to wait out) and re-sent at once
// by the rest.
const pilotFault = "400"

// pilotIndex picks the probe of ps run alone first: the 400's decision
// probe, else the first decision probe that is not long (the hang, a
// large Retry-After) or an HTTP date, else the first probe.
func pilotIndex(ps []Probe) int {
	first := -1
	for i, p := range ps {
		if p.Sample > 0 || p.Round > 0 || p.Fault.Long || p.Fault.HTTPDate {
			continue
		}
		if p.Fault.Name == pilotFault {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	return max(first, 0)
}

// warmUpDecision reads the pilot's observation: whether the battery runs
// with the warm-up request, and what the profile says of it. A client
// that sent its warm-up request and no probed one makes one request
// whatever it is told: the warm-up is turned off. A client that sent
// none (it never reached the mock) says nothing of it: the warm-up stays,
// and the battery's runs say what was seen (warmUpAfterBattery).
func warmUpDecision(pilot probe.Observation) (use bool, w probe.WarmUp) {
	if pilot.WarmUpOnly {
		return false, probe.WarmUp{Detected: true, Reason: fmt.Sprintf(
			"the client made one request when told RETRYLAB_REQUESTS=2 (probe %s, run alone first): it makes one request whatever it is told, so every probe ran without the warm-up request", pilot.Fault)}
	}
	if pilot.Attempts == 0 {
		return true, probe.WarmUp{Used: true, Reason: fmt.Sprintf(
			"the client sent no request in the first probe (%s): kept the warm-up request (RETRYLAB_REQUESTS=2, the first answered ok)", pilot.Fault)}
	}
	return true, probe.WarmUp{Used: true, Reason: fmt.Sprintf(
		"the client made the two requests it was told (probe %s, run alone first): every probed request followed a warm-up request answered ok", pilot.Fault)}
}

// warmUpOff is what a profile says when the warm-up was turned off by
// the caller (--warm-up=false).
var warmUpOff = probe.WarmUp{Reason: "turned off (--warm-up=false): every probe's first request was the probed one"}

// warmUpAfterBattery reads a battery run with the warm-up because the
// pilot sent no request (a cold start, a first run that failed before
// its request): when every run of it that reached the mock made its
// warm-up request only, and none a probed one, the client makes one
// request whatever it is told, and the battery learnt nothing. It says
// so (again: run the battery once more without the warm-up). The
// profile must not be all-null when the default mode could learn it.
func warmUpAfterBattery(pilot, battery []probe.Observation, o Options) (probe.WarmUp, bool) {
	if o.NoWarmUp || len(pilot) == 0 || pilot[0].Attempts > 0 || pilot[0].WarmUpOnly {
		return probe.WarmUp{}, false
	}
	only := 0
	for _, ob := range battery {
		if ob.Attempts > 0 {
			return probe.WarmUp{}, false
		}
		if ob.WarmUpOnly {
			only++
		}
	}
	if only == 0 {
		return probe.WarmUp{}, false
	}
	return probe.WarmUp{Detected: true, Reason: fmt.Sprintf(
		"the client sent no request in the first probe (%s), then its warm-up request only in %d of the %d probes run with it (RETRYLAB_REQUESTS=2): it makes one request whatever it is told, so the battery ran again without the warm-up request",
		pilot[0].Fault, only, len(battery))}, true
}
