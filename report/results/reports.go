package results

import (
	"fmt"
	"html"
	"io"
	"path/filepath"
	"strings"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/report"
	"github.com/retrylab/retrylab/retry/errreport"
)

// A scenario whose client gave up on a request carries the client's
// ErrorReport events (report.CleanReport says how they are made safe to
// show): the table shows them under the scenario (the first unrecoverable
// one as the seed's box, without its history; the others in a line), the
// Markdown summary in a collapsible block, JUnit in the suite's system-out.

// reportPath is where a scenario's reports are in its run folder.
func reportPath(r chaos.Result) string { return filepath.Join(r.Dir, "report.txt") }

// tableReports writes under a scenario of the table what its client gave
// up on: with box (one scenario of the table: boxedScenario), its first
// unrecoverable report as the seed's box (its history is in report.txt),
// every other one in a line, so that a run of many scenarios does not
// print the box's frame and headings once per scenario.
func tableReports(w io.Writer, r chaos.Result, st errreport.Style, box bool) {
	if len(r.ErrorReports) == 0 {
		return
	}
	for _, ev := range r.ErrorReports {
		rep := report.CleanReport(ev)
		if box && rep.Unrecoverable() {
			box = false
			rep.History = nil
			fmt.Fprintf(w, "\n%s: the client gave up (the full report: %s):\n", visibleLine(r.Name), report.Visible(reportPath(r)))
			_ = rep.Render(w, st)
			continue
		}
		fmt.Fprintf(w, "\n%s: the client gave up: %s (%s)\n", visibleLine(r.Name), rep.Line(), report.Visible(reportPath(r)))
	}
	if r.ErrorReportsOmitted > 0 {
		fmt.Fprintf(w, "%s: ... and %d more ErrorReport events in trace.jsonl\n", visibleLine(r.Name), r.ErrorReportsOmitted)
	}
}

// markdownReports writes a section with each scenario's reports, each in a
// collapsible block (open for an unrecoverable one) holding the seed's box
// in a code block.
func markdownReports(w io.Writer, s *chaos.Summary) {
	first := true
	for _, r := range s.Scenarios {
		if len(r.ErrorReports) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(w, "\n### Error reports (the client gave up)")
			first = false
		}
		rep := report.CleanReport(r.ErrorReports[0])
		open := ""
		if rep.Unrecoverable() {
			open = " open"
		}
		fmt.Fprintf(w, "\n<details%s><summary><b>%s</b>: %s</summary>\n\n", open, html.EscapeString(visibleLine(r.Name)), html.EscapeString(rep.Line()))
		text := report.ReportsText(r, errreport.Style{Width: report.ReportWidth}, false)
		fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
		fmt.Fprintf(w, "%stext\n%s%s\n\n</details>\n", fence, text, fence)
	}
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}
