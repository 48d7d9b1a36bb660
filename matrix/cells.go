package matrix

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/retrylab/retrylab/probe"
)

// Column is one column of the matrix: Key names it in --fail-on rules,
// in matrix.json's changes and in the page's filters.
type Column struct {
	Key   string
	Title string
	// Group is what the page filters by behaviour on: retried, backoff,
	// retry-after, outage, findings.
	Group string
	// Doc says what the cell holds (matrix.md's legend).
	Doc string
}

// States of a cell.
const (
	Known     = "known"      // the probe measured it
	Unknown   = "unknown"    // the probe ran and could not tell (Basis says why)
	NotProbed = "not probed" // the probe does not measure it (yet)
	NA        = "n/a"        // the wire format has no such failure
)

// Cell is what one client's row holds in one column.
type Cell struct {
	Key  string
	Text string
	// Value is what drift compares ("" when not known); Num is set when
	// the value is a number (a threshold rule compares it).
	Value string
	Num   *float64
	State string
	// Confidence is high, medium or low (probe.Confidence), "" when the
	// cell is not known.
	Confidence string
	// Basis is the evidence in words: the journal's excerpt (attempts,
	// waits, how the run ended) and the confidence's basis, or why the
	// figure is unknown.
	Basis string
	// Probes are the probe scenarios the cell comes from ("probe-429"):
	// Entry.Evidence maps them to their run folders.
	Probes []string
}

// Columns are the matrix's columns, in order.
var Columns = []Column{
	{"retried.4xx", "4xx", "retried", "400, 401, 403, 404 answered once: retried (yes, no, or which)"},
	{"retried.408", "408", "retried", "408 Request Timeout once"},
	{"retried.409", "409", "retried", "409 Conflict once"},
	{"retried.429", "429", "retried", "429 without Retry-After once"},
	{"retried.429RetryAfter", "429 + Retry-After", "retried", "429 with Retry-After: 3 once"},
	{"retried.5xx", "5xx", "retried", "500, 502, 503, 504 once"},
	{"retried.529", "529", "retried", "529 overloaded once (Anthropic only)"},
	{"retried.reset", "reset", "retried", "the connection reset before a response"},
	{"retried.hang", "hang", "retried", "no response at all: retried after a timeout"},
	{"retried.streamError", "in-stream error", "retried", "an error event mid-stream: the overload type, then the invalid-request type"},
	{"retried.cutStream", "cut stream", "retried", "the stream cut mid-answer"},
	{"retried.truncated", "truncated stream", "retried", "a clean end without the closing event"},
	{"retried.malformed", "malformed chunk", "retried", "an event whose data is not JSON"},
	{"retried.keepaliveStall", "keepalive stall", "retried", "a stream that sends only keepalives"},
	{"maxRetries", "max retries", "backoff", "retries of a steady 503 before giving up"},
	{"backoff.initialMs", "first wait", "backoff", "the fitted first wait"},
	{"backoff.multiplier", "multiplier", "backoff", "the fitted growth of the waits"},
	{"backoff.maxMs", "cap", "backoff", "the longest wait (none: not reached)"},
	{"backoff.jitter", "jitter", "backoff", "the band of observed ÷ nominal wait, and its known form"},
	{"hangTimeoutMs", "hang timeout", "backoff", "when a hung attempt is given up (wall clock)"},
	{"retryAfter.seconds", "Retry-After s", "retry-after", "Retry-After: 3 honoured"},
	{"retryAfter.ms", "retry-after-ms", "retry-after", "retry-after-ms: 1700 honoured"},
	{"retryAfter.httpDate", "Retry-After date", "retry-after", "Retry-After as an HTTP date honoured"},
	{"retryAfter.ceilingMs", "Retry-After ceiling", "retry-after", "the largest Retry-After waited; above it ignored or refused"},
	{"xShouldRetry", "x-should-retry", "retry-after", "true on a 400, false on a 503: obeyed?"},
	{"fallback", "model fallback", "outage", "model switches seen"},
	{"survivesOutageMs.overload", "survives overload", "outage", "the longest steady 529 (Anthropic) or 503 ridden out"},
	{"survivesOutageMs.429", "survives 429s", "outage", "the longest steady 429 ridden out"},
	{"survivesOutageMs.drop", "survives cut streams", "outage", "the longest run of cut streams ridden out"},
	{"findings", "findings", "findings", "what the probe's runs showed without being asked"},
}

// ColumnKeys lists the columns' keys.
func ColumnKeys() []string {
	keys := make([]string, len(Columns))
	for i, c := range Columns {
		keys[i] = c.Key
	}
	return keys
}

// Row reads a profile's cells, one per column, in Columns' order.
func Row(p *probe.Profile) []Cell {
	r := rowReader{p: p, prov: provOf(p)}
	cells := make([]Cell, 0, len(Columns))
	for _, c := range Columns {
		cell := r.cell(c.Key)
		cell.Key = c.Key
		cells = append(cells, cell)
	}
	return cells
}

func provOf(p *probe.Profile) probe.Provider {
	prov, _ := probe.LookupProvider(p.Provider)
	return prov
}

type rowReader struct {
	p    *probe.Profile
	prov probe.Provider
}

func (r rowReader) cell(key string) Cell {
	switch key {
	case "retried.4xx":
		return r.decision("400", "401", "403", "404")
	case "retried.408":
		return r.decision("408")
	case "retried.409":
		return r.decision("409")
	case "retried.429":
		return r.decision("429")
	case "retried.429RetryAfter":
		return r.decision("429 retry-after 3")
	case "retried.5xx":
		return r.decision("500", "502", "503", "504")
	case "retried.529":
		if _, ok := r.prov.Fault("529"); !ok && r.prov.Name != "" {
			return Cell{Text: "n/a", State: NA, Basis: r.p.Provider + " has no 529"}
		}
		return r.decision("529")
	case "retried.reset":
		return r.decision("reset")
	case "retried.hang":
		return r.decision("hang")
	case "retried.streamError":
		var names []string
		for _, f := range r.prov.Faults {
			if strings.HasPrefix(f.Name, "sse ") {
				names = append(names, f.Name)
			}
		}
		if len(names) == 0 {
			names = []string{"sse overloaded_error", "sse invalid_request_error"}
		}
		return r.decision(names...)
	case "retried.cutStream":
		return r.decision("drop")
	case "retried.truncated":
		return r.decision("truncated")
	case "retried.malformed":
		return r.decision("malformed")
	case "retried.keepaliveStall":
		return r.decision("keepalive stall")
	case "maxRetries":
		var v *float64
		text := ""
		if m := r.p.Policy.MaxRetries; m != nil {
			v, text = fptr(float64(*m)), strconv.Itoa(*m)
		}
		return r.figure("policy.maxRetries", v, text, exhaustProbes(r.p))
	case "backoff.initialMs":
		return r.msFigure("policy.backoff.initialMs", r.p.Policy.Backoff.InitialMs, exhaustProbes(r.p))
	case "backoff.multiplier":
		b := r.p.Policy.Backoff.Multiplier
		text := ""
		if b != nil {
			text = "×" + strconv.FormatFloat(*b, 'g', 3, 64)
		}
		return r.figure("policy.backoff.multiplier", b, text, exhaustProbes(r.p))
	case "backoff.maxMs":
		c := r.msFigure("policy.backoff.maxMs", r.p.Policy.Backoff.MaxMs, exhaustProbes(r.p))
		if c.State != Known {
			if conf, ok := r.p.Confidence["policy.backoff.maxMs"]; ok {
				// null with a confidence: the cap was never reached.
				c = Cell{Text: "not reached", Value: "none", State: Known, Confidence: conf.Level, Basis: conf.Basis, Probes: c.Probes}
			}
		}
		return c
	case "backoff.jitter":
		j := r.p.Policy.Backoff.Jitter
		text, val := "", ""
		if j != nil {
			text = fmt.Sprintf("%.2f–%.2f", j.MinFactor, j.MaxFactor)
			val = j.Kind
			if j.Kind != "" {
				text = j.Kind + " " + text
			} else {
				val = "band " + text
			}
		}
		c := r.figure("policy.backoff.jitter", nil, text, exhaustProbes(r.p))
		if c.State == Known {
			c.Value = val
		}
		return c
	case "hangTimeoutMs":
		var v *float64
		if t := r.p.Policy.TimeoutMs; t != nil {
			v = fptr(float64(*t))
		}
		return r.msFigure("policy.timeoutMs", v, []string{"probe-hang"})
	case "retryAfter.seconds":
		return r.boolFigure("policy.retryAfter.seconds", r.p.Policy.RetryAfter.Seconds, "429 retry-after 3")
	case "retryAfter.ms":
		return r.boolFigure("policy.retryAfter.ms", r.p.Policy.RetryAfter.Ms, "429 retry-after-ms 1700")
	case "retryAfter.httpDate":
		return r.boolFigure("policy.retryAfter.httpDate", r.p.Policy.RetryAfter.HTTPDate, "429 retry-after http-date")
	case "retryAfter.ceilingMs":
		return r.ceiling()
	case "xShouldRetry":
		return r.shouldRetry()
	case "fallback":
		text := "none seen"
		if fb := r.p.Policy.Fallbacks; len(fb) > 0 {
			text = strings.Join(fb, " → ")
		}
		return r.figure("policy.fallbacks", nil, text, nil)
	case "survivesOutageMs.overload":
		if _, ok := r.prov.Fault("529"); ok {
			return r.survival("529")
		}
		return r.survival("503")
	case "survivesOutageMs.429":
		return r.survival("429")
	case "survivesOutageMs.drop":
		return r.survival("drop")
	case "findings":
		return r.findings()
	}
	return Cell{Text: NotProbed, State: NotProbed}
}

func fptr(f float64) *float64 { return &f }

// ProbeName is the probe scenario's name of a fault (the run folder's).
func ProbeName(fault string) string {
	return "probe-" + strings.Map(func(r rune) rune {
		if r == ' ' || r == '_' {
			return '-'
		}
		return r
	}, fault)
}

func exhaustProbes(p *probe.Profile) []string {
	var out []string
	for _, f := range p.Faults {
		if f.Sample > 0 {
			out = append(out, fmt.Sprintf("probe-exhaust-%d", f.Sample))
		}
	}
	return out
}

func (r rowReader) fault(name string) (probe.FaultResult, bool) {
	i := slices.IndexFunc(r.p.Faults, func(f probe.FaultResult) bool { return f.Fault == name && f.Sample == 0 })
	if i < 0 {
		return probe.FaultResult{}, false
	}
	return r.p.Faults[i], true
}

// excerpt is a fault run's journal in brief: attempts, waits, end.
func excerpt(f probe.FaultResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d attempt(s)", f.Fault, f.Attempts)
	if len(f.WaitsMs) > 0 {
		ws := make([]string, len(f.WaitsMs))
		for i, w := range f.WaitsMs {
			ws[i] = probe.FormatMs(float64(w))
		}
		fmt.Fprintf(&b, ", waits %s", strings.Join(ws, ", "))
	}
	fmt.Fprintf(&b, ", %s", f.End)
	if f.Note != "" {
		fmt.Fprintf(&b, " (%s)", f.Note)
	}
	return b.String()
}

// decision is the retried cell of one or more faults: yes (all retried),
// no (none), or the retried ones by name; unknown when any could not be
// told, not probed when the profile has none of them (--only).
func (r rowReader) decision(names ...string) Cell {
	c := Cell{Confidence: probe.High}
	var yes, no, basis []string
	for _, n := range names {
		c.Probes = append(c.Probes, ProbeName(n))
		f, ok := r.fault(n)
		if !ok {
			return Cell{Text: NotProbed, State: NotProbed, Basis: n + ": not in this profile's battery", Probes: c.Probes}
		}
		basis = append(basis, excerpt(f))
		switch {
		case f.Retried == nil:
			return Cell{Text: "unknown", State: Unknown, Basis: strings.Join(basis, "; "), Probes: c.Probes}
		case *f.Retried:
			yes = append(yes, short(n))
		default:
			no = append(no, short(n))
		}
		if f.End == "stopped at the deadline" {
			c.Confidence = probe.Medium
		}
	}
	c.State, c.Basis = Known, strings.Join(basis, "; ")
	switch {
	case len(no) == 0:
		c.Text, c.Value = "yes", "yes"
	case len(yes) == 0:
		c.Text, c.Value = "no", "no"
	default:
		c.Text = "only " + strings.Join(yes, ", ")
		c.Value = c.Text
	}
	return c
}

// short names a fault in a cell: "sse overloaded_error" → "overloaded_error".
func short(n string) string { return strings.TrimPrefix(n, "sse ") }

// figure is the cell of a policy figure: known with its confidence, or
// unknown with the probe's reason.
func (r rowReader) figure(path string, num *float64, text string, probes []string) Cell {
	c := Cell{Probes: probes}
	conf, ok := r.p.Confidence[path]
	if ok && text != "" {
		c.State, c.Confidence, c.Basis, c.Text, c.Num = Known, conf.Level, conf.Basis, text, num
		c.Value = text
		if num != nil {
			c.Value = strconv.FormatFloat(*num, 'g', -1, 64)
		}
		return c
	}
	c.State, c.Text = Unknown, "unknown"
	for _, in := range r.p.Inconclusive {
		if in.Figure == path {
			c.Basis = in.Reason
			if strings.HasPrefix(in.Reason, "at least ") {
				c.Text = strings.SplitN(in.Reason, ":", 2)[0]
			}
			return c
		}
	}
	c.Basis = "the probe did not say (stopped, or not run)"
	return c
}

func (r rowReader) msFigure(path string, v *float64, probes []string) Cell {
	text := ""
	if v != nil {
		text = probe.FormatMs(*v)
	}
	return r.figure(path, v, text, probes)
}

func (r rowReader) boolFigure(path string, v *bool, fault string) Cell {
	text := ""
	if v != nil {
		text = yesNo(*v)
	}
	c := r.figure(path, nil, text, []string{ProbeName(fault)})
	if f, ok := r.fault(fault); ok {
		c.Basis = join(excerpt(f), c.Basis)
	}
	return c
}

func join(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (r rowReader) ceiling() Cell {
	ra := r.p.Policy.RetryAfter
	probes := []string{ProbeName("429 retry-after 3600")}
	if ra.CeilingMs != nil {
		c := r.msFigure("policy.retryAfter.ceilingMs", fptr(float64(*ra.CeilingMs)), probes)
		if len(ra.CeilingBracketMs) == 2 {
			c.Basis = join(fmt.Sprintf("bracket %s–%s", probe.FormatMs(float64(ra.CeilingBracketMs[0])), probe.FormatMs(float64(ra.CeilingBracketMs[1]))), c.Basis)
		}
		return c
	}
	c := r.figure("policy.retryAfter.ceilingMs", nil, "", probes)
	var value string
	switch {
	case ra.Large == "capped" && ra.CapMs != nil:
		// No ceiling: every value above the cap waits the cap.
		c.Text, value = "capped at "+probe.FormatMs(float64(*ra.CapMs)), "capped"
	case ra.Large == "waited":
		// No ceiling below the probe's deadline: a lower bound, said as one.
		c.Text, value = "none below "+probe.FormatMs(float64(ra.LargeMs)), "none"
	default:
		return c
	}
	if conf, ok := r.p.Confidence["policy.retryAfter.large"]; ok {
		c.State, c.Confidence, c.Value = Known, conf.Level, value
		c.Basis = join(c.Basis, conf.Basis)
	}
	return c
}

func (r rowReader) shouldRetry() Cell {
	t, okT := r.fault("400 x-should-retry true")
	f, okF := r.fault("503 x-should-retry false")
	probes := []string{ProbeName("400 x-should-retry true"), ProbeName("503 x-should-retry false")}
	if !okT || !okF {
		return Cell{Text: NotProbed, State: NotProbed, Probes: probes}
	}
	basis := excerpt(t) + "; " + excerpt(f)
	if t.Retried == nil || f.Retried == nil {
		return Cell{Text: "unknown", State: Unknown, Basis: basis, Probes: probes}
	}
	c := Cell{State: Known, Confidence: probe.High, Basis: basis, Probes: probes}
	switch {
	case *t.Retried && !*f.Retried:
		c.Text, c.Value = "obeyed", "obeyed"
	case !*t.Retried && *f.Retried:
		c.Text, c.Value = "ignored", "ignored"
	case *t.Retried:
		c.Text, c.Value = "only true", "only true"
	default:
		c.Text, c.Value = "only false", "only false"
	}
	// A 400 retried anyway, or a 503 never retried, says nothing of the header.
	if v, ok := r.fault("400"); ok && v.Retried != nil && *v.Retried && *t.Retried {
		c.Basis += "; a plain 400 is retried too"
	}
	return c
}

func (r rowReader) survival(kind string) Cell {
	path := "policy.survivesOutageMs." + kind
	s := r.p.Policy.SurvivesOutageMs[kind]
	var probes []string
	if kind == "503" {
		probes = exhaustProbes(r.p)
	} else if s != nil {
		for i := range s.SamplesMs {
			probes = append(probes, fmt.Sprintf("probe-survive-%s-%d", kind, i+1))
		}
	}
	if s != nil && s.Check != nil {
		probes = append(probes, "probe-check-"+kind+"-shorter", "probe-check-"+kind+"-longer")
	}
	if s == nil {
		c := r.figure(path, nil, "", probes)
		if c.Basis == "the probe did not say (stopped, or not run)" && r.p.Policy.SurvivesOutageMs == nil {
			c.Basis = "the profile has no survival figures (a profile from before they were measured)"
		}
		return c
	}
	text := probe.FormatMs(float64(s.Ms))
	if s.AtLeast {
		text = "≥ " + text
	} else if s.High != nil && *s.High != s.Low {
		text += fmt.Sprintf(" (%s–%s)", probe.FormatMs(float64(s.Low)), probe.FormatMs(float64(*s.High)))
	}
	c := r.figure(path, fptr(float64(s.Ms)), text, probes)
	c.State, c.Confidence = Known, s.Confidence
	c.Value = strconv.FormatInt(s.Ms, 10)
	if s.AtLeast {
		c.Value = ">=" + c.Value
	}
	if s.Check != nil && s.Check.Note != "" && !strings.Contains(c.Basis, s.Check.Note) {
		c.Basis = join(c.Basis, s.Check.Note)
	}
	return c
}

func (r rowReader) findings() Cell {
	if len(r.p.Findings) == 0 {
		return Cell{Text: "none", Value: "", State: Known, Confidence: probe.High, Basis: "no experiment raised a finding"}
	}
	var codes, basis, probes []string
	for _, g := range probe.GroupFindings(r.p.Findings) {
		codes = append(codes, g.Code)
		basis = append(basis, fmt.Sprintf("%s (%s): %s", g.Code, strings.Join(g.Probes, ", "), g.Evidence))
		for _, p := range g.Probes {
			if !slices.Contains(probes, p) {
				probes = append(probes, p)
			}
		}
	}
	sorted := slices.Sorted(slices.Values(codes))
	return Cell{Text: strings.Join(codes, ", "), Value: strings.Join(sorted, ","), State: Known, Confidence: probe.High,
		Basis: strings.Join(basis, "; "), Probes: probes}
}
