package report

import (
	"html/template"
	"io"

	"github.com/retrylab/retrylab/trace"
)

// AnalysisHTML renders an analysis as one self-contained HTML page for
// people: the sections of AnalysisMarkdown, inline CSS, no script and no
// external asset, alert states in colour. Every value from the traces is
// escaped by html/template, so a model named "<script>" shows as text.
func AnalysisHTML(w io.Writer, a *trace.Analysis) error {
	a = safeAnalysis(a, true) // keys redacted, labels made safe to print
	return analysisHTMLTmpl.Execute(w, struct {
		Inputs   string
		Sections []htmlSection
	}{anInputs(a), htmlSections(a)})
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

func htmlSections(a *trace.Analysis) []htmlSection {
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

var analysisHTMLTmpl = template.Must(template.New("analysis").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Retry analysis</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .25rem; }
h2 { font-size: 1.15rem; margin: 1.75rem 0 .5rem; border-bottom: 1px solid #d0d7de; padding-bottom: .25rem; }
p.inputs, p.note { color: #57606a; }
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
</style>
</head>
<body>
<h1>Retry analysis</h1>
<p class="inputs">{{.Inputs}}</p>
{{- range .Sections}}
<section>
<h2>{{.Title}}</h2>
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
</section>
{{- end}}
</body>
</html>
`))
