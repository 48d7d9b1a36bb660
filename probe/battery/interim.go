package battery

import (
	"slices"
	"time"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/probe"
)

// batch is a battery being run, as Interim and Flush need it.
type batch struct {
	cr    *chaos.Runner
	ps    []Probe
	o     Options
	prior []probe.Observation // of the batteries run before it
	// priorFindings are the findings of the batteries run before it.
	priorFindings []probe.Finding
	start         time.Time // when the first battery began
}

// done is what the batteries run so far learnt, once the last returned.
type done struct {
	obs      []probe.Observation
	findings []probe.Finding
	o        Options
	runDir   string
	start    time.Time
}

// Interim is for a process that must exit before Run returns (the CLI's
// grace period after an interrupt ended): the profile of what has finished
// by now, interrupted, as Run would return it. It is inferred from the
// chaos runner's summary in memory (chaos.Runner.Interim) and the journals
// of the probes that finished (small files of the run folder), or, between
// two batteries (the probe run alone first and the rest), from what the
// last one returned; it waits on no write. nil when nothing has run yet,
// or once Run has returned.
func (r *Runner) Interim() *probe.Profile {
	if b := r.cur.Load(); b != nil {
		sum := b.cr.Interim()
		if sum == nil {
			sum = b.cr.Last() // the battery has just ended
		}
		if sum != nil {
			obs := append(append([]probe.Observation(nil), b.prior...), observeAll(b.ps, sum, b.o)...)
			prof := probe.Infer(b.o.Provider, obs)
			r.keep(b.o.Provider, obs)
			r.finish(prof, b.o, sum.RunDir, b.start, true, append(slices.Clone(b.priorFindings), findingsOf(sum)...))
			return prof
		}
	}
	d := r.done.Load()
	if d == nil {
		return nil
	}
	prof := probe.Infer(d.o.Provider, d.obs)
	r.keep(d.o.Provider, d.obs)
	r.finish(prof, d.o, d.runDir, d.start, true, d.findings)
	return prof
}

// Flush is chaos.Runner.Flush for the battery running: within d, the run
// folder's summary.json (and result.json of each unfinished probe) is
// written as known now.
func (r *Runner) Flush(d time.Duration) {
	if b := r.cur.Load(); b != nil {
		b.cr.Flush(d)
	}
}
