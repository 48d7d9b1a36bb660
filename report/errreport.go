package report

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/retry/errreport"
	"github.com/retrylab/retrylab/trace"
)

// A scenario whose client gave up on a request carries the client's
// ErrorReport events (chaos.Result.ErrorReports, read from its trace):
// seed 001's report of what happened and what a person must do. Each
// renderer shows them where a person looks: the HTML page in a collapsible
// block (pageReports), the table, Markdown and JUnit of report/results as
// that package says. A summary may come from a file anyone could have
// written, so every string is cleaned again here (CleanReport), for all.

// ReportWidth is the width of a report in Markdown, JUnit and HTML, where
// there is no terminal to ask; the table takes its caller's.
const ReportWidth = 80

// CleanReport is ev as a errreport.Report made safe to show: keys redacted as
// every label is (RedactLabel), then bounded and stripped of control
// characters (errreport.FromEvent). ev is not changed.
func CleanReport(ev trace.ErrorReport) *errreport.Report {
	ev.Tags, ev.Actions, ev.History = slices.Clone(ev.Tags), slices.Clone(ev.Actions), slices.Clone(ev.History)
	ev.MapStrings(RedactLabel)
	return errreport.FromEvent(ev)
}

// ReportsText renders r's reports one after the other in st (brief: without
// their retry history), ending with a note when some were omitted.
func ReportsText(r chaos.Result, st errreport.Style, brief bool) string {
	var b bytes.Buffer
	for i, ev := range r.ErrorReports {
		if i > 0 {
			b.WriteString("\n")
		}
		rep := CleanReport(ev)
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
	rep := CleanReport(r.ErrorReports[0])
	return &reportView{Line: rep.Line(), Open: rep.Unrecoverable(), Text: ReportsText(r, errreport.Style{Width: ReportWidth}, false)}
}
