package probe

import (
	"fmt"
	"slices"
	"strings"
)

// Consistency. A client whose behaviour changes from run to run (a
// script sending 0–4 requests at random) got a confident profile: the
// probe read each run as if it were the client's rule. Where the probe has
// more than one run of the same fault (the exhaustion's samples, and the
// decision probe serving the same failure once), their decisions must
// agree: retried in some and not in others, or the client reaching the
// mock in some and sending nothing in others, makes the decision
// inconclusive (retried null, the note naming the runs), never the
// majority's guess. Give-up counts that differ by more than one make the
// retry limit inconclusive (by one: a limit in time, not count, can do
// that; the limit is then the most common count, confidence low).
//
// The threshold: the client is not deterministic enough to profile when
// more than half of the runs that can be compared (those of a fault run
// more than once) are in a group that disagrees. The battery runs every
// other fault once, so its decisions rest on the client deciding alike
// every time; the repeated fault is the only evidence of that, and when
// most of it says the client does not, no single-run decision can be
// trusted either. The profile then says so (Profile.Nondeterministic),
// every decision is null and every figure inconclusive, no policy is
// written, and the CLI exits 2. A minority disagreeing (one group of
// several) leaves the rest of the profile as inferred.

// EndNoRequest is the end of a run in which the client sent no request
// to the mock at all: nothing was decided (it is not a success, nor a
// give-up of a request that never came).
const EndNoRequest = "no request"

// runRead is one run of a repeated fault, as the consistency check reads it.
type runRead struct {
	name     string // "503", "503 until it gives up #2"
	fr       *FaultResult
	attempts int
	end      string
}

// retried is the run's decision: true retried, false not, nil none.
func (r runRead) retried() *bool {
	switch {
	case r.end == EndNotRun || r.attempts == 0:
		return nil
	case r.attempts >= 2:
		return ptr(true)
	case r.end == EndStopped:
		return nil
	}
	return ptr(false)
}

// checkConsistency compares the runs of the exhaustion's fault (its
// samples and the decision probe of the same failure) and marks a
// disagreement; it sets Nondeterministic when the runs that disagree are
// most of those that can be compared. Called by Infer after every figure
// was inferred.
func (p *Profile) checkConsistency(prov Provider) {
	var runs []runRead
	for i := range p.Faults {
		fr := &p.Faults[i]
		same := fr.Sample > 0 || (fr.Group == "status" && sameFailure(prov, fr.Fault))
		if !same || fr.End == EndNotRun {
			continue
		}
		name := fr.Fault
		if fr.Sample > 0 {
			name = fmt.Sprintf("%s #%d", fr.Fault, fr.Sample)
		}
		runs = append(runs, runRead{name: name, fr: fr, attempts: fr.Attempts, end: fr.End})
	}
	if len(runs) < 2 {
		return
	}
	var yes, no, none []string
	for _, r := range runs {
		d := r.retried()
		switch {
		case r.attempts == 0:
			none = append(none, r.name)
		case d == nil:
		case *d:
			yes = append(yes, fmt.Sprintf("%s: %d attempts, %s", r.name, r.attempts, r.end))
		default:
			no = append(no, fmt.Sprintf("%s: %s", r.name, r.end))
		}
	}
	var parts []string
	if len(yes) > 0 && len(no) > 0 {
		parts = append(parts, fmt.Sprintf("retried in %d (%s), not retried in %d (%s)", len(yes), strings.Join(yes, "; "), len(no), strings.Join(no, "; ")))
	}
	if len(none) > 0 && len(yes)+len(no) > 0 {
		parts = append(parts, fmt.Sprintf("no request at all in %d (%s) while the others reached the mock", len(none), strings.Join(none, ", ")))
	}
	counts := p.giveUpCounts()
	if len(parts) == 0 && len(counts) > 0 && slices.Max(counts)-slices.Min(counts) > 1 {
		parts = append(parts, fmt.Sprintf("the exhaustion runs gave up after %v attempts", counts))
	}
	if len(parts) == 0 {
		return
	}
	why := fmt.Sprintf("inconsistent: %d runs of the same failure (%s) disagree: %s", len(runs), prov.Exhaust.Err.Error(), strings.Join(parts, "; "))
	for _, r := range runs {
		r.fr.Retried = nil
		r.fr.Note = join(r.fr.Note, why)
	}
	p.unset("policy.maxRetries", why)
	p.Policy.MaxRetries = nil
	// The one group holds every run that can be compared: more than half
	// of them disagree (see the threshold above).
	p.Nondeterministic = fmt.Sprintf("the client is not deterministic enough to profile: %s; the other faults are run once each, so their decisions rest on the client deciding alike every time, which these runs show it does not", why)
	p.notDeterministic()
}

// sameFailure reports whether the decision fault name serves the
// exhaustion's failure (the 503 served once).
func sameFailure(prov Provider, name string) bool {
	f, ok := prov.Fault(name)
	return ok && f.Group == "status" && f.Attempt == prov.Exhaust.Attempt
}

// giveUpCounts are the attempts of the exhaustion runs that gave up.
func (p *Profile) giveUpCounts() []int {
	var out []int
	for _, fr := range p.Faults {
		if fr.Sample > 0 && fr.End == EndGaveUp && fr.Attempts > 0 {
			out = append(out, fr.Attempts)
		}
	}
	return out
}

// unset moves a figure to Inconclusive with why.
func (p *Profile) unset(fig, why string) {
	delete(p.Confidence, fig)
	for i, in := range p.Inconclusive {
		if in.Figure == fig {
			p.Inconclusive[i].Reason = why
			return
		}
	}
	p.Inconclusive = append(p.Inconclusive, Inconclusive{Figure: fig, Reason: why})
}

// notDeterministic nulls every decision and figure of a profile whose
// client is not deterministic enough to profile, each with the reason.
func (p *Profile) notDeterministic() {
	why := p.Nondeterministic
	for i := range p.Faults {
		if p.Faults[i].Retried != nil {
			p.Faults[i].Retried = nil
			p.Faults[i].Note = join(p.Faults[i].Note, "not deterministic: not read")
		}
	}
	for i := range p.Inconclusive {
		p.Inconclusive[i].Reason = why
	}
	figs := make([]string, 0, len(p.Confidence))
	for fig := range p.Confidence {
		figs = append(figs, fig)
	}
	slices.Sort(figs)
	for _, fig := range figs {
		p.Inconclusive = append(p.Inconclusive, Inconclusive{Figure: fig, Reason: why})
		delete(p.Confidence, fig)
	}
	p.Policy = Policy{Fallbacks: []string{}, RetryAfter: RetryAfter{LargeMs: p.Policy.RetryAfter.LargeMs}}
}
