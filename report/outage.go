package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos"
)

// A scenario's outage (chaos.Result.Outage) as the renderers say it: these
// helpers word its phases and draws for the page here and for
// report/results' table, Markdown and JUnit.

// OutageMix says a phase's mix: "6×529, 1×drop after 400 bytes, 3×ok", or
// the fault alone for a mix of one entry.
func OutageMix(p chaos.OutagePhase) string {
	if len(p.Mix) == 1 {
		return p.Mix[0].Fault
	}
	m := make([]string, len(p.Mix))
	for i, e := range p.Mix {
		m[i] = fmt.Sprintf("%d×%s", e.Weight, e.Fault)
	}
	return strings.Join(m, ", ")
}

// OutagePhaseName names a draw's phase: "1", or "after" past the last.
func OutagePhaseName(d chaos.OutageDraw) string {
	if d.Phase == 0 {
		return "after"
	}
	return fmt.Sprint(d.Phase)
}

// PolicyMs prints milliseconds of policy time as a duration: 2.043s, 1m30s.
func PolicyMs(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }

// outageView is a scenario's outage on the page: its seed, a row per
// phase and a row per draw, every label cleaned (pageClean).
type outageView struct {
	Seed   int64
	Phases [][3]string // phase, for, mix
	Draws  [][5]string // attempt, at, phase, mix entry, fault
}

// pageOutage returns r's outage to show, nil without one.
func pageOutage(r chaos.Result) *outageView {
	o := r.Outage
	if o == nil {
		return nil
	}
	v := &outageView{Seed: o.Seed}
	for i, p := range o.Phases {
		m := make([]string, len(p.Mix))
		for j, e := range p.Mix {
			m[j] = fmt.Sprintf("%d × %s", e.Weight, e.Fault)
		}
		v.Phases = append(v.Phases, [3]string{fmt.Sprint(i + 1), PolicyMs(p.ForMs), pageClean(strings.Join(m, ", "))})
	}
	for _, d := range o.Draws {
		entry := "-"
		if d.Entry > 0 {
			entry = fmt.Sprint(d.Entry)
		}
		v.Draws = append(v.Draws, [5]string{fmt.Sprint(d.Attempt), PolicyMs(d.AtMs), OutagePhaseName(d), entry, pageClean(d.Fault)})
	}
	return v
}
