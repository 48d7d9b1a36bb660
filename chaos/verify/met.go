package verify

import (
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// Met is sc as its attempts met it: with an outage:, its attempts: list
// becomes the faults the journal's attempts met (attempts[] first, then
// each attempt's draw from the outage: trace.OutageDraw), so that every
// check, written against a list of faults (a status's Retry-After, an
// x-should-retry, a kind the policy does not retry), compares the client
// with what each attempt actually met rather than with a list it did not
// meet. With limits:, an attempt the provider account refused met its
// 429 or overloaded answer (mock.LimitFault) instead of its planned fault.
// Without an outage or limits sc is returned as it is.
func Met(sc *scenario.Scenario, attempts []mock.ServerAttempt) *scenario.Scenario {
	if sc == nil || sc.Outage == nil && sc.Limits == nil {
		return sc
	}
	met := make([]scenario.Fault, len(attempts))
	for k, a := range attempts {
		if f, ok := mock.LimitFault(a); ok {
			met[k] = f
			continue
		}
		phase, entry := 0, 0
		if a.Outage != nil {
			phase, entry = a.Outage.Phase, a.Outage.Entry
		}
		met[k] = sc.MetFault(a.N, phase, entry)
	}
	return sc.WithMet(met)
}
