package chaos

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
)

// A scenario whose client needs what is not here (client.requires) is
// skipped, not failed. On a fresh clone that is every SDK scenario, for
// one of two reasons: a run says so once per reason (what is missing, and
// what to run: client.requiresHint), not once per scenario (SkipGroups).

// missingRequirement returns the first of sc's client.requires missing
// here, or nil. With --client-cmd the scenario's own client is not run, so
// its requirements do not apply.
func (r *Runner) missingRequirement(sc *scenario.Scenario) *scenario.Missing {
	if r.ClientCmd != "" {
		return nil
	}
	return scenario.MissingRequirement(sc)
}

// skip records a scenario that was not run. Its progress line was
// announceSkips'.
func (r *Runner) skip(sc *scenario.Scenario, dir string, m *scenario.Missing) Result {
	res := Result{Name: sc.Name, File: sc.File, Description: sc.Description, Verdict: VerdictSkipped,
		SkipReason: m.Reason(), SkipMissing: m.What(), SkipHint: m.Hint,
		Seed: r.Seed, TimeScale: sc.TimeScale, Dir: dir, Client: strings.Join(sc.Client.Command, " "),
		FailureTypes: []string{}, Escalations: []scenario.Escalation{}, Checks: []verify.Check{}}
	r.record(dir, res)
	if err := runfolder.MakeRunSubdir(dir); err == nil {
		_ = writeJSON(filepath.Join(dir, "result.json"), res)
	}
	return res
}

// announceSkips prints, before anything runs, one progress line per group
// of scenarios that will be skipped (SkipGroups), and returns the others.
func (r *Runner) announceSkips(scs []*scenario.Scenario) []*scenario.Scenario {
	var run []*scenario.Scenario
	var skipped []Result
	for _, sc := range scs {
		if m := r.missingRequirement(sc); m != nil {
			skipped = append(skipped, Result{Name: sc.Name, Verdict: VerdictSkipped, SkipReason: m.Reason(), SkipMissing: m.What(), SkipHint: m.Hint})
			continue
		}
		run = append(run, sc)
	}
	if r.Progress == nil {
		return run
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range SkipGroups(skipped) {
		fmt.Fprintln(r.Progress, g.Line())
		if g.Hint != "" {
			fmt.Fprintf(r.Progress, "  to run them: %s\n", g.Hint)
		}
	}
	return run
}

// SkipGroup is the skipped scenarios of a run that one thing would let
// run: the same client.requiresHint (what to run), or, without one, the
// same missing requirement.
type SkipGroup struct {
	Hint    string         // what to run to provide what is missing; "" when the scenarios say nothing
	Missing []MissingCount // what is missing, in the order first met
	Results []Result       // the scenarios, in run order
}

// MissingCount is one missing requirement and how many scenarios need it.
type MissingCount struct {
	What  string // a path, or "NAME (not in PATH)"; or a whole SkipReason (Reason)
	Count int
	// Reason is set when What is a SkipReason: the result did not say
	// what is missing (a result.json written before SkipMissing existed).
	Reason bool
}

// SkipGroups groups the skipped results of rs, in the order their first
// scenario comes. A result without SkipMissing (a result.json written
// before it existed) is grouped by its SkipReason.
func SkipGroups(rs []Result) []SkipGroup {
	var groups []SkipGroup
	index := map[string]int{}
	for _, r := range rs {
		if r.Verdict != VerdictSkipped {
			continue
		}
		what, reason := r.SkipMissing, false
		if what == "" {
			what, reason = r.SkipReason, true
		}
		key := "hint\x00" + r.SkipHint
		if r.SkipHint == "" {
			key = "missing\x00" + what
		}
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, SkipGroup{Hint: r.SkipHint})
		}
		g := &groups[i]
		g.Results = append(g.Results, r)
		if j := slices.IndexFunc(g.Missing, func(m MissingCount) bool { return m.What == what }); j >= 0 {
			g.Missing[j].Count++
		} else {
			g.Missing = append(g.Missing, MissingCount{What: what, Count: 1, Reason: reason})
		}
	}
	return groups
}

// Line says the group in one line: "SKIP 25 scenarios: missing A (12), B
// (13)", or "SKIP NAME: missing A" for one scenario.
func (g SkipGroup) Line() string {
	var parts []string
	for i, m := range g.Missing {
		p := m.What
		if !m.Reason && i == 0 {
			p = "missing " + p
		}
		if len(g.Missing) > 1 {
			p += fmt.Sprintf(" (%d)", m.Count)
		}
		parts = append(parts, p)
	}
	who := fmt.Sprintf("%d scenarios", len(g.Results))
	if len(g.Results) == 1 {
		who = g.Results[0].Name
	}
	return "SKIP " + who + ": " + strings.Join(parts, ", ")
}
