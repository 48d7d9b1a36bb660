package scenario

import "github.com/retrylab/retrylab/chaos/fault"

// Faults returns every fault an attempt of sc can meet, besides ok: each
// entry of attempts: (a fleet's clients each meet these, as their k-th
// attempts), then each fault of each outage: phase's mix. The answers of
// limits: (429, 529) and the side requests come from the mock and are no
// faults of the file.
func (sc *Scenario) Faults() []Fault {
	out := append([]Fault(nil), sc.Attempts...)
	if sc.Outage != nil {
		for _, p := range sc.Outage.Phases {
			for _, m := range p.Mix {
				out = append(out, m.Fault)
			}
		}
	}
	return out
}

// UsesProxy reports whether some fault of sc puts toxics on the proxy
// (fault.UsesProxy: drop, reset, raw toxics, and any kind registered later
// that says so): only then must its clients' bytes go through Toxiproxy.
// The mock makes every other fault itself, so a scenario without one is
// served straight by the mock (mock.EnvConfig.Proxy).
func (sc *Scenario) UsesProxy() bool {
	for _, f := range sc.Faults() {
		if fault.UsesProxy(f.Kind) {
			return true
		}
	}
	return false
}
