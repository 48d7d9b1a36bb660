package results

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/report"
	"github.com/retrylab/retrylab/retry/errreport"
	"github.com/retrylab/retrylab/trace"
)

// Table renders a chaos run for people: one row per scenario, then the
// failed checks with want, got and where, and what a client that gave up
// reported (see tableReports), in plain text 80 columns wide.
//
// Skipped scenarios are grouped by what would let them run
// (chaos.SkipGroups): a group of several is one row with its count, and
// what is missing and what to run are said once, after the table. JSON and
// JUnit list every skipped scenario.
func Table(w io.Writer, s *chaos.Summary) error {
	return TableStyle(w, s, errreport.Style{Width: 80})
}

// TableStyle is Table with the clients' error reports laid out in
// st: its width, and colour (errreport.StyleFor says when).
func TableStyle(w io.Writer, s *chaos.Summary, st errreport.Style) error {
	t := tablewriter.NewWriter(w)
	t.Header("scenario", "result", "outcome", "attempts", "client waits", "server waits", "time")
	groups := chaos.SkipGroups(s.Scenarios)
	for _, row := range scenarioRows(s, groups) {
		var err error
		if g := row.group; g != nil {
			err = t.Append(fmt.Sprintf("(%d scenarios)", len(g.Results)), "SKIP", "", "", "-", "-", "")
		} else {
			r := row.r
			err = t.Append(r.Name, verdictLabel(r), r.Outcome, fmt.Sprint(r.Attempts),
				msList(r.DelaysMs.Client), msList(serverPolicyMs(r)), fmt.Sprintf("%dms", r.DurationMs))
		}
		if err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, l := range scaleNote(s, st.Width) {
		fmt.Fprintln(w, l)
	}
	skipLines(w, groups)
	tableOutages(w, s, st.Width)
	tableFindings(w, s)
	tableFleets(w, s)
	hints := hintUsers(s)
	said := saidLines{}
	boxed := boxedScenario(s) // one client's give-up is boxed; the others are a line each
	for _, r := range s.Scenarios {
		if r.Error != "" {
			fmt.Fprintf(w, "\n%s: error: %s\n", r.Name, r.Error)
		}
		if r.Interrupted != "" {
			fmt.Fprintf(w, "\n%s: interrupted: %s\n", r.Name, r.Interrupted)
		}
		if r.PassedOnRerun {
			fmt.Fprintf(w, "\n%s: passed on run %d; run 1 (figures above) had:\n", r.Name, len(r.Reruns)+1)
		}
		for _, c := range r.NotPassedChecks() {
			who := r.Name + " " + c.Name
			fmt.Fprintf(w, "\n%s: check %s %s\n", r.Name, c.Name, stateWord(c.State))
			for _, l := range []string{"  want:  " + c.Want, "  got:   " + c.Got, "  where: " + c.Where} {
				fmt.Fprintln(w, said.once(l, who))
			}
			// A hint several checks share is said once, at the first,
			// naming the others: the terminal holds no line twice.
			if users := hints[c.Hint]; c.Hint != "" && users[0] == r.Name+" "+c.Name {
				fmt.Fprintf(w, "  hint:  %s\n", c.Hint)
				if len(users) > 1 {
					fmt.Fprintf(w, "  (the same hint for %s)\n", strings.Join(users[1:], ", "))
				}
			}
		}
		tableWarnings(w, r)
		for _, rr := range r.Reruns {
			fmt.Fprintf(w, "%s: run %d: %s%s\n", r.Name, rr.Run, rr.Verdict, checkNames(rr.Checks))
		}
		tableReports(w, r, st, r.Name == boxed)
	}
	fmt.Fprintf(w, "\n%s in %dms (seed %d, run folder %s)\n", tally(s), s.DurationMs, s.Seed, s.RunDir)
	return nil
}

// saidLines remembers which check last printed each detail line, so that
// a line two checks share (the same want of two scenarios) is not printed
// twice as it is: the terminal holds no line twice.
type saidLines map[string]string

// once returns l, or, when another check printed it already, l naming the
// check that printed it last (who becomes that check).
func (s saidLines) once(l, who string) string {
	prev, ok := s[l]
	s[l] = who
	if !ok {
		return l
	}
	return l + " (as for " + prev + ")"
}

// hintUsers maps each hint of s's checks that did not pass to the checks
// that give it ("scenario check"), in the order the table prints them.
func hintUsers(s *chaos.Summary) map[string][]string {
	out := map[string][]string{}
	for _, r := range s.Scenarios {
		for _, c := range r.NotPassedChecks() {
			if c.Hint != "" {
				out[c.Hint] = append(out[c.Hint], r.Name+" "+c.Name)
			}
		}
	}
	return out
}

// boxedScenario is the scenario whose give-up the table shows as the seed's
// box: the first that failed with an unrecoverable report, else the first
// with one; "" for none.
func boxedScenario(s *chaos.Summary) string {
	first := ""
	for _, r := range s.Scenarios {
		if !slices.ContainsFunc(r.ErrorReports, func(ev trace.ErrorReport) bool { return report.CleanReport(ev).Unrecoverable() }) {
			continue
		}
		if !r.Passed {
			return r.Name
		}
		first = cmp.Or(first, r.Name)
	}
	return first
}

// scenarioRow is one row of a table of scenarios: a result, or a group
// of several skipped scenarios.
type scenarioRow struct {
	r     chaos.Result
	group *chaos.SkipGroup
}

// scenarioRows is the rows of s's table: each scenario in run order, but
// each group of groups (chaos.SkipGroups of s) with several scenarios is
// one row, where its first scenario comes.
func scenarioRows(s *chaos.Summary, groups []chaos.SkipGroup) []scenarioRow {
	first := map[string]*chaos.SkipGroup{} // a group's first scenario
	in := map[string]bool{}                // scenarios of groups of several
	for i := range groups {
		g := &groups[i]
		if len(g.Results) < 2 {
			continue
		}
		first[g.Results[0].Name] = g
		for _, r := range g.Results {
			in[r.Name] = true
		}
	}
	var rows []scenarioRow
	for _, r := range s.Scenarios {
		switch {
		case r.Verdict != chaos.VerdictSkipped || !in[r.Name]:
			rows = append(rows, scenarioRow{r: r})
		case first[r.Name] != nil:
			rows = append(rows, scenarioRow{group: first[r.Name]})
		}
	}
	return rows
}

// skipLines says each group of skipped scenarios once: what is missing,
// and what to run to provide it.
func skipLines(w io.Writer, groups []chaos.SkipGroup) {
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s\n", g.Line())
		if g.Hint != "" {
			fmt.Fprintf(w, "  to run them: %s\n", g.Hint)
		}
	}
}

// verdictLabel is a scenario's verdict for the tables.
func verdictLabel(r chaos.Result) string {
	switch {
	case r.Verdict == chaos.VerdictSkipped:
		return "SKIP"
	case r.Verdict == chaos.VerdictInterrupted:
		return "INTERRUPTED"
	case r.Verdict == chaos.VerdictError:
		return "ERROR"
	case r.PassedOnRerun:
		return fmt.Sprintf("PASS (run %d)", len(r.Reruns)+1)
	case warned(r):
		return "PASS (warning)"
	case r.Passed:
		return "PASS"
	case r.Verdict == chaos.VerdictInconclusive:
		return "INCONCLUSIVE"
	}
	return "FAIL"
}

func stateWord(state string) string {
	switch state {
	case verify.StateInconclusive:
		return "inconclusive"
	case verify.StateUnverified:
		return "unverified"
	}
	return "failed"
}

func checkNames(cs []verify.Check) string {
	if len(cs) == 0 {
		return ""
	}
	var s []string
	for _, c := range cs {
		s = append(s, c.Name+" "+stateWord(c.State))
	}
	return " (" + strings.Join(s, ", ") + ")"
}

// tally is the one-line count of a summary.
func tally(s *chaos.Summary) string {
	out := fmt.Sprintf("%d passed", s.Passed)
	var notes []string
	if s.PassedOnRerun > 0 {
		notes = append(notes, fmt.Sprintf("%d on a re-run", s.PassedOnRerun))
	}
	if n := countWarned(s); n > 0 {
		notes = append(notes, fmt.Sprintf("%d with a warning", n))
	}
	if len(notes) > 0 {
		out += " (" + strings.Join(notes, ", ") + ")"
	}
	out += fmt.Sprintf(", %d failed", s.Failed)
	if s.Inconclusive > 0 {
		out += fmt.Sprintf(" (%d inconclusive)", s.Inconclusive)
	}
	if s.Skipped > 0 {
		out += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	if s.Errors > 0 {
		out += fmt.Sprintf(", %d could not run (error)", s.Errors)
	}
	if s.Interrupted > 0 {
		out += fmt.Sprintf(", %d interrupted", s.Interrupted)
	}
	if s.Unverified > 0 {
		out += fmt.Sprintf(", %d with unverified checks", s.Unverified)
	}
	return out
}

// serverPolicyMs is r's server waits in policy time, the time base of its
// client waits: each wall-clock gap divided by the scenario's time scale.
// result.json keeps the gaps as measured (DelaysMs.Server, wall clock).
func serverPolicyMs(r chaos.Result) []int64 {
	if r.TimeScale <= 0 || r.TimeScale == 1 {
		return r.DelaysMs.Server
	}
	out := make([]int64, len(r.DelaysMs.Server))
	for i, ms := range r.DelaysMs.Server {
		out[i] = int64(math.Round(float64(ms) / r.TimeScale))
	}
	return out
}

// scaleNote says, under a table of waits, that they are in policy time,
// and once which scenarios with waits ran at which time scale (their
// server waits were measured that much shorter), in lines of at most
// width columns (0: no limit) but for a long name; nil when every one ran
// at time scale 1.
func scaleNote(s *chaos.Summary, width int) []string {
	var scales []float64
	byScale := map[float64][]string{}
	for _, r := range s.Scenarios {
		if r.TimeScale <= 0 || r.TimeScale == 1 || len(r.DelaysMs.Client)+len(r.DelaysMs.Server) == 0 {
			continue
		}
		if byScale[r.TimeScale] == nil {
			scales = append(scales, r.TimeScale)
		}
		byScale[r.TimeScale] = append(byScale[r.TimeScale], r.Name)
	}
	if len(scales) == 0 {
		return nil
	}
	slices.Sort(scales)
	out := []string{"", "Waits in policy time: a server wait is the gap measured ÷ the time scale."}
	for _, sc := range scales {
		line := fmt.Sprintf("  time scale %g:", sc)
		for i, name := range byScale[sc] {
			if i < len(byScale[sc])-1 {
				name += ","
			}
			if i > 0 && width > 0 && len(line)+1+len(name) > width {
				out = append(out, line)
				line = "   "
			}
			line += " " + name
		}
		out = append(out, line)
	}
	return out
}

func msList(ms []int64) string {
	if len(ms) == 0 {
		return "-"
	}
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = fmt.Sprintf("%dms", m)
	}
	return strings.Join(s, " ")
}
