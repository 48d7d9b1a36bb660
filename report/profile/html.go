package profile

import (
	"fmt"
	"html/template"
	"io"
	"math"

	"github.com/retrylab/retrylab/probe"
)

// HTML renders a probe profile as one self-contained HTML page: the
// survival figures (how long a steady outage of each kind the client rides
// out), the exhaustion waits (one dot per wait, per sample) against the fitted curve
// and its jitter band, then the faults, the policy with each figure's
// confidence, what is inconclusive and the conformance per preset.
func HTML(w io.Writer, p *probe.Profile) error {
	v := probePageView{P: p, Survival: survivalLines(p), Policy: policyLines(p), Conformance: conformanceLines(p), Chart: probeChart(p)}
	for _, g := range probe.GroupFindings(p.Findings) {
		v.Findings = append(v.Findings, [3]string{g.Code, probesOf(g), g.Evidence})
	}
	return probePage.Execute(w, v)
}

type probePageView struct {
	P           *probe.Profile
	Survival    []string
	Policy      [][3]string
	Conformance []string
	Chart       probeChartView
	Findings    [][3]string // code, the probes, the first one's evidence
}

type probeChartView struct {
	W, H        int
	Dots        []probeDot
	Curve, Band string // SVG points of the fitted nominal curve; polygon of the jitter band
	XTicks      []probeTick
	YTicks      []probeTick
	Empty       bool
}

type probeDot struct {
	X, Y   int
	Title  string
	Sample int
}

type probeTick struct {
	Pos   int
	Label string
}

const (
	chartW, chartH = 640, 300
	chartPad       = 50
)

// probeChart places the exhaustion waits and the fitted curve on one chart:
// x the retry index, y the wait (policy ms).
func probeChart(p *probe.Profile) probeChartView {
	c := probeChartView{W: chartW, H: chartH}
	var waits [][]int64
	var samples []int
	maxK, maxW := 0, 0.0
	for _, f := range p.Faults {
		if f.Sample > 0 {
			waits, samples = append(waits, f.WaitsMs), append(samples, f.Sample)
			maxK = max(maxK, len(f.WaitsMs))
			for _, x := range f.WaitsMs {
				maxW = max(maxW, float64(x))
			}
		}
	}
	bo := p.Policy.Backoff
	nominal := func(k int) float64 {
		if bo.InitialMs == nil {
			return math.NaN()
		}
		m := 1.0
		if bo.Multiplier != nil {
			m = *bo.Multiplier
		}
		d := *bo.InitialMs * math.Pow(m, float64(k))
		if bo.MaxMs != nil {
			d = min(d, *bo.MaxMs)
		}
		return d
	}
	hiF := 1.0
	if bo.Jitter != nil {
		hiF = max(1, bo.Jitter.MaxFactor)
	}
	for k := 0; k < maxK; k++ {
		if n := nominal(k); !math.IsNaN(n) {
			maxW = max(maxW, n*hiF)
		}
	}
	if maxK == 0 || maxW == 0 {
		c.Empty = true
		return c
	}
	x := func(k float64) int { return chartPad + int(k*float64(chartW-2*chartPad)/math.Max(1, float64(maxK-1))) }
	y := func(ms float64) int { return chartH - chartPad + -int(ms*float64(chartH-2*chartPad)/(maxW*1.1)) }
	for i, ws := range waits {
		for k, wv := range ws {
			// Samples are spread a little around their index so dots do not hide each other.
			off := float64(samples[i]%5-2) * 0.03
			c.Dots = append(c.Dots, probeDot{X: x(float64(k) + off), Y: y(float64(wv)), Sample: samples[i],
				Title: fmt.Sprintf("sample %d, retry %d: %d ms", samples[i], k+1, wv)})
		}
	}
	if bo.InitialMs != nil {
		lo, hi := 1.0, 1.0
		if bo.Jitter != nil {
			lo, hi = bo.Jitter.MinFactor, bo.Jitter.MaxFactor
		}
		var top, bottom string
		for k := 0; k < maxK; k++ {
			n := nominal(k)
			c.Curve += fmt.Sprintf("%d,%d ", x(float64(k)), y(n))
			top += fmt.Sprintf("%d,%d ", x(float64(k)), y(n*hi))
			bottom = fmt.Sprintf("%d,%d ", x(float64(k)), y(n*lo)) + bottom
		}
		c.Band = top + bottom
	}
	for k := 0; k < maxK; k++ {
		c.XTicks = append(c.XTicks, probeTick{Pos: x(float64(k)), Label: fmt.Sprintf("retry %d", k+1)})
	}
	for i := 0; i <= 4; i++ {
		ms := maxW * 1.1 * float64(i) / 4
		c.YTicks = append(c.YTicks, probeTick{Pos: y(ms), Label: fmt.Sprintf("%.0f ms", ms)})
	}
	return c
}

var probePage = template.Must(template.New("probe").Funcs(template.FuncMap{
	"tri": triState,
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>retrylab probe: {{.P.Client}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;font-size:.9rem}
.band{fill:#cde4ff}.curve{fill:none;stroke:#1a5fb4;stroke-width:2}.dot{fill:#c01c28}.axis{stroke:#888}
.warn{background:#fff3cd;padding:.5rem}
</style></head><body>
<h1>Retry policy of <code>{{.P.Client}}</code></h1>
<p>Provider {{.P.Provider}}, {{.P.Samples}} exhaustion sample(s), schema {{.P.Schema}}.</p>
{{if .P.Interrupted}}<p class="warn">Interrupted: the profile holds what was learnt before the probe was stopped.</p>{{end}}{{if .P.Unreached}}<p class="warn">Nothing measured: {{.P.Unreached}}.</p>{{end}}{{if .P.LearntNothing}}<p class="warn">Nothing learnt: {{.P.LearntNothing}}.</p>{{end}}{{if .P.Nondeterministic}}<p class="warn">Not deterministic: {{.P.Nondeterministic}}.</p>{{end}}{{with .P.WarmUp}}{{if not .Used}}<p>Warm-up request: off: {{.Reason}}.</p>{{end}}{{end}}
{{if .Survival}}<h2>Survives</h2>
<p>Steady outages, policy time from the first attempt:</p><ul>
{{range .Survival}}<li>{{.}}</li>
{{end}}</ul>{{end}}
<h2>Waits against the fitted backoff</h2>
{{if .Chart.Empty}}<p>No wait to show: the exhaustion runs saw no retry.</p>{{else}}
<svg width="{{.Chart.W}}" height="{{.Chart.H}}" role="img" aria-label="exhaustion waits and the fitted curve">
{{if .Chart.Band}}<polygon class="band" points="{{.Chart.Band}}"><title>jitter band</title></polygon>
<polyline class="curve" points="{{.Chart.Curve}}"><title>fitted nominal wait</title></polyline>{{end}}
<line class="axis" x1="50" y1="250" x2="590" y2="250"/><line class="axis" x1="50" y1="20" x2="50" y2="250"/>
{{range .Chart.XTicks}}<text x="{{.Pos}}" y="270" font-size="11" text-anchor="middle">{{.Label}}</text>{{end}}
{{range .Chart.YTicks}}<text x="45" y="{{.Pos}}" font-size="11" text-anchor="end">{{.Label}}</text>{{end}}
{{range .Chart.Dots}}<circle class="dot" cx="{{.X}}" cy="{{.Y}}" r="4"><title>{{.Title}}</title></circle>{{end}}
</svg>{{end}}
<h2>Faults</h2>
<table><tr><th>fault</th><th>retried</th><th>attempts</th><th>waits (ms)</th><th>end</th></tr>
{{range .P.Faults}}<tr><td>{{.Fault}}{{if .Sample}} #{{.Sample}}{{end}}</td><td>{{tri .Retried}}</td><td>{{.Attempts}}</td><td>{{range $i, $w := .WaitsMs}}{{if $i}}, {{end}}{{$w}}{{end}}</td><td>{{.End}}{{if .Note}} ({{.Note}}){{end}}</td></tr>
{{end}}</table>
<h2>Policy</h2>
<table><tr><th>figure</th><th>value</th><th>confidence</th></tr>
{{range .Policy}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td><td>{{index . 2}}</td></tr>
{{end}}</table>
{{if .P.Inconclusive}}<h2>Inconclusive (not guessed)</h2><ul>
{{range .P.Inconclusive}}<li><code>{{.Figure}}</code>: {{.Reason}}</li>
{{end}}</ul>{{end}}
{{if .Findings}}<h2>Findings</h2><p>From the experiments' journals; the evidence is the first one's.</p><ul>
{{range .Findings}}<li><code>{{index . 0}}</code> ({{index . 1}}): {{index . 2}}</li>
{{end}}</ul>
{{end}}<h2>Conformance</h2><ul>
{{range .Conformance}}<li>{{.}}</li>
{{end}}</ul>
</body></html>
`))
