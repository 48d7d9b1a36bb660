package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/retry/errreport"
	"github.com/retrylab/retrylab/trace"
)

// A scenario whose client gave up on a request carries the client's
// ErrorReport events (chaos.Result.ErrorReports, read from its trace):
// seed 001's report of what happened and what a person must do. Each
// renderer shows them where a person looks: the table under the scenario
// (the first unrecoverable one as the seed's box, without its history;
// the others in a line), the Markdown summary and the HTML page in a
// collapsible block, JUnit in the suite's system-out. A summary may come
// from a file anyone could have written, so every string is cleaned again
// here (cleanReport).

// reportWidth is the width of a report in Markdown, JUnit and HTML, where
// there is no terminal to ask; the table takes its caller's.
const reportWidth = 80

// cleanReport is ev as a errreport.Report made safe to show: keys redacted as
// every label is (RedactLabel), then bounded and stripped of control
// characters (errreport.FromEvent). ev is not changed.
func cleanReport(ev trace.ErrorReport) *errreport.Report {
	ev.Tags, ev.Actions, ev.History = slices.Clone(ev.Tags), slices.Clone(ev.Actions), slices.Clone(ev.History)
	ev.MapStrings(RedactLabel)
	return errreport.FromEvent(ev)
}

// reportsText renders r's reports one after the other in st (brief: without
// their retry history), ending with a note when some were omitted.
func reportsText(r chaos.Result, st errreport.Style, brief bool) string {
	var b bytes.Buffer
	for i, ev := range r.ErrorReports {
		if i > 0 {
			b.WriteString("\n")
		}
		rep := cleanReport(ev)
		if brief {
			rep.History = nil
		}
		_ = rep.Render(&b, st)
	}
	if r.ErrorReportsOmitted > 0 {
		fmt.Fprintf(&b, "\n... and %d more ErrorReport events in trace.jsonl\n", r.ErrorReportsOmitted)
	}
	return b.String()
}

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
		rep := cleanReport(ev)
		if box && rep.Unrecoverable() {
			box = false
			rep.History = nil
			fmt.Fprintf(w, "\n%s: the client gave up (the full report: %s):\n", visibleLine(r.Name), Visible(reportPath(r)))
			_ = rep.Render(w, st)
			continue
		}
		fmt.Fprintf(w, "\n%s: the client gave up: %s (%s)\n", visibleLine(r.Name), rep.Line(), Visible(reportPath(r)))
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
		rep := cleanReport(r.ErrorReports[0])
		open := ""
		if rep.Unrecoverable() {
			open = " open"
		}
		fmt.Fprintf(w, "\n<details%s><summary><b>%s</b>: %s</summary>\n\n", open, html.EscapeString(visibleLine(r.Name)), html.EscapeString(rep.Line()))
		text := reportsText(r, errreport.Style{Width: reportWidth}, false)
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

// reportView is a scenario's reports on the HTML page.
type reportView struct {
	Line, Text string
	Open       bool
}

// pageReports is r's reports for the HTML page: one block, open when the
// first is unrecoverable.
func pageReports(r chaos.Result) *reportView {
	if len(r.ErrorReports) == 0 {
		return nil
	}
	rep := cleanReport(r.ErrorReports[0])
	return &reportView{Line: rep.Line(), Open: rep.Unrecoverable(), Text: reportsText(r, errreport.Style{Width: reportWidth}, false)}
}
