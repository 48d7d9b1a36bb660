package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
)

// chaosView is the chaos part of the page.
type chaosView struct {
	Runs                             []string
	Total, Passed, Failed, Skipped   int
	Inconclusive, Errors, Interrupts int
	NotPassed, PassedList            []timelineView
	MoreNotPassed, MorePassed        int
	// Findings counts the findings of every scenario, Codes how many
	// of each code (in scenario.FindingCodes order).
	Findings int
	Codes    map[string]int
}

func chaosCards(c *chaosView) []card {
	st := "ok"
	if c.Failed > 0 || c.Errors > 0 {
		st = "firing"
	}
	cards := []card{{Label: "Scenarios", Value: fmt.Sprintf("%d passed, %d failed", c.Passed, c.Failed), State: st,
		Detail: fmt.Sprintf("%d in all; %d inconclusive, %d skipped, %d error, %d interrupted", c.Total, c.Inconclusive, c.Skipped, c.Errors, c.Interrupts)}}
	if c.Findings > 0 {
		var parts []string
		for _, code := range scenario.FindingCodeNames() {
			if n := c.Codes[code]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", code, n))
			}
		}
		cards = append(cards, card{Label: "Findings", Value: fmt.Sprint(c.Findings), State: "warning",
			Detail: strings.Join(parts, ", ") + " (not failures; listed under each scenario)"})
	}
	return cards
}

func chaosPageView(runs []*chaos.Summary) *chaosView {
	c := &chaosView{}
	for ri, s := range runs {
		c.Runs = append(c.Runs, fmt.Sprintf("%s (seed %d, %s)", pageClean(s.RunDir), s.Seed, anDur(s.DurationMs)))
		for _, r := range s.Scenarios {
			c.Total++
			for _, f := range r.Findings {
				if c.Codes == nil {
					c.Codes = map[string]int{}
				}
				c.Findings++
				c.Codes[f.Code]++
			}
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
	// Findings are what the run shows of its client without being
	// asked (chaos.Result.Findings): not failures.
	Findings []findingView
	// Outage is the scenario's outage as it was run (report/outage.go).
	Outage *outageView
	// Fleet is a fleet's chart (page_fleet.go); nil for one client.
	Fleet *fleetChartView
}

// findingView is one finding: its code, the attempts it rests on and its
// evidence, cleaned like every label.
type findingView struct {
	Code, Attempts, Evidence string
}

// pageFindings returns the findings of r to show.
func pageFindings(r chaos.Result) []findingView {
	var out []findingView
	for _, f := range r.Findings {
		as := make([]string, len(f.Attempts))
		for i, a := range f.Attempts {
			as[i] = fmt.Sprint(a)
		}
		word := "attempts "
		if len(as) == 1 {
			word = "attempt "
		}
		out = append(out, findingView{Code: pageClean(f.Code), Attempts: word + strings.Join(as, ", "), Evidence: pageClean(f.Evidence)})
	}
	return out
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
	t.Findings = pageFindings(r)
	t.Outage = pageOutage(r)
	t.Fleet = fleetChart(r)
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
