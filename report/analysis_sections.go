// Package report renders retrylab's results for people and machines: chaos
// runs (table, JSON, Markdown, JUnit XML) and trace analyses (table, JSON,
// Markdown, OpenMetrics, HTML). Renderers only format: they compute nothing that
// changes a verdict, and they write data only to the writer they are given.
package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrylab/retrylab/trace"
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

// anConfidence returns the one-sided confidence level of z, e.g. "95%".
func anConfidence(z float64) string {
	return fmt.Sprintf("%.3g%%", 100*0.5*(1+math.Erf(z/math.Sqrt2)))
}

// anTwoSided returns the two-sided level of the interval between the lower
// and upper one-sided bounds of z: "90%" for z = 1.645 (95% each side).
func anTwoSided(z float64) string {
	return fmt.Sprintf("%.3g%%", 100*math.Erf(z/math.Sqrt2))
}

// anIntervalHeader labels the interval columns: the two one-sided bounds
// of --confidence c together make a two-sided 2c−1 interval.
func anIntervalHeader(a *trace.Analysis) string { return anTwoSided(a.Z) + " interval" }

// anIntervalNote says what the intervals are, for the sections that show them.
func anIntervalNote(a *trace.Analysis) string {
	return fmt.Sprintf("Intervals are Wilson score intervals: each bound is one-sided %s (--confidence), so together they cover %s. Alerts compare one bound with the threshold.",
		anConfidence(a.Z), anTwoSided(a.Z))
}

func anInterval(a *trace.Analysis, p float64, n int64) string {
	lo, hi := trace.Wilson(p, n, a.Z)
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
	slices.SortFunc(keys, func(x, y string) int {
		if m[x] != m[y] {
			if m[x] > m[y] {
				return -1
			}
			return 1
		}
		return strings.Compare(x, y)
	})
	return keys
}

func anInputs(a *trace.Analysis) string {
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
func analysisSections(a *trace.Analysis) []analysisSection {
	ci := anIntervalHeader(a)
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	r := a.Requests
	var out []analysisSection
	rate := func(name string, p float64, k int64) []string {
		return []string{name, anPct(p), n(k), anInterval(a, p, k)}
	}
	out = append(out, analysisSection{
		title: "Requests",
		summary: fmt.Sprintf("%s (%d ok, %d failed); %s over %s; %sx attempts per request.",
			anCount(r.Total, "request"), r.Succeeded, r.Failed, anCount(r.Retries, "retry"), anCount(r.WithRetries, "request"),
			strconv.FormatFloat(r.Amplification, 'f', 2, 64)),
		header: []string{"rate", "value", "n", ci},
		rows: [][]string{
			rate("retry rate", r.RetryRate, r.Total),
			rate("failure rate", r.FailureRate, r.Total),
			rate("recovered rate", r.RecoveredRate, r.WithRetries),
		},
	})

	d, q := a.Attempts.DelayMs, r.DurationMs
	out = append(out, analysisSection{
		title:  "Timing",
		header: []string{"", "count", "total", "p50", "p90", "p99", "max"},
		rows: [][]string{
			{"request duration", n(r.Total), anDur(a.DurationHist.SumMs), anDur(q.P50), anDur(q.P90), anDur(q.P99), anDur(q.Max)},
			{"wait before a retry", n(d.Count), anDur(d.Total), anDur(d.P50), anDur(d.P90), anDur(d.P99), anDur(d.Max)},
		},
	})

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
		byType.rows = append(byType.rows, []string{anCell(k), n(a.Attempts.ByFailureType[k]), share(a.Attempts.ByFailureType[k])})
	}
	out = append(out, byType)
	if len(a.Attempts.ByStatus) > 0 {
		byStatus := analysisSection{title: "Failed attempts by HTTP status", header: []string{"status", "attempts", "share"}}
		for _, k := range anSortedKeys(a.Attempts.ByStatus) {
			byStatus.rows = append(byStatus.rows, []string{k, n(a.Attempts.ByStatus[k]), share(a.Attempts.ByStatus[k])})
		}
		out = append(out, byStatus)
	}

	e := a.Escalations
	byPath := analysisSection{
		title: "Escalations by path",
		summary: fmt.Sprintf("%s in %d of %s (%s of runs).",
			anCount(e.Total, "escalation"), e.Runs, anCount(int64(a.Inputs.Runs), "run"), anPct(e.Rate)),
		header: []string{"from", "to", "count"},
	}
	for _, p := range e.ByPath {
		byPath.rows = append(byPath.rows, []string{anCell(p.From), anCell(p.To), n(p.Count)})
	}
	out = append(out, byPath)
	if len(e.ByReason) > 0 {
		byReason := analysisSection{title: "Escalations by reason", header: []string{"reason", "count"}}
		for _, k := range anSortedKeys(e.ByReason) {
			byReason.rows = append(byReason.rows, []string{anCell(k), n(e.ByReason[k])})
		}
		out = append(out, byReason)
	}

	if len(a.Groups) > 0 {
		g := analysisSection{title: "By " + strings.Join(a.By, ", ")}
		g.header = append(slices.Clone(a.By), "requests", "retry rate", ci, "failure rate", ci)
		for _, gr := range a.Groups {
			var row []string
			for _, dim := range a.By {
				row = append(row, anCell(gr.Keys[dim]))
			}
			row = append(row, n(gr.Total),
				anPct(gr.RetryRate), anInterval(a, gr.RetryRate, gr.Total),
				anPct(gr.FailureRate), anInterval(a, gr.FailureRate, gr.Total))
			g.rows = append(g.rows, row)
		}
		out = append(out, g)
	}

	m := analysisSection{title: "Metrics", header: []string{"metric", "value", "n", ci}}
	for _, name := range trace.MetricNames {
		v, k, isRate, _ := a.Metric(name)
		if isRate {
			m.rows = append(m.rows, []string{name, anPct(v), n(k), anInterval(a, v, k)})
		} else {
			m.rows = append(m.rows, []string{name, anNum(v), n(k), "-"})
		}
	}
	out = append(out, m)

	al := analysisSection{title: "Alerts", header: []string{"alert", "condition", "value", "n", ci, "state"}}
	if len(a.Alerts) == 0 {
		al.summary = "No alerts configured."
	}
	for _, r := range a.Alerts {
		_, _, isRate, _ := a.Metric(r.Metric)
		val, iv, thr := anNum(r.Value), "-", anNum(r.Threshold)
		if isRate {
			val, iv, thr = anPct(r.Value), fmt.Sprintf("[%s, %s]", anPct(r.Lower), anPct(r.Upper)), anPct(r.Threshold)
		}
		al.rows = append(al.rows, []string{r.Name, r.Metric + " " + r.Op + " " + thr, val, n(r.Samples), iv, anState(r.State)})
		al.state = append(al.state, r.State)
	}
	al.note = anIntervalNote(a)
	out = append(out, al)
	return out
}

func anState(s string) string {
	if s == trace.StateFiring {
		return "FIRING"
	}
	return s
}
