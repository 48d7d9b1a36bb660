package battery

import (
	"slices"
	"time"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/probe"
)

// batch is a phase being run (or ended and not yet accepted or dropped),
// as Interim and Flush need it.
type batch struct {
	seq      int // the order it started in
	cr       *chaos.Runner
	ps       []Probe
	o        Options
	final    bool // ended: obs and findings are its own
	obs      []probe.Observation
	findings []probe.Finding
}

// done is what the accepted phases learnt.
type done struct {
	obs      []probe.Observation
	findings []probe.Finding
}

// hold records a phase about to run.
func (r *Runner) hold(cr *chaos.Runner, ps []Probe, o Options) *batch {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	b := &batch{seq: r.seq, cr: cr, ps: ps, o: o}
	if r.batches != nil {
		r.batches[b] = struct{}{}
	}
	return b
}

// release forgets b.
func (r *Runner) release(b *batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.batches, b)
}

// acceptPhase adds what ph learnt to the profile's; main marks the phase
// whose run folder the profile names (the battery, the pilot before it).
func (r *Runner) acceptPhase(ph phase, main bool) {
	if ph.b == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.batches, ph.b)
	r.acc.obs = append(r.acc.obs, ph.b.obs...)
	r.acc.findings = append(r.acc.findings, ph.b.findings...)
	if main && ph.sum != nil {
		r.mainDir = ph.sum.RunDir
	}
}

// dropPhase forgets a phase whose observations the profile does not use
// (a speculation that was not the phase asked for, or the pilot of a
// client probed without the warm-up: its findings are kept, as they are
// the client's).
func (r *Runner) dropPhase(ph phase) {
	if ph.b == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.batches, ph.b)
}

// keepFindings keeps the findings of a phase whose observations are
// dropped (the pilot of a client probed without the warm-up).
func (r *Runner) keepFindings(ph phase) {
	if ph.b == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acc.findings = append(r.acc.findings, ph.b.findings...)
}

// accepted is a copy of what the accepted phases learnt.
func (r *Runner) accepted() done {
	r.mu.Lock()
	defer r.mu.Unlock()
	return done{obs: slices.Clone(r.acc.obs), findings: slices.Clone(r.acc.findings)}
}

func (r *Runner) setOptions(o Options) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.o = o
}

func (r *Runner) setRunDir(dir string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mainDir = dir
}

func (r *Runner) runDir() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mainDir
}

// Interim is for a process that must exit before Run returns (the CLI's
// grace period after an interrupt ended): the profile of what has finished
// by now, interrupted, as Run would return it. It is inferred from what
// the accepted phases learnt, and, for the phases running (or ended and
// not yet decided on), from the chaos runner's summary in memory
// (chaos.Runner.Interim) and the journals of the probes that finished
// (small files of the run folder); it waits on no write. nil when nothing
// has run yet, or once Run has returned.
func (r *Runner) Interim() *probe.Profile {
	r.mu.Lock()
	if !r.active {
		r.mu.Unlock()
		return nil
	}
	obs, findings := slices.Clone(r.acc.obs), slices.Clone(r.acc.findings)
	o, start, dir := r.o, r.start, r.mainDir
	bs := make([]*batch, 0, len(r.batches))
	for b := range r.batches {
		bs = append(bs, b)
	}
	r.mu.Unlock()
	slices.SortFunc(bs, func(a, b *batch) int { return a.seq - b.seq })
	some := len(obs) > 0
	for _, b := range bs {
		r.mu.Lock()
		final, bobs, bf := b.final, b.obs, b.findings
		r.mu.Unlock()
		if final {
			obs, findings, some = append(obs, bobs...), append(findings, bf...), true
			continue
		}
		sum := b.cr.Interim()
		if sum == nil {
			sum = b.cr.Last() // the phase has just ended
		}
		if sum == nil {
			continue
		}
		some = true
		obs = append(obs, observeAll(b.ps, sum, b.o)...)
		findings = append(findings, findingsOf(sum)...)
		if dir == "" {
			dir = sum.RunDir
		}
	}
	if !some {
		return nil
	}
	prof := probe.Infer(o.Provider, obs)
	r.finish(prof, o, dir, start, true, findings, obs)
	return prof
}

// Flush is chaos.Runner.Flush for the phases running: within d, each
// run folder's summary.json (and result.json of each unfinished probe) is
// written as known now.
func (r *Runner) Flush(d time.Duration) {
	r.mu.Lock()
	var crs []*chaos.Runner
	for b := range r.batches {
		if !b.final {
			crs = append(crs, b.cr)
		}
	}
	r.mu.Unlock()
	for _, cr := range crs {
		cr.Flush(d)
	}
}
