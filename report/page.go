package report

import (
	"io"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/trace/analyze"
)

// Page is what one HTML report shows: an analysis of traces (nil when the
// paths held none) and the chaos runs found in the paths.
type Page struct {
	Analysis *analyze.Analysis
	// ByDay, if set, is the same traces analysed by day: its retry and
	// failure rates are drawn per day, with their intervals.
	ByDay *analyze.Analysis
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
