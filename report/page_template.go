package report

import "html/template"

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
.findings { color: #6e4b00; }
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
{{- with .Outage}}
<details class="outage" open><summary>Outage, seed {{.Seed}}: its phases, then what each attempt drew (policy time from the first attempt's arrival)</summary>
<table class="outage-phases"><tr><th>phase</th><th>for</th><th>mix (weight × fault)</th></tr>
{{- range .Phases}}
<tr><td>{{index . 0}}</td><td>{{index . 1}}</td><td>{{index . 2}}</td></tr>
{{- end}}
<tr><td>after</td><td></td><td>ok</td></tr></table>
{{- if .Draws}}
<table class="outage-draws"><tr><th>attempt</th><th>at</th><th>phase</th><th>mix entry</th><th>fault</th></tr>
{{- range .Draws}}
<tr><td>{{index . 0}}</td><td>{{index . 1}}</td><td>{{index . 2}}</td><td>{{index . 3}}</td><td>{{index . 4}}</td></tr>
{{- end}}
</table>
{{- else}}
<p class="note">No attempt reached the outage.</p>
{{- end}}
</details>
{{- end}}
{{- with .Fleet}}
<p class="note fleet-figures">Fleet: {{.Figures}}</p>
<svg role="img" class="fleet-chart" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}">
<title>Attempts per {{.Step}} by outcome</title>
<style>.fc-ok { fill: #1a7f37; } .fc-rateLimited { fill: #bf8700; } .fc-overloaded { fill: #cf222e; } .fc-failed { fill: #6e7781; } .outage-phase { fill: #ffebe9; } .limit { stroke: #0969da; stroke-dasharray: 6 3; stroke-width: 2; }</style>
<desc>{{.Desc}}</desc>
{{- range .Phases}}
<rect class="outage-phase" x="{{.X}}" y="{{$.Fleet.PlotY}}" width="{{.W}}" height="{{$.Fleet.PlotH}}"><title>{{.Title}}</title></rect>
{{- end}}
{{- range .Bars}}
<rect class="fc-{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
{{- end}}
{{- if .HasLimit}}
<line class="limit" x1="{{.PlotX}}" x2="{{add .PlotX .PlotW}}" y1="{{.LimitY}}" y2="{{.LimitY}}"><title>{{.LimitLabel}}</title></line>
<text x="{{add .PlotX 4}}" y="{{add .LimitY -4}}">{{.LimitLabel}}</text>
{{- end}}
<line class="axis" x1="{{.PlotX}}" x2="{{add .PlotX .PlotW}}" y1="{{add .PlotY .PlotH}}" y2="{{add .PlotY .PlotH}}"/>
<line class="axis" x1="{{.PlotX}}" x2="{{.PlotX}}" y1="{{.PlotY}}" y2="{{add .PlotY .PlotH}}"/>
<text x="{{add .PlotX -4}}" y="{{add .PlotY 10}}" text-anchor="end">{{.MaxLabel}}</text>
<text x="{{.PlotX}}" y="{{add .PlotY (add .PlotH 16)}}">0</text>
<text x="{{add .PlotX .PlotW}}" y="{{add .PlotY (add .PlotH 16)}}" text-anchor="end">{{.EndLabel}}</text>
<text x="{{.PlotX}}" y="{{add .PlotY (add .PlotH 34)}}"><tspan class="fc-ok">■</tspan> ok <tspan class="fc-rateLimited">■</tspan> 429 <tspan class="fc-overloaded">■</tspan> 529/503 <tspan class="fc-failed">■</tspan> other failure <tspan class="outage-phase">■</tspan> outage — attempts per {{.Step}} of policy time</text>
</svg>
{{- end}}
{{- if .Checks}}
<ul class="checks">
{{- range .Checks}}
<li class="state-{{.State}}"><b>{{if eq .State "fail"}}✗{{else}}?{{end}} {{.Name}} {{.State}}</b>: want {{.Want}}, got {{.Got}}{{if .Where}} — {{.Where}}{{end}}{{if .Hint}} (hint: {{.Hint}}){{end}}</li>
{{- end}}
</ul>
{{- end}}
{{- if .Findings}}
<ul class="findings">
{{- range .Findings}}
<li><b>finding {{.Code}}</b> ({{.Attempts}}): {{.Evidence}}</li>
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
