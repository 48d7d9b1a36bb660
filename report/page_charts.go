package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/retrylab/retrylab/trace/analyze"
)

func analysisCards(a *analyze.Analysis) []card {
	r := a.Requests
	cards := []card{
		{Label: "Requests", Value: strconv.FormatInt(r.Total, 10), Detail: fmt.Sprintf("%d ok, %d failed, %s", r.Succeeded, r.Failed, anCount(r.Retries, "retry"))},
		{Label: "Retry rate", Value: anPct(r.RetryRate), Detail: anIntervalHeader(a) + " " + anInterval(a, r.RetryRate, r.Total)},
		{Label: "Failure rate", Value: anPct(r.FailureRate), Detail: anIntervalHeader(a) + " " + anInterval(a, r.FailureRate, r.Total)},
		{Label: "Escalations", Value: strconv.FormatInt(a.Escalations.Total, 10), Detail: fmt.Sprintf("rate %s over %s", anPct(a.Escalations.Rate), anCount(int64(a.Escalations.Runs), "run"))},
	}
	states := map[string]int64{}
	var firing []string
	for _, al := range a.Alerts {
		states[al.State]++
		if al.State == analyze.StateFiring {
			firing = append(firing, al.Name)
		}
	}
	var parts []string
	for _, k := range anSortedKeys(states) {
		parts = append(parts, fmt.Sprintf("%d %s", states[k], k))
	}
	c := card{Label: "Alerts", Value: "none", State: "ok"}
	if len(a.Alerts) > 0 {
		c.Value = strings.Join(parts, ", ")
	}
	switch {
	case states[analyze.StateFiring] > 0:
		c.State, c.Detail = "firing", "firing: "+capJoin(firing, 5)
	case states[analyze.StateWarning] > 0:
		c.State = "warning"
	}
	return append(cards, c)
}

func capJoin(s []string, n int) string {
	if len(s) <= n {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:n], ", ") + fmt.Sprintf(" and %d more", len(s)-n)
}

// barChart is a horizontal bar chart of counts, with its text table.
type barChart struct {
	ID, Title, Desc, Unit string
	Width, Height         int
	Bars                  []bar
	More                  int // categories not drawn
}

type bar struct {
	Label       string
	Count       int64
	Y, W, TextY int
}

const (
	chartLabelW = 200
	chartBarW   = 440
	chartRowH   = 24
)

func newBarChart(id, title, unit string, labels []string, counts []int64) barChart {
	c := barChart{ID: id, Title: title, Unit: unit, Width: chartLabelW + chartBarW + 90}
	var max, total int64
	for _, n := range counts {
		max = maxI(max, n)
		total += n
	}
	for i, l := range labels {
		if i == pageMaxBars {
			c.More = len(labels) - i
			break
		}
		w := 0
		if max > 0 {
			w = int(float64(chartBarW) * float64(counts[i]) / float64(max))
		}
		if counts[i] > 0 && w < 2 {
			w = 2
		}
		y := 8 + i*chartRowH
		c.Bars = append(c.Bars, bar{Label: l, Count: counts[i], Y: y, W: w, TextY: y + 15})
	}
	c.Height = 16 + len(c.Bars)*chartRowH
	c.Desc = fmt.Sprintf("Horizontal bars, one per %s, %d in all, total %d.", unit, len(labels), total)
	if len(labels) == 0 {
		c.Desc = "No data."
		c.Height = 16
	}
	return c
}

func maxI(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func sortedCountChart(id, title, unit string, m map[string]int64) barChart {
	keys := anSortedKeys(m)
	counts := make([]int64, len(keys))
	labels := make([]string, len(keys))
	for i, k := range keys {
		counts[i], labels[i] = m[k], anCell(k)
	}
	return newBarChart(id, title, unit, labels, counts)
}

func analysisBarCharts(a *analyze.Analysis) []barChart {
	out := []barChart{
		sortedCountChart("failures-by-type", "Failed attempts by failure type", "failure type", a.Attempts.ByFailureType),
		sortedCountChart("failures-by-status", "Failed attempts by HTTP status", "status", a.Attempts.ByStatus),
	}
	if !a.FromJSON {
		var labels []string
		var counts []int64
		prev := "0"
		for i, b := range analyze.HistogramBoundsMs {
			labels = append(labels, prev+" – "+anDur(b))
			counts = append(counts, a.DelayHist.Counts[i])
			prev = anDur(b)
		}
		labels = append(labels, "over "+prev)
		counts = append(counts, a.DelayHist.Counts[len(analyze.HistogramBoundsMs)])
		h := newBarChart("wait-distribution", "Distribution of waits before a retry", "wait range", labels, counts)
		h.Desc = fmt.Sprintf("Horizontal bars, one per wait range, counting %s; p50 %s, p90 %s, p99 %s, max %s.",
			anCount(a.Attempts.DelayMs.Count, "wait"), anDur(a.Attempts.DelayMs.P50), anDur(a.Attempts.DelayMs.P90),
			anDur(a.Attempts.DelayMs.P99), anDur(a.Attempts.DelayMs.Max))
		out = append(out, h)
	}
	return out
}

// rateChart draws a rate per group as a bar with its interval as a whisker.
type rateChart struct {
	ID, Title, Desc, Interval string
	Width, Height             int
	Rows                      []rateRow
	More                      int
}

type rateRow struct {
	Label, Rate, Lo, Hi       string
	N                         int64
	Y, TextY, MidY, W, X1, X2 int
}

func analysisRateCharts(a *analyze.Analysis, suffix string) []rateChart {
	if len(a.Groups) == 0 {
		return nil
	}
	by := strings.Join(a.By, "/")
	mk := func(id, what string, rate func(analyze.Group) float64) rateChart {
		c := rateChart{ID: id, Title: fmt.Sprintf("%s per %s", what, by), Interval: anIntervalHeader(a), Width: chartLabelW + chartBarW + 230}
		type rr struct {
			label     string
			p, lo, hi float64
			n         int64
		}
		var rows []rr
		maxHi := 0.0
		for i, g := range a.Groups {
			if i == pageMaxBars {
				c.More = len(a.Groups) - i
				break
			}
			var ks []string
			for _, d := range a.By {
				ks = append(ks, anCell(pageClean(g.Keys[d])))
			}
			p := rate(g)
			lo, hi := analyze.RateBounds(p, g.Total, a.Confidence)
			rows = append(rows, rr{strings.Join(ks, " / "), p, lo, hi, g.Total})
			maxHi = math.Max(maxHi, hi)
		}
		if maxHi <= 0 {
			maxHi = 1
		}
		x := func(f float64) int { return chartLabelW + int(float64(chartBarW)*f/maxHi) }
		for i, r := range rows {
			y := 8 + i*chartRowH
			c.Rows = append(c.Rows, rateRow{Label: r.label, Rate: anPct(r.p), Lo: anPct(r.lo), Hi: anPct(r.hi), N: r.n,
				Y: y, TextY: y + 15, MidY: y + 9, W: x(r.p) - chartLabelW, X1: x(r.lo), X2: x(r.hi)})
		}
		c.Height = 16 + len(c.Rows)*chartRowH
		c.Desc = fmt.Sprintf("%s per group as bars from 0, scaled to %s, with a whisker from the lower to the upper bound of the %s; %s.",
			what, anPct(maxHi), c.Interval, anCount(int64(len(a.Groups)), "group"))
		return c
	}
	return []rateChart{
		mk("retry-rate-per-group"+suffix, "Retry rate", func(g analyze.Group) float64 { return g.RetryRate }),
		mk("failure-rate-per-group"+suffix, "Failure rate", func(g analyze.Group) float64 { return g.FailureRate }),
	}
}
