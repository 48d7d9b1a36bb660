package chaos

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/retry/errreport"
)

// A client that gives up on a request says why and what a person must do
// about it in an ErrorReport event (seed 001; the built-in client writes
// one, and so may any client, into its trace). The runner reads them from
// the trace, never from its own state, so every client is shown the same
// way: in result.json (Result.ErrorReports), in report.txt in the
// scenario's folder (seed 001's boxed UNRECOVERABLE ERROR or RETRIES
// EXHAUSTED, as errreport.Report.Render lays it out), in a progress line, and
// by the renderers of package report.

// reportFile is the rendered reports' file in a scenario's folder.
const reportFile = "report.txt"

// scrubErrorReports removes the keys the client sent from every string of
// res's reports (the rest of a key's forms, those that look like one, are
// gone already).
func scrubErrorReports(s *redact.Secrets, res *Result) {
	for i := range res.ErrorReports {
		res.ErrorReports[i].MapStrings(s.Scrub)
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
	if err := runfolder.WriteFileAtomic(path, b.Bytes()); err != nil {
		r.logf(name, "writing %s: %v", reportFile, err)
		return
	}
	for _, l := range lines {
		r.logf(name, "the client gave up: %s (%s)", l, path)
	}
}

// scrubResult removes the known keys from every string of res that a client
// could have influenced. The scenario's name, file and run folder are the
// user's own paths and are left as they are (a run folder must stay findable).
func scrubResult(s *redact.Secrets, res *Result) {
	for _, p := range []*string{&res.Description, &res.Outcome, &res.Client, &res.Error} {
		*p = s.Scrub(*p)
	}
	for i := range res.FailureTypes {
		res.FailureTypes[i] = s.Scrub(res.FailureTypes[i])
	}
	for i := range res.Faults {
		res.Faults[i] = s.Scrub(res.Faults[i])
	}
	for i := range res.Checks {
		c := &res.Checks[i]
		c.Name, c.Want, c.Got, c.Where = s.Scrub(c.Name), s.Scrub(c.Want), s.Scrub(c.Got), s.Scrub(c.Where)
	}
	for i := range res.Escalations {
		e := &res.Escalations[i]
		e.From, e.To, e.Reason = s.Scrub(e.From), s.Scrub(e.To), s.Scrub(e.Reason)
	}
	scrubErrorReports(s, res)
}
