package report

import (
	"io"

	"github.com/retrylab/retrylab/trace/analyze"
)

// AnalysisHTML renders an analysis as one self-contained HTML page for
// people: the page of `retrylab report html` (PageHTML) for an analysis
// alone — summary cards, charts with text tables, and the sections of
// AnalysisMarkdown. Every value from the traces is escaped by
// html/template, so a model named "<script>" shows as text.
func AnalysisHTML(w io.Writer, a *analyze.Analysis) error {
	return PageHTML(w, Page{Analysis: a})
}

type htmlSection struct {
	Title, Summary, Note string
	Header               []string
	Rows                 []htmlRow
}

type htmlRow struct {
	Class string // the alert state, for the alerts table
	Cells []string
}

func htmlSections(a *analyze.Analysis) []htmlSection {
	var out []htmlSection
	for _, s := range analysisSections(a) {
		h := htmlSection{Title: s.title, Summary: s.summary, Note: s.note, Header: s.header}
		for i, r := range s.rows {
			row := htmlRow{Cells: r}
			if i < len(s.state) {
				row.Class = "state-" + s.state[i]
			}
			h.Rows = append(h.Rows, row)
		}
		out = append(out, h)
	}
	return out
}
