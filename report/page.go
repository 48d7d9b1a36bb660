package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/trace"
)

// Page is what one HTML report shows: an analysis of traces (nil when the
// paths held none) and the chaos runs found in the paths.
type Page struct {
	Analysis *trace.Analysis
	// ByDay, if set, is the same traces analysed by day: its retry and
	// failure rates are drawn per day, with their intervals.
	ByDay *trace.Analysis
	Runs  []*chaos.Summary
	// Inputs, if set, says what was read (shown under the title).
	Inputs string
}

// Caps that keep a page of hundreds of scenarios readable and its size
// bounded: the rest are counted, not drawn.
const (
	pageMaxNotPassed = 500 // scenarios that did not pass, drawn open
	pageMaxPassed    = 500 // passing scenarios, drawn collapsed
	pageMaxAttempts  = 50  // attempts drawn per scenario
	pageMaxBars      = 30  // bars per chart
)

// PageHTML renders p as one self-contained HTML page: inline CSS and SVG,
// no network, no framework. The only script is a one-line error hook that
// marks the page (data-js-error) if anything in it ever throws. Every value
// from the inputs is escaped by html/template; labels pass through
// RedactLabel and Visible first.
func PageHTML(w io.Writer, p Page) error {
	v := pageView{Inputs: p.Inputs}
	if p.Analysis != nil {
		a := safeAnalysis(p.Analysis, true)
		if v.Inputs == "" {
			v.Inputs = anInputs(a)
		}
		v.Cards = analysisCards(a)
		v.Bars = analysisBarCharts(a)
		v.Rates = analysisRateCharts(a, "")
		if p.ByDay != nil && len(p.ByDay.Groups) > 0 {
			v.Rates = append(v.Rates, analysisRateCharts(safeAnalysis(p.ByDay, true), "-by-day")...)
		}
		v.Sections = htmlSections(a)
	}
	if len(p.Runs) > 0 {
		v.Chaos = chaosPageView(p.Runs)
		v.Cards = append(chaosCards(v.Chaos), v.Cards...)
	}
	switch {
	case p.Analysis != nil && len(p.Runs) > 0:
		v.Title = "Retry report"
	case len(p.Runs) > 0:
		v.Title = "Chaos run report"
	default:
		v.Title = "Retry analysis"
	}
	return pageTmpl.Execute(w, v)
}

type pageView struct {
	Title, Inputs string
	Cards         []card
	Bars          []barChart
	Rates         []rateChart
	Sections      []htmlSection
	Chaos         *chaosView
}

// card is one summary figure; State (ok, warning, firing, fail…) is both a
// class and a word, so colour is never the only sign.
type card struct {
	Label, Value, Detail, State string
}

func pageClean(s string) string { return Visible(RedactLabel(s)) }

func analysisCards(a *trace.Analysis) []card {
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
		if al.State == trace.StateFiring {
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
	case states[trace.StateFiring] > 0:
		c.State, c.Detail = "firing", "firing: "+capJoin(firing, 5)
	case states[trace.StateWarning] > 0:
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

func analysisBarCharts(a *trace.Analysis) []barChart {
	out := []barChart{
		sortedCountChart("failures-by-type", "Failed attempts by failure type", "failure type", a.Attempts.ByFailureType),
		sortedCountChart("failures-by-status", "Failed attempts by HTTP status", "status", a.Attempts.ByStatus),
	}
	if !a.FromJSON {
		var labels []string
		var counts []int64
		prev := "0"
		for i, b := range trace.HistogramBoundsMs {
			labels = append(labels, prev+" – "+anDur(b))
			counts = append(counts, a.DelayHist.Counts[i])
			prev = anDur(b)
		}
		labels = append(labels, "over "+prev)
		counts = append(counts, a.DelayHist.Counts[len(trace.HistogramBoundsMs)])
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

func analysisRateCharts(a *trace.Analysis, suffix string) []rateChart {
	if len(a.Groups) == 0 {
		return nil
	}
	by := strings.Join(a.By, "/")
	mk := func(id, what string, rate func(trace.Group) float64) rateChart {
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
			lo, hi := trace.RateBounds(p, g.Total, a.Confidence)
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
		mk("retry-rate-per-group"+suffix, "Retry rate", func(g trace.Group) float64 { return g.RetryRate }),
		mk("failure-rate-per-group"+suffix, "Failure rate", func(g trace.Group) float64 { return g.FailureRate }),
	}
}

// chaosView is the chaos part of the page.
type chaosView struct {
	Runs                             []string
	Total, Passed, Failed, Skipped   int
	Inconclusive, Errors, Interrupts int
	NotPassed, PassedList            []timelineView
	MoreNotPassed, MorePassed        int
}

func chaosCards(c *chaosView) []card {
	st := "ok"
	if c.Failed > 0 || c.Errors > 0 {
		st = "firing"
	}
	return []card{{Label: "Scenarios", Value: fmt.Sprintf("%d passed, %d failed", c.Passed, c.Failed), State: st,
		Detail: fmt.Sprintf("%d in all; %d inconclusive, %d skipped, %d error, %d interrupted", c.Total, c.Inconclusive, c.Skipped, c.Errors, c.Interrupts)}}
}

func chaosPageView(runs []*chaos.Summary) *chaosView {
	c := &chaosView{}
	for ri, s := range runs {
		c.Runs = append(c.Runs, fmt.Sprintf("%s (seed %d, %s)", pageClean(s.RunDir), s.Seed, anDur(s.DurationMs)))
		for _, r := range s.Scenarios {
			c.Total++
			switch {
			case r.Verdict == chaos.VerdictSkipped:
				c.Skipped++
			case r.Verdict == chaos.VerdictInterrupted:
				c.Interrupts++
			case r.Verdict == chaos.VerdictError:
				c.Errors++
			case r.Passed:
				c.Passed++
			default:
				c.Failed++
			}
			if r.Verdict == chaos.VerdictInconclusive {
				c.Inconclusive++
			}
			if r.Passed || r.Verdict == chaos.VerdictSkipped {
				if len(c.PassedList) < pageMaxPassed {
					c.PassedList = append(c.PassedList, timeline(ri, r))
				} else {
					c.MorePassed++
				}
				continue
			}
			if len(c.NotPassed) < pageMaxNotPassed {
				c.NotPassed = append(c.NotPassed, timeline(ri, r))
			} else {
				c.MoreNotPassed++
			}
		}
	}
	return c
}

// timelineView is one scenario's attempts and waits, to scale.
type timelineView struct {
	Run                                 int
	Name, File, Verdict, Word, Outcome  string
	Desc, Note                          string
	Width, Height, AxisY, ScaleLabelX   int
	ScaleLabel                          string
	Rows                                []tlRow
	Checks                              []checkView
	Waits                               []waitRow // text table
	MoreAttempts                        int
	ClientScaled, HasEnvelope, TimeNote bool
	Report                              *reportView // what the client reported when it gave up
}

type tlRow struct {
	Y, TextY     int
	Attempt      bool
	Label        string
	Fault        string
	Wait         int // 1-based
	HasObs       bool
	ObsMs        int64
	ObsW, ObsY   int
	ObsBad       bool
	HasCli       bool
	CliMs        int64
	CliW, CliY   int
	CliBad       bool
	HasEnv       bool
	EnvX, EnvW   int
	EnvText      string
	ValueText    string
	ValueX       int
	AttemptBarW  int
	AttemptLabel string
}

type waitRow struct {
	N                        int
	Observed, Client, Allows string
}

type checkView struct {
	Name, State, Want, Got, Where, Hint string
}

const (
	tlLabelW = 230
	tlAxisW  = 520
	tlRowH   = 22
)

func verdictWord(r chaos.Result) string {
	switch {
	case r.PassedOnRerun:
		return "✓ passed on re-run"
	case r.Verdict == chaos.VerdictPass || (r.Passed && r.Verdict == ""):
		return "✓ pass"
	case r.Verdict == chaos.VerdictInconclusive:
		return "? inconclusive"
	case r.Verdict == chaos.VerdictSkipped:
		return "– skipped"
	case r.Verdict == chaos.VerdictInterrupted:
		return "■ interrupted"
	case r.Verdict == chaos.VerdictError:
		return "⚠ error"
	}
	return "✗ fail"
}

// parseEnvelopes reads the per-wait envelopes a delays.client check wants,
// in policy time: "[1s, 2s], 4s, no retry". ok is false when it cannot.
func parseEnvelopes(want string) ([][2]time.Duration, bool) {
	var out [][2]time.Duration
	var items []string
	depth, start := 0, 0
	for i, ch := range want {
		switch ch {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				items = append(items, want[start:i])
				start = i + 1
			}
		}
	}
	items = append(items, want[start:])
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "no retry" {
			out = append(out, [2]time.Duration{-1, -1})
			continue
		}
		if strings.HasPrefix(it, "[") && strings.HasSuffix(it, "]") {
			lo, hi, ok := strings.Cut(it[1:len(it)-1], ",")
			if !ok {
				return nil, false
			}
			l, e1 := time.ParseDuration(strings.TrimSpace(lo))
			h, e2 := time.ParseDuration(strings.TrimSpace(hi))
			if e1 != nil || e2 != nil || l > h {
				return nil, false
			}
			out = append(out, [2]time.Duration{l, h})
			continue
		}
		d, err := time.ParseDuration(it)
		if err != nil {
			return nil, false
		}
		out = append(out, [2]time.Duration{d, d})
	}
	return out, true
}

func timeline(run int, r chaos.Result) timelineView {
	t := timelineView{Run: run, Name: pageClean(r.Name), File: pageClean(r.File), Verdict: r.Verdict, Word: verdictWord(r), Outcome: pageClean(r.Outcome)}
	if t.Verdict == "" {
		t.Verdict = "unknown"
	}
	ax := tlAxis{scale: r.TimeScale}
	if !(ax.scale > 0) || math.IsInf(ax.scale, 0) {
		ax.scale = 1
	}
	t.ClientScaled = ax.scale != 1
	ck := timelineChecks(r, &t)
	t.HasEnvelope = ck.envs != nil
	for _, m := range []string{r.Error, r.SkipReason, r.Interrupted} {
		if m != "" {
			t.Note = pageClean(m)
		}
	}
	t.Report = pageReports(r)
	attempts, waits := timelineCounts(r, &t)
	ax.maxMs = ax.span(r, ck.envs, waits)
	y := 8
	for i := 0; i < attempts; i++ {
		fault := "ok"
		if i < len(r.Faults) {
			fault = pageClean(r.Faults[i])
		}
		t.Rows = append(t.Rows, tlRow{Y: y, TextY: y + 15, Attempt: true, Label: fmt.Sprintf("attempt %d", i+1), Fault: fault,
			AttemptBarW: tlLabelW - 80 + tlAxisW, AttemptLabel: fmt.Sprintf("attempt %d met: %s", i+1, fault)})
		y += tlRowH
		if i >= waits {
			continue
		}
		row, wr := waitRowOf(r, i, y, ax, ck)
		t.Waits = append(t.Waits, wr)
		t.Rows = append(t.Rows, row)
		y += tlRowH
	}
	t.AxisY = y + 4
	t.Height = y + 24
	t.Width = tlLabelW + tlAxisW + 300
	t.ScaleLabelX = tlLabelW + tlAxisW
	t.ScaleLabel = anDur(int64(ax.maxMs)) + " wall clock"
	t.Desc = fmt.Sprintf("Scenario %s: %s, %s, %s; waits drawn to scale on a wall-clock axis up to %s.",
		t.Name, t.Word, anCount(int64(attempts), "attempt"), anCount(int64(waits), "wait"), t.ScaleLabel)
	if t.ClientScaled {
		t.Desc += fmt.Sprintf(" Waits are given in policy time and drawn in wall clock, at time scale %g: a client wait drawn × %g, a server gap given ÷ %g.", ax.scale, ax.scale, ax.scale)
	}
	return t
}

// tlChecks is what the timeline takes from a result's checks: the policy's
// envelope of each client wait, and whether the client's and the server's
// delay checks failed.
type tlChecks struct {
	envs           [][2]time.Duration
	cliBad, obsBad bool
}

// timelineChecks lists the checks that did not pass in t and reads the
// delay checks.
func timelineChecks(r chaos.Result, t *timelineView) tlChecks {
	var ck tlChecks
	for _, c := range r.Checks {
		if !c.Passed {
			st := c.State
			if st == "" {
				st = verify.StateFail
			}
			t.Checks = append(t.Checks, checkView{Name: pageClean(c.Name), State: st, Want: pageClean(c.Want), Got: pageClean(c.Got), Where: pageClean(c.Where), Hint: pageClean(c.Hint)})
		}
		if c.Name == "delays.client" {
			if e, ok := parseEnvelopes(c.Want); ok && len(e) == len(r.DelaysMs.Client) {
				ck.envs = e
			}
			ck.cliBad = !c.Passed
		}
		if c.Name == "delays.server" && !c.Passed {
			ck.obsBad = true
		}
	}
	return ck
}

// timelineCounts is how many attempts and waits are drawn: the attempts
// made (the server's count; Faults is what each was scripted to meet, and
// may list more than were made, or, for a skipped scenario, attempts never
// made), at least one more than the waits, at most pageMaxAttempts (the
// rest counted in t.MoreAttempts).
func timelineCounts(r chaos.Result, t *timelineView) (attempts, waits int) {
	attempts = max(r.Attempts, 0)
	waits = max(len(r.DelaysMs.Server), len(r.DelaysMs.Client))
	if attempts < waits+1 && waits > 0 {
		attempts = waits + 1
	}
	if attempts > pageMaxAttempts {
		t.MoreAttempts = attempts - pageMaxAttempts
		attempts = pageMaxAttempts
	}
	if waits > attempts-1 {
		waits = max(attempts-1, 0)
	}
	return attempts, waits
}

// tlAxis is the timeline's axis: wall-clock milliseconds up to maxMs.
// Client waits and envelopes are policy time, drawn × scale.
type tlAxis struct {
	scale, maxMs float64
}

func (ax tlAxis) wall(policyMs float64) float64 { return policyMs * ax.scale }

func (ax tlAxis) px(ms float64) int {
	w := int(math.Round(float64(tlAxisW) * ms / ax.maxMs))
	return max(w, 0)
}

// span is the axis's length: long enough for the longest wait, client wait
// (policy time × time scale) or envelope.
func (ax tlAxis) span(r chaos.Result, envs [][2]time.Duration, waits int) float64 {
	var maxMs float64 = 1
	for i := 0; i < waits; i++ {
		if i < len(r.DelaysMs.Server) {
			maxMs = math.Max(maxMs, float64(r.DelaysMs.Server[i]))
		}
		if i < len(r.DelaysMs.Client) {
			maxMs = math.Max(maxMs, ax.wall(float64(r.DelaysMs.Client[i])))
		}
		if i < len(envs) && envs[i][1] > 0 {
			maxMs = math.Max(maxMs, ax.wall(float64(envs[i][1].Milliseconds())))
		}
	}
	return maxMs
}

// waitRowOf draws wait i at height y: the server's gap, the client's wait,
// the policy's envelope, which of them is outside it; and its table row.
func waitRowOf(r chaos.Result, i, y int, ax tlAxis, ck tlChecks) (tlRow, waitRow) {
	row := tlRow{Y: y, TextY: y + 15, Wait: i + 1, Label: fmt.Sprintf("wait %d", i+1)}
	wr := waitRow{N: i + 1, Observed: "–", Client: "–", Allows: "unknown"}
	var vals []string
	if i < len(r.DelaysMs.Server) {
		row.HasObs, row.ObsMs, row.ObsW, row.ObsY = true, r.DelaysMs.Server[i], max(ax.px(float64(r.DelaysMs.Server[i])), 1), y+2
		// In the table and the text, in policy time as the client's wait
		// is (the bar is drawn on the wall-clock axis).
		wr.Observed = strconv.FormatInt(int64(math.Round(float64(row.ObsMs)/ax.scale)), 10) + "ms"
		vals = append(vals, "server "+wr.Observed)
	}
	if i < len(r.DelaysMs.Client) {
		row.HasCli, row.CliMs, row.CliW, row.CliY = true, r.DelaysMs.Client[i], max(ax.px(ax.wall(float64(r.DelaysMs.Client[i]))), 1), y+11
		wr.Client = strconv.FormatInt(row.CliMs, 10) + "ms"
		vals = append(vals, "client "+wr.Client)
	}
	if i < len(ck.envs) {
		e := ck.envs[i]
		if e[0] < 0 {
			wr.Allows = "no retry"
		} else {
			row.HasEnv = true
			lo, hi := ax.wall(float64(e[0].Milliseconds())), ax.wall(float64(e[1].Milliseconds()))
			row.EnvX, row.EnvW = tlLabelW+ax.px(lo), max(ax.px(hi)-ax.px(lo), 2)
			wr.Allows = envString(e[0], e[1])
			row.EnvText = "policy allows " + wr.Allows
		}
		if row.HasCli {
			row.CliBad = ck.cliBad && (e[0] < 0 || !within(row.CliMs, e))
		}
		if row.HasObs && ck.obsBad {
			row.ObsBad = e[0] < 0 || !withinScaled(row.ObsMs, e, ax.scale)
		}
	} else {
		row.CliBad, row.ObsBad = ck.cliBad && row.HasCli, ck.obsBad && row.HasObs
	}
	if len(vals) > 0 {
		vals[len(vals)-1] += " (policy time)"
	}
	if row.ObsBad || row.CliBad {
		vals = append(vals, "✗ outside")
	}
	row.ValueText = strings.Join(vals, " · ")
	row.ValueX = tlLabelW + tlAxisW + 8
	return row, wr
}

func envString(lo, hi time.Duration) string {
	if lo == hi {
		return lo.String()
	}
	return "[" + lo.String() + ", " + hi.String() + "]"
}

func within(ms int64, e [2]time.Duration) bool {
	return ms >= e[0].Milliseconds() && ms <= e[1].Milliseconds()
}

func withinScaled(ms int64, e [2]time.Duration, scale float64) bool {
	v := float64(ms)
	return v >= float64(e[0].Milliseconds())*scale && v <= float64(e[1].Milliseconds())*scale
}

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"add": func(a, b int) int { return a + b },
}).Parse(pageTemplate))

// errorHook is the page's only script, first in <head>: it marks the body
// with data-js-error if anything in the page throws (the browser test looks
// for it). No value from the inputs is ever written into a script.
const errorHook = "<script>window.onerror=function(m){document.body.setAttribute('data-js-error',m)}</script>"

const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
` + errorHook + `
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; margin: 2rem auto; max-width: 76rem; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .25rem; }
h2 { font-size: 1.15rem; margin: 1.75rem 0 .5rem; border-bottom: 1px solid #d0d7de; padding-bottom: .25rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 .3rem; }
p.inputs, p.note { color: #57606a; }
.cards { display: flex; flex-wrap: wrap; gap: .75rem; }
.card { border: 1px solid #d0d7de; border-radius: 6px; padding: .6rem .9rem; min-width: 11rem; }
.card .label { color: #57606a; font-size: .85rem; }
.card .value { font-size: 1.3rem; font-weight: 600; }
.card .detail { color: #57606a; font-size: .8rem; }
.card.state-firing { border-color: #cf222e; border-width: 2px; }
.card.state-warning { border-color: #9a6700; border-width: 2px; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td { font-variant-numeric: tabular-nums; }
tr.state-firing td { background: #ffebe9; }
tr.state-firing td:last-child { color: #cf222e; font-weight: 700; }
tr.state-warning td { background: #fff8c5; }
tr.state-warning td:last-child { color: #9a6700; font-weight: 600; }
tr.state-ok td:last-child { color: #1a7f37; }
tr.state-insufficient_data td:last-child { color: #57606a; font-style: italic; }
svg { display: block; max-width: 100%; height: auto; font: 12px system-ui, sans-serif; }
svg text { fill: #1f2328; }
.bar { fill: #0969da; }
.whisker { stroke: #1f2328; stroke-width: 1.5; }
.attempt { fill: #eaeef2; stroke: #8c959f; }
.wait.observed { fill: #0969da; }
.wait.client { fill: #8250df; }
.wait.bad { fill: #cf222e; stroke: #82071e; stroke-dasharray: 3 2; }
.envelope { fill: url(#envpat); stroke: #1a7f37; stroke-width: 1; }
.axis { stroke: #8c959f; }
.scenario { border-left: 4px solid #d0d7de; padding-left: .8rem; margin: 1rem 0; }
.scenario.v-fail, .scenario.v-error { border-left-color: #cf222e; }
.scenario.v-inconclusive { border-left-color: #9a6700; }
.checks li.state-fail { color: #82071e; }
.legend span { margin-right: 1rem; }
.sw { display: inline-block; width: 1.4em; height: .8em; vertical-align: middle; margin-right: .3em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{- if .Inputs}}
<p class="inputs">{{.Inputs}}</p>
{{- end}}
{{- with .Chaos}}
<p class="inputs">Chaos runs: {{range $i, $r := .Runs}}{{if $i}}; {{end}}{{$r}}{{end}}</p>
{{- end}}
<section id="summary">
<h2>Summary</h2>
<div class="cards">
{{- range .Cards}}
<div class="card{{if .State}} state-{{.State}}{{end}}"><div class="label">{{.Label}}</div><div class="value">{{.Value}}</div>{{if .Detail}}<div class="detail">{{.Detail}}</div>{{end}}{{if .State}}<div class="detail">state: {{.State}}</div>{{end}}</div>
{{- end}}
</div>
</section>
{{- if or .Bars .Rates}}
<section id="charts">
<h2>Charts</h2>
{{- range .Bars}}
<h3 id="{{.ID}}-h">{{.Title}}</h3>
<svg role="img" aria-labelledby="{{.ID}}-t {{.ID}}-d" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" class="chart" id="{{.ID}}">
<title id="{{.ID}}-t">{{.Title}}</title>
<desc id="{{.ID}}-d">{{.Desc}}</desc>
{{- range .Bars}}
<text x="{{add 200 -8}}" y="{{.TextY}}" text-anchor="end">{{.Label}}</text>
<rect class="bar" x="200" y="{{.Y}}" width="{{.W}}" height="18"><title>{{.Label}}: {{.Count}}</title></rect>
<text x="{{add 206 .W}}" y="{{.TextY}}">{{.Count}}</text>
{{- end}}
</svg>
{{- if .More}}<p class="note">{{.More}} more not drawn (see the table).</p>{{end}}
<details><summary>Table: {{.Title}}</summary>
<table><thead><tr><th>{{.Unit}}</th><th>count</th></tr></thead><tbody>
{{- range .Bars}}
<tr><td>{{.Label}}</td><td>{{.Count}}</td></tr>
{{- end}}
</tbody></table></details>
{{- end}}
{{- range .Rates}}
<h3 id="{{.ID}}-h">{{.Title}}</h3>
<svg role="img" aria-labelledby="{{.ID}}-t {{.ID}}-d" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" class="chart" id="{{.ID}}">
<title id="{{.ID}}-t">{{.Title}}</title>
<desc id="{{.ID}}-d">{{.Desc}}</desc>
{{- range .Rows}}
<text x="192" y="{{.TextY}}" text-anchor="end">{{.Label}}</text>
<rect class="bar" x="200" y="{{.Y}}" width="{{.W}}" height="18" fill-opacity="0.55"><title>{{.Label}}: {{.Rate}} [{{.Lo}}, {{.Hi}}] n={{.N}}</title></rect>
<line class="whisker" x1="{{.X1}}" x2="{{.X2}}" y1="{{.MidY}}" y2="{{.MidY}}"/>
<line class="whisker" x1="{{.X1}}" x2="{{.X1}}" y1="{{.Y}}" y2="{{add .Y 18}}"/>
<line class="whisker" x1="{{.X2}}" x2="{{.X2}}" y1="{{.Y}}" y2="{{add .Y 18}}"/>
<text x="650" y="{{.TextY}}">{{.Rate}} [{{.Lo}}, {{.Hi}}] n={{.N}}</text>
{{- end}}
</svg>
{{- if .More}}<p class="note">{{.More}} more groups not drawn (see the tables below).</p>{{end}}
<details><summary>Table: {{.Title}}</summary>
<table><thead><tr><th>group</th><th>rate</th><th>{{.Interval}}</th><th>n</th></tr></thead><tbody>
{{- range .Rows}}
<tr><td>{{.Label}}</td><td>{{.Rate}}</td><td>[{{.Lo}}, {{.Hi}}]</td><td>{{.N}}</td></tr>
{{- end}}
</tbody></table></details>
{{- end}}
</section>
{{- end}}
{{- with .Chaos}}
<section id="scenarios">
<h2>Scenarios</h2>
<svg width="0" height="0" aria-hidden="true" style="position:absolute"><defs><pattern id="envpat" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#dafbe1"/><line x1="0" y1="0" x2="0" y2="6" stroke="#1a7f37" stroke-width="2"/></pattern></defs></svg>
<p class="legend"><span><svg class="sw" viewBox="0 0 20 10"><rect class="wait observed" width="20" height="10"/></svg>observed wait (server clock)</span><span><svg class="sw" viewBox="0 0 20 10"><rect class="wait client" width="20" height="10"/></svg>client's recorded wait</span><span><svg class="sw" viewBox="0 0 20 10"><rect class="envelope" width="20" height="10"/></svg>what the policy allows (hatched)</span><span><svg class="sw" viewBox="0 0 20 10"><rect class="wait bad" width="20" height="10"/></svg>✗ outside, check failed (dashed)</span></p>
{{- if .NotPassed}}
<h3>Did not pass ({{len .NotPassed}}{{if .MoreNotPassed}} drawn, {{.MoreNotPassed}} more not drawn{{end}})</h3>
{{- range .NotPassed}}{{template "timeline" .}}{{end}}
{{- end}}
{{- if .PassedList}}
<details><summary>Passed or skipped: {{len .PassedList}} scenarios{{if .MorePassed}} drawn, {{.MorePassed}} more not drawn{{end}}</summary>
{{- range .PassedList}}{{template "timeline" .}}{{end}}
</details>
{{- end}}
</section>
{{- end}}
{{- if .Sections}}
<section id="tables">
<h2>Tables</h2>
{{- range .Sections}}
<details><summary>{{.Title}}</summary>
{{- if .Summary}}
<p>{{.Summary}}</p>
{{- end}}
{{- if .Rows}}
<table>
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr{{if .Class}} class="{{.Class}}"{{end}}>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- end}}
{{- if .Note}}
<p class="note">{{.Note}}</p>
{{- end}}
</details>
{{- end}}
</section>
{{- end}}
</body>
</html>
{{define "timeline"}}
<div class="scenario v-{{.Verdict}}" data-scenario="{{.Name}}" data-run="{{.Run}}">
<h3>{{.Name}} — {{.Word}}{{if .Outcome}} (outcome {{.Outcome}}){{end}}</h3>
<p class="note">{{.File}}{{if .Note}} — {{.Note}}{{end}}</p>
<svg role="img" class="timeline" data-scenario="{{.Name}}" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}">
<title>Timeline of {{.Name}}</title>
<desc>{{.Desc}}</desc>
{{- range .Rows}}
<text x="8" y="{{.TextY}}">{{.Label}}</text>
{{- if .Attempt}}
<rect class="attempt" x="80" y="{{.Y}}" width="{{.AttemptBarW}}" height="18"><title>{{.AttemptLabel}}</title></rect>
<text x="86" y="{{.TextY}}">met: {{.Fault}}</text>
{{- else}}
{{- if .HasEnv}}
<rect class="envelope" x="{{.EnvX}}" y="{{.Y}}" width="{{.EnvW}}" height="20"><title>{{.EnvText}}</title></rect>
{{- end}}
{{- if .HasObs}}
<rect class="wait observed{{if .ObsBad}} bad{{end}}" data-wait="{{.Wait}}" data-observed-ms="{{.ObsMs}}" x="230" y="{{.ObsY}}" width="{{.ObsW}}" height="8"><title>wait {{.Wait}} observed (server clock): {{.ObsMs}}ms{{if .ObsBad}} ✗ outside{{end}}</title></rect>
{{- end}}
{{- if .HasCli}}
<rect class="wait client{{if .CliBad}} bad{{end}}" data-wait="{{.Wait}}" data-client-ms="{{.CliMs}}" x="230" y="{{.CliY}}" width="{{.CliW}}" height="8"><title>wait {{.Wait}} recorded by the client (policy time): {{.CliMs}}ms{{if .CliBad}} ✗ outside{{end}}</title></rect>
{{- end}}
<text x="{{.ValueX}}" y="{{.TextY}}">{{.ValueText}}</text>
{{- end}}
{{- end}}
<line class="axis" x1="230" x2="{{.ScaleLabelX}}" y1="{{.AxisY}}" y2="{{.AxisY}}"/>
<text x="230" y="{{add .AxisY 14}}">0</text>
<text x="{{.ScaleLabelX}}" y="{{add .AxisY 14}}" text-anchor="end">{{.ScaleLabel}}</text>
</svg>
{{- if .MoreAttempts}}<p class="note">{{.MoreAttempts}} more attempts not drawn.</p>{{end}}
{{- if .Checks}}
<ul class="checks">
{{- range .Checks}}
<li class="state-{{.State}}"><b>{{if eq .State "fail"}}✗{{else}}?{{end}} {{.Name}} {{.State}}</b>: want {{.Want}}, got {{.Got}}{{if .Where}} — {{.Where}}{{end}}{{if .Hint}} (hint: {{.Hint}}){{end}}</li>
{{- end}}
</ul>
{{- end}}
{{- with .Report}}
<details class="error-report"{{if .Open}} open{{end}}><summary>The client gave up: {{.Line}}</summary>
<pre>{{.Text}}</pre></details>
{{- end}}
{{- if .Waits}}
<details><summary>Table: waits of {{.Name}}</summary>
<table><thead><tr><th>wait</th><th>observed by the server (policy time)</th><th>client (policy time)</th><th>policy allows</th></tr></thead><tbody>
{{- range .Waits}}
<tr><td>{{.N}}</td><td>{{.Observed}}</td><td>{{.Client}}</td><td>{{.Allows}}</td></tr>
{{- end}}
</tbody></table></details>
{{- end}}
</div>
{{end}}`
