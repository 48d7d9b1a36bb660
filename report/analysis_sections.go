package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrylab/retrylab/trace/analyze"
)

// analysisSection is one titled table of an analysis, shared by the table,
// Markdown and HTML renderers. summary, if set, is a sentence shown before
// the table; a section without rows shows only its summary.
type analysisSection struct {
	title   string
	summary string
	header  []string
	rows    [][]string
	// state, for the alerts table, is each row's alert state (for colour).
	state []string
	// note, if set, is a sentence shown after the table.
	note string
}

func anPct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func anNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', 3, 64)
}

// anConfidence returns the one-sided confidence level c, e.g. "95%".
func anConfidence(c float64) string {
	return fmt.Sprintf("%.3g%%", 100*anConf(c))
}

// anTwoSided returns the two-sided level of the interval between the lower
// and upper one-sided bounds of confidence c: "90%" for c = 0.95.
func anTwoSided(c float64) string {
	return fmt.Sprintf("%.3g%%", 100*(2*anConf(c)-1))
}

// anConf is c, or analyze.DefaultConfidence for an analysis that has none.
func anConf(c float64) float64 {
	if c == 0 {
		return analyze.DefaultConfidence
	}
	return c
}

// anIntervalHeader labels the interval columns: the two one-sided bounds
// of --confidence c together make a two-sided 2c−1 interval.
func anIntervalHeader(a *analyze.Analysis) string { return anTwoSided(a.Confidence) + " interval" }

// anIntervalNote says what the intervals are, for the sections that show them.
func anIntervalNote(a *analyze.Analysis) string {
	return fmt.Sprintf("Intervals are exact binomial (Clopper–Pearson) intervals: each bound is one-sided %s (--confidence), so together they cover at least %s. Rate alerts fire on one of these bounds.",
		anConfidence(a.Confidence), anTwoSided(a.Confidence))
}

func anInterval(a *analyze.Analysis, p float64, n int64) string {
	lo, hi := analyze.RateBounds(p, n, a.Confidence)
	return fmt.Sprintf("[%s, %s]", anPct(lo), anPct(hi))
}

// anDur formats milliseconds for people: 350ms, 2.0s, 81.6s, 2.5min, 1.2h.
func anDur(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + "ms"
	case ms < 100_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
	case ms < 100*60_000:
		return strconv.FormatFloat(float64(ms)/60_000, 'f', 1, 64) + "min"
	default:
		return strconv.FormatFloat(float64(ms)/3_600_000, 'f', 1, 64) + "h"
	}
}

// anCount writes "1 file", "2 files".
func anCount(n int64, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "y"):
		return strconv.FormatInt(n, 10) + " " + strings.TrimSuffix(noun, "y") + "ies"
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

// anCell shows an empty value (a request without a model, say) as "(none)".
func anCell(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// anSortedKeys returns m's keys, the largest counts first.
func anSortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int { return cmp.Or(cmp.Compare(m[y], m[x]), strings.Compare(x, y)) })
	return keys
}

func anInputs(a *analyze.Analysis) string {
	s := fmt.Sprintf("%s, %s, %s, %s", anCount(int64(a.Inputs.Files), "file"), anCount(int64(a.Inputs.Runs), "run"),
		anCount(a.Inputs.Events, "event"), anCount(a.Inputs.MalformedLines, "malformed line"))
	if len(a.Inputs.UnknownTypes) > 0 {
		m := map[string]int64{}
		for k, v := range a.Inputs.UnknownTypes {
			m[k] = int64(v)
		}
		var parts []string
		for _, k := range anSortedKeys(m) {
			parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
		}
		s += ", unknown types: " + strings.Join(parts, " ")
	}
	return s
}

// analysisSections lays an analysis out as the tables people read.
func analysisSections(a *analyze.Analysis) []analysisSection {
	var out []analysisSection
	for _, build := range []func(*analyze.Analysis) []analysisSection{
		requestsSections, timingSections, failedAttemptSections, escalationSections, groupSections,
		analysisExtraSections, metricSections, alertSections,
	} {
		out = append(out, build(a)...)
	}
	return out
}

// anN formats a count.
func anN(v int64) string { return strconv.FormatInt(v, 10) }

func requestsSections(a *analyze.Analysis) []analysisSection {
	r := a.Requests
	rate := func(name string, p float64, k int64) []string {
		return []string{name, anPct(p), anN(k), anInterval(a, p, k)}
	}
	return []analysisSection{{
		title: "Requests",
		summary: fmt.Sprintf("%s (%d ok, %d failed); %s over %s; %sx attempts per request.",
			anCount(r.Total, "request"), r.Succeeded, r.Failed, anCount(r.Retries, "retry"), anCount(r.WithRetries, "request"),
			strconv.FormatFloat(r.Amplification, 'f', 2, 64)),
		header: []string{"rate", "value", "n", anIntervalHeader(a)},
		rows: [][]string{
			rate("retry rate", r.RetryRate, r.Total),
			rate("failure rate", r.FailureRate, r.Total),
			rate("recovered rate", r.RecoveredRate, r.WithRetries),
		},
	}}
}

func timingSections(a *analyze.Analysis) []analysisSection {
	r := a.Requests
	d, q := a.Attempts.DelayMs, r.DurationMs
	return []analysisSection{{
		title:  "Timing",
		header: []string{"", "count", "total", "p50", "p90", "p99", "max"},
		rows: [][]string{
			{"request duration", anN(r.Total), anDur(a.DurationHist.SumMs), anDur(q.P50), anDur(q.P90), anDur(q.P99), anDur(q.Max)},
			{"wait before a retry", anN(d.Count), anDur(d.Total), anDur(d.P50), anDur(d.P90), anDur(d.P99), anDur(d.Max)},
		},
	}}
}

func failedAttemptSections(a *analyze.Analysis) []analysisSection {
	share := func(k int64) string {
		if a.Attempts.Failed == 0 {
			return "-"
		}
		return anPct(float64(k) / float64(a.Attempts.Failed))
	}
	byType := analysisSection{
		title:   "Failed attempts by failure type",
		summary: anCount(a.Attempts.Failed, "failed attempt") + ".",
		header:  []string{"failure type", "attempts", "share"},
	}
	for _, k := range anSortedKeys(a.Attempts.ByFailureType) {
		byType.rows = append(byType.rows, []string{anCell(k), anN(a.Attempts.ByFailureType[k]), share(a.Attempts.ByFailureType[k])})
	}
	out := []analysisSection{byType}
	if len(a.Attempts.ByStatus) > 0 {
		byStatus := analysisSection{title: "Failed attempts by HTTP status", header: []string{"status", "attempts", "share"}}
		for _, k := range anSortedKeys(a.Attempts.ByStatus) {
			byStatus.rows = append(byStatus.rows, []string{k, anN(a.Attempts.ByStatus[k]), share(a.Attempts.ByStatus[k])})
		}
		out = append(out, byStatus)
	}
	return out
}

func escalationSections(a *analyze.Analysis) []analysisSection {
	e := a.Escalations
	byPath := analysisSection{
		title: "Escalations by path",
		summary: fmt.Sprintf("%s in %d of %s (%s of runs).",
			anCount(e.Total, "escalation"), e.Runs, anCount(int64(a.Inputs.Runs), "run"), anPct(e.Rate)),
		header: []string{"from", "to", "count"},
	}
	for _, p := range e.ByPath {
		byPath.rows = append(byPath.rows, []string{anCell(p.From), anCell(p.To), anN(p.Count)})
	}
	out := []analysisSection{byPath}
	if len(e.ByReason) > 0 {
		byReason := analysisSection{title: "Escalations by reason", header: []string{"reason", "count"}}
		for _, k := range anSortedKeys(e.ByReason) {
			byReason.rows = append(byReason.rows, []string{anCell(k), anN(e.ByReason[k])})
		}
		out = append(out, byReason)
	}
	return out
}

func groupSections(a *analyze.Analysis) []analysisSection {
	if len(a.Groups) == 0 {
		return nil
	}
	ci := anIntervalHeader(a)
	g := analysisSection{title: "By " + strings.Join(a.By, ", ")}
	g.header = append(slices.Clone(a.By), "requests", "retry rate", ci, "failure rate", ci)
	for _, gr := range a.Groups {
		var row []string
		for _, dim := range a.By {
			row = append(row, anCell(gr.Keys[dim]))
		}
		row = append(row, anN(gr.Total),
			anPct(gr.RetryRate), anInterval(a, gr.RetryRate, gr.Total),
			anPct(gr.FailureRate), anInterval(a, gr.FailureRate, gr.Total))
		g.rows = append(g.rows, row)
	}
	return []analysisSection{g}
}

func metricSections(a *analyze.Analysis) []analysisSection {
	m := analysisSection{title: "Metrics", header: []string{"metric", "value", "n", anIntervalHeader(a)}}
	for _, d := range analyze.Registry {
		v, k := d.Value(a)
		m.rows = append(m.rows, []string{d.Name, anMetric(d, v), anN(k), anMetricInterval(a, d, v, k)})
	}
	return []analysisSection{m}
}

func alertSections(a *analyze.Analysis) []analysisSection {
	al := analysisSection{title: "Alerts", header: []string{"alert", "condition", "value", "n", anIntervalHeader(a), "state"}}
	if len(a.Alerts) == 0 {
		al.summary = "No alerts configured."
	}
	for _, r := range a.Alerts {
		d, _ := analyze.LookupMetric(r.Metric)
		val, iv, thr := anMetric(d, r.Value), "-", anMetric(d, r.Threshold)
		if d.IsRate() {
			val, iv, thr = anPct(r.Value), fmt.Sprintf("[%s, %s]", anPct(r.Lower), anPct(r.Upper)), anPct(r.Threshold)
		}
		al.rows = append(al.rows, []string{r.Name, r.Metric + " " + r.Op + " " + thr, val, anN(r.Samples), iv, anState(r.State)})
		al.state = append(al.state, r.State)
	}
	al.note = anIntervalNote(a)
	return []analysisSection{al}
}

func anState(s string) string {
	if s == analyze.StateFiring {
		return "FIRING"
	}
	return s
}

// anMetric formats a metric's value: a percentage for a rate, seconds for a
// duration, else a number.
func anMetric(d analyze.MetricDef, v float64) string {
	switch {
	case d.IsRate():
		return anPct(v)
	case d.Unit == "seconds":
		return anNum(v) + "s"
	}
	return anNum(v)
}

func anMetricInterval(a *analyze.Analysis, d analyze.MetricDef, v float64, k int64) string {
	if d.IsRate() {
		return anInterval(a, v, k)
	}
	return "-"
}

// anIDs lists ids with the count of the rest: "r1, r2 and 3 more".
func anIDs(l analyze.IDList) string {
	if len(l.IDs) == 0 {
		return "none"
	}
	s := strings.Join(l.IDs, ", ")
	if l.More > 0 {
		s += fmt.Sprintf(" and %d more", l.More)
	}
	return s
}

// anCountRows makes [key, count] rows of m, the largest counts first.
func anCountRows(m map[string]int64) [][]string {
	var rows [][]string
	for _, k := range anSortedKeys(m) {
		rows = append(rows, []string{anCell(k), strconv.FormatInt(m[k], 10)})
	}
	return rows
}

// analysisExtraSections lays out the issue 9 figures: seed 003's L2/L3
// runs, seed 004's recovery and error messages, seed 002's tickets, and the
// retry core's events. Sections without data are left out, except those
// of requests.
func analysisExtraSections(a *analyze.Analysis) []analysisSection {
	var out []analysisSection
	for _, build := range []func(*analyze.Analysis) []analysisSection{
		retriesSections, errorMessageSections, orchestratorSections, ticketSections, retryCoreSections,
	} {
		out = append(out, build(a)...)
	}
	return out
}

// anPctOf is k/total as a percentage, "-" without a total.
func anPctOf(k, total int64) string {
	if total == 0 {
		return "-"
	}
	return anPct(float64(k) / float64(total))
}

// retriesSections: retries per request and recovery (seeds 003, 004).
func retriesSections(a *analyze.Analysis) []analysisSection {
	r := a.Requests
	if r.Total == 0 {
		return nil
	}
	rp := analysisSection{title: "Retries per request", header: []string{"retries", "requests", "share"}}
	for _, b := range r.RetriesPerRequest {
		if b.Count > 0 {
			rp.rows = append(rp.rows, []string{b.Value, anN(b.Count), anPctOf(b.Count, r.Total)})
		}
	}
	rec := a.Recovery
	t := rec.TimeToRecoveryMs
	return []analysisSection{rp, {
		title: "Recovery",
		summary: fmt.Sprintf("%d of %s that failed at least once recovered (%s).",
			rec.Recovered, anCount(rec.FailedOnce, "request"), anPct(rec.Rate)),
		header: []string{"", "count", "mean", "p50", "p90", "p99", "max"},
		rows: [][]string{{"time to recovery", anN(t.Count), anDur(int64(math.Round(t.Mean))),
			anDur(t.P50), anDur(t.P90), anDur(t.P99), anDur(t.Max)}},
	}}
}

// errorMessageSections: the top error messages, overall and by model (seed 004).
func errorMessageSections(a *analyze.Analysis) []analysisSection {
	em := a.ErrorMessages
	if em.Total == 0 {
		return nil
	}
	top := analysisSection{title: "Top error messages",
		summary: anCount(em.Total, "failed attempt") + " with a message; numbers, ids, hex, UUIDs and quoted values are replaced by <n>, <id>, <hex>, <uuid> and \"<…>\".",
		header:  []string{"message", "attempts", "share"}}
	for _, m := range em.Top {
		top.rows = append(top.rows, []string{m.Message, anN(m.Count), anPctOf(m.Count, em.Total)})
	}
	if em.Other > 0 {
		top.rows = append(top.rows, []string{analyze.OtherMessages, anN(em.Other), anPctOf(em.Other, em.Total)})
	}
	byModel := analysisSection{title: "Top error messages by model", header: []string{"model", "message", "attempts"}}
	for _, mm := range em.ByModel {
		for _, m := range mm.Top {
			byModel.rows = append(byModel.rows, []string{anCell(mm.Model), m.Message, anN(m.Count)})
		}
		if mm.Other > 0 {
			byModel.rows = append(byModel.rows, []string{anCell(mm.Model), analyze.OtherMessages, anN(mm.Other)})
		}
	}
	return []analysisSection{top, byModel}
}

// orchestratorSections: L2/L3 runs and stops (seed 003).
func orchestratorSections(a *analyze.Analysis) []analysisSection {
	o := a.Orchestrator
	if !(o.L3Runs > 0 || o.Candidates > 0 || o.Verifications > 0 || len(o.RunStoppedByReason) > 0 ||
		o.EscalatedRuns.Count > 0 || o.RepairIterations.Runs > 0) {
		return nil
	}
	ri := o.RepairIterations
	sec := analysisSection{
		title: "L2/L3 runs",
		summary: fmt.Sprintf("Judge invoked in %d of %s with L3 activity (%s); %s, %d valid; %s, %d passed. Escalated runs (%d): %s.",
			o.JudgeRuns, anCount(int64(o.L3Runs), "run"), anCount(o.JudgeInvocations, "invocation"),
			anCount(o.Candidates, "candidate"), o.ValidCandidates, anCount(o.Verifications, "verification"), o.VerificationsPassed,
			o.EscalatedRuns.Count, anIDs(o.EscalatedRuns)),
		header: []string{"max repair iteration", "runs"},
		note:   fmt.Sprintf("Runs above %s repair iterations (%d): %s.", anNum(ri.Threshold), ri.Above.Count, anIDs(ri.Above)),
	}
	for _, b := range ri.Distribution {
		if b.Count > 0 {
			sec.rows = append(sec.rows, []string{b.Value, anN(b.Count)})
		}
	}
	out := []analysisSection{sec}
	if len(o.RunStoppedByReason) > 0 {
		out = append(out, analysisSection{title: "Runs stopped by reason", header: []string{"reason", "count"},
			rows: anCountRows(o.RunStoppedByReason)})
	}
	return out
}

// ticketSections: ticket analytics (seed 002).
func ticketSections(a *analyze.Analysis) []analysisSection {
	t := a.Tickets
	if t.Decisions == 0 && t.Transitions == 0 {
		return nil
	}
	d := t.DelayMs
	sec := analysisSection{
		title: "Tickets",
		summary: fmt.Sprintf("%s in %s; %s retried, %d succeeded after a retry (%s); %d exhausted (last decision shouldRetry false): %s. Retry delays: %d, p50 %s, p90 %s, p99 %s, max %s.",
			anCount(t.Decisions, "retry decision"), anCount(int64(t.Tickets), "ticket"), anCount(int64(t.Retried), "ticket"),
			t.SucceededAfterRetry, anPct(t.RetrySuccessRate), t.Exhausted.Count, anIDs(t.Exhausted),
			d.Count, anDur(d.P50), anDur(d.P90), anDur(d.P99), anDur(d.Max)),
		header: []string{"category", "tickets retried"},
		rows:   anCountRows(t.RetriedByCategory),
	}
	if t.UntrackedDecisions > 0 {
		sec.note = fmt.Sprintf("%s past the first %d tickets are counted but not followed per ticket.", anCount(t.UntrackedDecisions, "decision"), 1<<16)
	}
	out := []analysisSection{sec}
	if t.Transitions > 0 {
		out = append(out, analysisSection{title: "Ticket transitions by event", header: []string{"event", "count"}, rows: anCountRows(t.TransitionsByEvent)})
		out = append(out, analysisSection{title: "Ticket transitions by state entered", header: []string{"to", "count"}, rows: anCountRows(t.TransitionsByTo)})
	}
	return out
}

// retryCoreSections: the retry core's own events (seed 004).
func retryCoreSections(a *analyze.Analysis) []analysisSection {
	rc := a.RetryCore
	if rc.ErrorReports == 0 && rc.EscalationsDeclined == 0 && rc.ErrorContextRetries == 0 {
		return nil
	}
	out := []analysisSection{{title: "Retry core events",
		summary: fmt.Sprintf("%s, %s, %s with error context.", anCount(rc.ErrorReports, "error report"),
			anCount(rc.EscalationsDeclined, "declined escalation"), anCount(rc.ErrorContextRetries, "retry"))}}
	if rc.ErrorReports > 0 {
		out = append(out, analysisSection{title: "Error reports by failure type", header: []string{"failure type", "reports"}, rows: anCountRows(rc.ErrorReportsByFailureType)})
		out = append(out, analysisSection{title: "Error reports by category", header: []string{"category", "reports"}, rows: anCountRows(rc.ErrorReportsByCategory)})
	}
	if rc.EscalationsDeclined > 0 {
		out = append(out, analysisSection{title: "Declined escalations by reason", header: []string{"reason", "count"}, rows: anCountRows(rc.EscalationsDeclinedByReason)})
		out = append(out, analysisSection{title: "Declined escalations by why", header: []string{"why", "count"}, rows: anCountRows(rc.EscalationsDeclinedByWhy)})
	}
	return out
}
