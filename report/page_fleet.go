package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/fleet"
)

// fleetChartView is a fleet's chart: attempts per step of policy time,
// stacked by outcome class, the outage's phases shaded behind them and the
// account's request limit drawn across; with its figures in words.
type fleetChartView struct {
	Width, Height, PlotX, PlotY, PlotW, PlotH int
	Desc, Figures, MaxLabel, EndLabel, Step   string
	Bars                                      []fleetBar
	Phases                                    []fleetShade
	HasLimit                                  bool
	LimitY                                    int
	LimitLabel                                string
}

type fleetBar struct {
	X, Y, W, H int
	Class      string // fleet.Classes: the CSS class fc-<class>
	Title      string
}

type fleetShade struct {
	X, W  int
	Title string
}

// fleetMaxPhases bounds the outage phases shaded (a result.json is input).
const fleetMaxPhases = 100

const (
	fleetChartW = 760
	fleetChartH = 220
	fleetPlotX  = 60
	fleetPlotY  = 10
	fleetPlotW  = fleetChartW - fleetPlotX - 20
	fleetPlotH  = fleetChartH - 50
)

// fleetChart draws r's fleet, nil when r is no fleet. Every figure is a
// number the page computes here; no input string reaches the SVG but
// through pageClean.
func fleetChart(r chaos.Result) *fleetChartView {
	tl := r.FleetTimeline
	if r.Fleet == nil || tl == nil || tl.StepMs <= 0 {
		return nil
	}
	v := &fleetChartView{Width: fleetChartW, Height: fleetChartH, PlotX: fleetPlotX, PlotY: fleetPlotY, PlotW: fleetPlotW, PlotH: fleetPlotH}
	f := r.Fleet
	sync := "no retries"
	if f.Synchrony != nil {
		sync = fmt.Sprintf("%.2f", *f.Synchrony)
	}
	rec := "no recovery measured"
	if f.RecoveryMs != nil {
		rec = fmt.Sprintf("recovered %dms after the outage", *f.RecoveryMs)
	}
	v.Figures = fmt.Sprintf("%d of %d clients survived; %d attempts for %d requests (amplification %.2f); synchrony %s; %d×429, %d×529; goodput %.1f/min; %s; %d output tokens wasted",
		f.Survived, f.Clients, f.Attempts, f.Requests, f.Amplification, sync, f.Status429, f.Status529, f.GoodputPerMin, rec, f.WastedOutputTokens)
	buckets := tl.Buckets
	if len(buckets) > fleet.MaxBuckets {
		buckets = buckets[:fleet.MaxBuckets]
	}
	n := max(len(buckets), 1)
	peak := 1.0
	for _, b := range buckets {
		total := 0
		for _, c := range b.Counts {
			total += max(c, 0)
		}
		peak = math.Max(peak, float64(total))
	}
	if tl.LimitPerStep > 0 && !math.IsInf(tl.LimitPerStep, 0) {
		peak = math.Max(peak, tl.LimitPerStep)
	}
	span := float64(n) * float64(tl.StepMs)
	xOf := func(ms float64) int {
		return fleetPlotX + int(math.Round(math.Min(math.Max(ms, 0), span)/span*fleetPlotW))
	}
	yOf := func(c float64) int { return fleetPlotY + fleetPlotH - int(math.Round(c/peak*fleetPlotH)) }
	for i, p := range tl.Phases {
		if i == fleetMaxPhases {
			break
		}
		x0, x1 := xOf(float64(p.FromMs)), xOf(float64(p.ToMs))
		if x1 > x0 {
			v.Phases = append(v.Phases, fleetShade{X: x0, W: x1 - x0, Title: fmt.Sprintf("outage phase %dms–%dms", p.FromMs, p.ToMs)})
		}
	}
	bw := max(fleetPlotW/n, 1)
	for i, b := range buckets {
		x := fleetPlotX + i*fleetPlotW/n
		below := 0.0
		for _, class := range fleet.Classes {
			c := b.Counts[class]
			if c <= 0 {
				continue
			}
			top := below + float64(c)
			v.Bars = append(v.Bars, fleetBar{X: x, W: max(bw-1, 1), Y: yOf(top), H: max(yOf(below)-yOf(top), 1), Class: class,
				Title: fmt.Sprintf("%dms–%dms: %d %s", b.AtMs, b.AtMs+tl.StepMs, c, class)})
			below = top
		}
	}
	step := fmt.Sprintf("%gs", float64(tl.StepMs)/1000)
	v.Step = step
	v.MaxLabel = fmt.Sprintf("%.0f", peak)
	v.EndLabel = fmt.Sprintf("%gs (policy time)", span/1000)
	if tl.LimitPerStep > 0 && !math.IsInf(tl.LimitPerStep, 0) {
		v.HasLimit, v.LimitY = true, yOf(tl.LimitPerStep)
		v.LimitLabel = fmt.Sprintf("request limit: %.3g per %s", tl.LimitPerStep, step)
	}
	var parts []string
	for _, class := range fleet.Classes {
		total := 0
		for _, b := range buckets {
			total += b.Counts[class]
		}
		parts = append(parts, fmt.Sprintf("%d %s", total, class))
	}
	v.Desc = pageClean(fmt.Sprintf("Attempts per %s of policy time by outcome (%s), %d outage phases shaded", step, strings.Join(parts, ", "), len(v.Phases)))
	return v
}
