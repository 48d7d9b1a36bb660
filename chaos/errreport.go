package chaos

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/retrylab/retrylab/retry/errreport"
	"github.com/retrylab/retrylab/trace"
)

// A client that gives up on a request says why and what a person must do
// about it in an ErrorReport event (seed 001; the built-in client writes
// one, and so may any client, into its trace). The runner reads them from
// the trace, never from its own state, so every client is shown the same
// way: in result.json (Result.ErrorReports), in report.txt in the
// scenario's folder (seed 001's boxed UNRECOVERABLE ERROR or RETRIES
// EXHAUSTED, as errreport.Report.Render lays it out), in a progress line, and
// by the renderers of package report.

// maxErrorReports is how many ErrorReport events a result keeps: a client
// that gives up on every one of a thousand requests says the same thing a
// thousand times.
const maxErrorReports = 5

// reportFile is the rendered reports' file in a scenario's folder.
const reportFile = "report.txt"

// addErrorReport keeps ev, made safe to show, or counts it past
// maxErrorReports. An event whose payload is not an ErrorReport's shape is
// ignored (the trace's analysis still counts it).
func (ob *Observed) addErrorReport(ev trace.Event) {
	if len(ob.ErrorReports) >= maxErrorReports {
		ob.ErrorReportsOmitted++
		return
	}
	var p trace.ErrorReport
	if ev.Decode(&p) != nil {
		return
	}
	ob.ErrorReports = append(ob.ErrorReports, safeErrorReport(p))
}

// safeErrorReport is p as errreport.FromEvent leaves it: every string
// bounded, stripped of control characters and of anything that looks like
// a key; lists bounded in length.
func safeErrorReport(p trace.ErrorReport) trace.ErrorReport {
	return errreport.FromEvent(p).Event()
}

// scrubErrorReports removes the keys the client sent from every string of
// res's reports (the rest of a key's forms, those that look like one, are
// gone already).
func (s *secrets) scrubErrorReports(res *Result) {
	for i := range res.ErrorReports {
		res.ErrorReports[i].MapStrings(s.scrub)
	}
}

// writeErrorReports writes res's reports to report.txt in dir, as seed
// 001 shows them (plain text, 80 columns, one after the other), and says
// so in a progress line per report.
func (r *Runner) writeErrorReports(name, dir string, res *Result) {
	if len(res.ErrorReports) == 0 {
		return
	}
	var b bytes.Buffer
	var lines []string
	for i, ev := range res.ErrorReports {
		if i > 0 {
			b.WriteString("\n")
		}
		rep := errreport.FromEvent(ev)
		_ = rep.Render(&b, errreport.Style{Width: 80})
		lines = append(lines, rep.Line())
	}
	if res.ErrorReportsOmitted > 0 {
		fmt.Fprintf(&b, "\n... and %d more ErrorReport events in trace.jsonl\n", res.ErrorReportsOmitted)
	}
	path := filepath.Join(dir, reportFile)
	if err := WriteFileAtomic(path, b.Bytes()); err != nil {
		r.logf(name, "writing %s: %v", reportFile, err)
		return
	}
	for _, l := range lines {
		r.logf(name, "the client gave up: %s (%s)", l, path)
	}
}
