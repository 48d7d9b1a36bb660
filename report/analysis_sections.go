// Package report renders retrylab's results for people and machines: chaos
// runs (table, JSON, Markdown, JUnit XML) and trace analyses (table, JSON,
// Markdown, OpenMetrics). Renderers only format: they compute nothing that
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

// analysisSection is one titled table of an analysis, shared by the table
// and Markdown renderers.
type analysisSection struct {
	title  string
	header []string
	rows   [][]string
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

func anInterval(a *trace.Analysis, p float64, n int64) string {
	lo, hi := trace.Wilson(p, n, a.Z)
	return fmt.Sprintf("[%s, %s]", anPct(lo), anPct(hi))
}

func anMs(v int64) string { return strconv.FormatInt(v, 10) + "ms" }

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
	s := fmt.Sprintf("%d files, %d runs, %d events, %d malformed lines", a.Inputs.Files, a.Inputs.Runs, a.Inputs.Events, a.Inputs.MalformedLines)
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
	ci := "interval (" + anConfidence(a.Z) + ")"
	r := a.Requests
	var out []analysisSection
	rate := func(name string, p float64, n int64) []string {
		return []string{name, anPct(p), strconv.FormatInt(n, 10), anInterval(a, p, n)}
	}
	out = append(out, analysisSection{
		title:  "Requests",
		header: []string{"metric", "value", "n", ci},
		rows: [][]string{
			{"requests", fmt.Sprintf("%d (%d ok, %d failed)", r.Total, r.Succeeded, r.Failed), "", ""},
			{"retries", fmt.Sprintf("%d over %d requests", r.Retries, r.WithRetries), "", ""},
			rate("retry rate", r.RetryRate, r.Total),
			rate("failure rate", r.FailureRate, r.Total),
			rate("recovered rate", r.RecoveredRate, r.WithRetries),
			{"amplification", strconv.FormatFloat(r.Amplification, 'f', 2, 64) + "x", strconv.FormatInt(r.Total, 10), ""},
			{"duration p50/p90/p99/max", fmt.Sprintf("%s / %s / %s / %s", anMs(r.DurationMs.P50), anMs(r.DurationMs.P90), anMs(r.DurationMs.P99), anMs(r.DurationMs.Max)), strconv.FormatInt(r.Total, 10), ""},
		},
	})
	d := a.Attempts.DelayMs
	att := analysisSection{
		title:  "Failed attempts",
		header: []string{"failure type / status", "attempts", "share"},
	}
	share := func(n int64) string {
		if a.Attempts.Failed == 0 {
			return "-"
		}
		return anPct(float64(n) / float64(a.Attempts.Failed))
	}
	for _, k := range anSortedKeys(a.Attempts.ByFailureType) {
		att.rows = append(att.rows, []string{k, strconv.FormatInt(a.Attempts.ByFailureType[k], 10), share(a.Attempts.ByFailureType[k])})
	}
	for _, k := range anSortedKeys(a.Attempts.ByStatus) {
		att.rows = append(att.rows, []string{"HTTP " + k, strconv.FormatInt(a.Attempts.ByStatus[k], 10), share(a.Attempts.ByStatus[k])})
	}
	att.rows = append(att.rows,
		[]string{"total", strconv.FormatInt(a.Attempts.Failed, 10), ""},
		[]string{"retry delays p50/p90/p99/max", fmt.Sprintf("%s / %s / %s / %s", anMs(d.P50), anMs(d.P90), anMs(d.P99), anMs(d.Max)),
			fmt.Sprintf("%d waits, %s in all", d.Count, anMs(d.Total))})
	out = append(out, att)

	e := a.Escalations
	esc := analysisSection{title: "Escalations", header: []string{"from", "to", "count"}}
	for _, p := range e.ByPath {
		esc.rows = append(esc.rows, []string{p.From, p.To, strconv.FormatInt(p.Count, 10)})
	}
	for _, k := range anSortedKeys(e.ByReason) {
		esc.rows = append(esc.rows, []string{"reason", k, strconv.FormatInt(e.ByReason[k], 10)})
	}
	esc.rows = append(esc.rows, []string{"total", fmt.Sprintf("%d in %d of %d runs", e.Total, e.Runs, a.Inputs.Runs), anPct(e.Rate)})
	out = append(out, esc)

	if len(a.Groups) > 0 {
		g := analysisSection{title: "By " + strings.Join(a.By, ", ")}
		g.header = append(slices.Clone(a.By), "requests", "retry rate", ci, "failure rate", ci)
		for _, gr := range a.Groups {
			var row []string
			for _, dim := range a.By {
				row = append(row, gr.Keys[dim])
			}
			row = append(row, strconv.FormatInt(gr.Total, 10),
				anPct(gr.RetryRate), anInterval(a, gr.RetryRate, gr.Total),
				anPct(gr.FailureRate), anInterval(a, gr.FailureRate, gr.Total))
			g.rows = append(g.rows, row)
		}
		out = append(out, g)
	}

	m := analysisSection{title: "Metrics", header: []string{"metric", "value", "n", ci}}
	for _, name := range trace.MetricNames {
		v, n, isRate, _ := a.Metric(name)
		if isRate {
			m.rows = append(m.rows, []string{name, anPct(v), strconv.FormatInt(n, 10), anInterval(a, v, n)})
		} else {
			m.rows = append(m.rows, []string{name, anNum(v), strconv.FormatInt(n, 10), "-"})
		}
	}
	out = append(out, m)

	if len(a.Alerts) > 0 {
		al := analysisSection{title: "Alerts", header: []string{"alert", "condition", "value", "n", "interval", "state"}}
		for _, r := range a.Alerts {
			_, _, isRate, _ := a.Metric(r.Metric)
			val, iv, thr := anNum(r.Value), "-", anNum(r.Threshold)
			if isRate {
				val, iv, thr = anPct(r.Value), fmt.Sprintf("[%s, %s]", anPct(r.Lower), anPct(r.Upper)), anPct(r.Threshold)
			}
			al.rows = append(al.rows, []string{r.Name, r.Metric + " " + r.Op + " " + thr, val, strconv.FormatInt(r.Samples, 10), iv, anState(r.State)})
		}
		out = append(out, al)
	}
	return out
}

func anState(s string) string {
	if s == trace.StateFiring {
		return "FIRING"
	}
	return s
}
