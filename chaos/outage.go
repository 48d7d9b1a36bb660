package chaos

import (
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// OutageResult is result.json's outage: the scenario's outage: as it was
// run (the seed its draws used, its phases) and what each attempt after
// the attempts: list drew from it.
type OutageResult struct {
	// Seed is the seed the draws used: the outage's own seed, else the
	// run's --seed.
	Seed   int64         `json:"seed"`
	Phases []OutagePhase `json:"phases"`
	// Draws has one entry per attempt whose fault came from the outage, in
	// attempt order.
	Draws []OutageDraw `json:"draws"`
}

// OutagePhase is one phase of an outage: its length in policy time and its
// mix, each fault as the journal describes it.
type OutagePhase struct {
	ForMs int64       `json:"forMs"`
	Mix   []OutageMix `json:"mix"`
}

// OutageMix is one entry of a phase's mix.
type OutageMix struct {
	Weight int    `json:"weight"`
	Fault  string `json:"fault"`
}

// OutageDraw is what one attempt drew: its number, its policy time since
// the outage began (the first attempt's arrival), the phase of that moment
// (1-based; 0 past the last phase, where it is ok), the mix entry drawn
// (1-based; 0 past the last phase) and the fault.
type OutageDraw struct {
	Attempt int    `json:"attempt"`
	AtMs    int64  `json:"atMs"`
	Phase   int    `json:"phase"`
	Entry   int    `json:"entry"`
	Fault   string `json:"fault"`
}

// newOutageResult is sc's outage as result.json records it before the
// run, nil without one.
func newOutageResult(sc *scenario.Scenario, runSeed int64) *OutageResult {
	o := sc.Outage
	if o == nil {
		return nil
	}
	out := &OutageResult{Seed: o.SeedOr(runSeed), Phases: []OutagePhase{}, Draws: []OutageDraw{}}
	for _, p := range o.Phases {
		ph := OutagePhase{ForMs: p.For.D().Milliseconds(), Mix: []OutageMix{}}
		for _, m := range p.Mix {
			ph.Mix = append(ph.Mix, OutageMix{Weight: m.Weight, Fault: mock.DescribeFault(m.Fault)})
		}
		out.Phases = append(out.Phases, ph)
	}
	return out
}

// noteMet records what the attempts met: with an outage or limits:, each attempt's
// fault (Faults) and each draw (Outage.Draws); without one, Faults stays
// the scenario's list.
func (res *Result) noteMet(sc *scenario.Scenario, attempts []mock.ServerAttempt) {
	if (sc.Outage == nil || res.Outage == nil) && sc.Limits == nil {
		return
	}
	res.Faults = nil
	for _, a := range attempts {
		if f, ok := mock.LimitFault(a); ok {
			res.Faults = append(res.Faults, mock.DescribeFault(f))
			continue
		}
		phase, entry := 0, 0
		if a.Outage != nil {
			phase, entry = a.Outage.Phase, a.Outage.Entry
		}
		f := mock.DescribeFault(sc.MetFault(a.N, phase, entry))
		res.Faults = append(res.Faults, f)
		if a.Outage != nil {
			res.Outage.Draws = append(res.Outage.Draws, OutageDraw{Attempt: a.N, AtMs: a.Outage.AtMs, Phase: phase, Entry: entry, Fault: f})
		}
	}
}
