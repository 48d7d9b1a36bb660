package trace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Alert states.
const (
	StateOK               = "ok"
	StateWarning          = "warning"
	StateFiring           = "firing"
	StateInsufficientData = "insufficient_data"
)

// Alert is a threshold on one of Metrics.
type Alert struct {
	Name       string   `yaml:"name"`      // defaults to Metric
	Metric     string   `yaml:"metric"`    // one of MetricNames
	Op         string   `yaml:"op"`        // > >= < <=
	Threshold  *float64 `yaml:"threshold"` // required
	MinSamples *int     `yaml:"minSamples"`
	Severity   string   `yaml:"severity"`
}

// AlertResult is an evaluated Alert.
type AlertResult struct {
	Name      string  `json:"name"`
	Op        string  `json:"op"`
	Threshold float64 `json:"threshold"`
	Value     float64 `json:"value"`
	Samples   int64   `json:"samples"`
	Lower     float64 `json:"lower"`
	Upper     float64 `json:"upper"`
	State     string  `json:"state"`
	Metric    string  `json:"-"`
	Severity  string  `json:"severity,omitempty"`
}

func f64(v float64) *float64 { return &v }

// DefaultAlerts are seed 003's four alerts.
func DefaultAlerts() []Alert {
	return []Alert{
		{Name: "provider_retry_rate", Metric: "provider_retry_rate", Op: ">", Threshold: f64(0.20)},
		{Name: "l2_escalation_rate", Metric: "l2_escalation_rate", Op: ">", Threshold: f64(0.30)},
		{Name: "avg_repair_iterations", Metric: "avg_repair_iterations", Op: ">", Threshold: f64(3)},
		{Name: "diagnosis_rate", Metric: "diagnosis_rate", Op: ">", Threshold: f64(0.10)},
	}
}

// Wilson returns the Wilson score bounds of the proportion p observed over
// n samples, with normal quantile z (1.645 gives one-sided 95 % bounds).
// p is clamped to [0, 1]; n == 0 gives [0, 1].
func Wilson(p float64, n int64, z float64) (lower, upper float64) {
	if n <= 0 {
		return 0, 1
	}
	p = math.Max(0, math.Min(1, p))
	nf := float64(n)
	z2 := z * z
	den := 1 + z2/nf
	mid := p + z2/(2*nf)
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lower = math.Max(0, (mid-half)/den)
	upper = math.Min(1, (mid+half)/den)
	return lower, upper
}

func compare(op string, v, t float64) bool {
	switch op {
	case ">":
		return v > t
	case ">=":
		return v >= t
	case "<":
		return v < t
	case "<=":
		return v <= t
	}
	return false
}

// EvaluateAlerts evaluates alerts against a. A rate alert is firing when
// the whole one-sided Wilson interval is past the threshold (the lower bound
// for > and >=, the upper bound for < and <=), warning when only the point
// estimate is, insufficient_data when its samples are below its minSamples
// (defaultMin when unset), else ok. A non-rate metric (avg_repair_iterations)
// has no interval: lower = upper = value, and it fires on the value.
func EvaluateAlerts(a *Analysis, alerts []Alert, defaultMin int) ([]AlertResult, error) {
	out := make([]AlertResult, 0, len(alerts))
	for _, al := range alerts {
		v, n, rate, ok := a.Metric(al.Metric)
		if !ok {
			return nil, fmt.Errorf("alert %q: unknown metric %q", al.Name, al.Metric)
		}
		if al.Threshold == nil {
			return nil, fmt.Errorf("alert %q: no threshold", al.Name)
		}
		t := *al.Threshold
		r := AlertResult{Name: al.Name, Metric: al.Metric, Op: al.Op, Threshold: t, Value: v,
			Samples: n, Lower: v, Upper: v, Severity: al.Severity}
		if r.Name == "" {
			r.Name = al.Metric
		}
		if rate {
			r.Lower, r.Upper = Wilson(v, n, a.Z)
		}
		minN := defaultMin
		if al.MinSamples != nil {
			minN = *al.MinSamples
		}
		bound := r.Lower
		if al.Op == "<" || al.Op == "<=" {
			bound = r.Upper
		}
		switch {
		case n < int64(max(minN, 1)):
			r.State = StateInsufficientData
		case compare(al.Op, bound, t):
			r.State = StateFiring
		case compare(al.Op, v, t):
			r.State = StateWarning
		default:
			r.State = StateOK
		}
		out = append(out, r)
	}
	return out, nil
}

// AlertError is a bad alert: its Hint says what to do next.
type AlertError struct {
	File  string // "" for a --alert flag
	Line  int
	Field string
	Msg   string
}

func (e *AlertError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Hint tells the user what to do next.
func (e *AlertError) Hint() string {
	if e.File == "" {
		return "write an alert as METRIC OP VALUE, e.g. --alert 'provider_retry_rate>0.2'; metrics: " + strings.Join(MetricNames, ", ")
	}
	return "each alert needs metric (" + strings.Join(MetricNames, ", ") + "), op (> >= < <=) and threshold; see 'retrylab trace analyze --help'"
}

// ParseAlert parses a --alert flag: METRIC OP VALUE with OP one of > >= < <=,
// e.g. "provider_retry_rate>0.2". Spaces around the parts are allowed.
func ParseAlert(s string) (Alert, error) {
	bad := func(msg string) (Alert, error) {
		return Alert{}, &AlertError{Msg: fmt.Sprintf("bad --alert %q: %s", s, msg)}
	}
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		return bad("no operator (want > >= < <=)")
	}
	op := s[i : i+1]
	rest := s[i+1:]
	if strings.HasPrefix(rest, "=") {
		op += "="
		rest = rest[1:]
	}
	metric := strings.TrimSpace(s[:i])
	if metric == "" {
		return bad("no metric before " + op)
	}
	if !isMetric(metric) {
		return bad("unknown metric " + strconv.Quote(metric))
	}
	v, err := parseThreshold(metric, strings.TrimSpace(rest))
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return bad("threshold " + strconv.Quote(strings.TrimSpace(rest)) + " is not a number")
	}
	return Alert{Name: metric, Metric: metric, Op: op, Threshold: &v}, nil
}

func isMetric(m string) bool {
	for _, n := range MetricNames {
		if n == m {
			return true
		}
	}
	return false
}

// LoadAlerts reads an alerts file (YAML, JSON being YAML too):
//
//	alerts:
//	  - name: provider_retry_rate   # defaults to the metric's name
//	    metric: provider_retry_rate
//	    op: ">"
//	    threshold: 0.20
//	    minSamples: 20
//	    severity: page
//
// Unknown fields are errors. Errors are *AlertError naming file, line and field.
func LoadAlerts(path string) ([]Alert, error) {
	return LoadAlertsContext(context.Background(), path)
}

// MaxAlertsFileBytes is the largest alerts file LoadAlerts reads: a larger
// one (a log given by mistake, /dev/zero) is an error, not read to its end.
const MaxAlertsFileBytes = 1 << 20

// LoadAlertsContext is LoadAlerts giving up when ctx is done: a FIFO or
// bash's <(...) is read in a goroutine of its own, as OpenContext does, so
// that a writer that never writes cannot keep it from returning an error
// wrapping the context's cause.
func LoadAlertsContext(ctx context.Context, path string) ([]Alert, error) {
	fail := func(err error) error {
		return &AlertError{File: path, Msg: "cannot read alerts file: " + cause(err)}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fail(err)
	}
	if fi.IsDir() {
		return nil, &AlertError{File: path, Msg: "is a folder, not an alerts file"}
	}
	var src io.Reader
	if fi.Mode().IsRegular() {
		f, err := os.Open(path)
		if err != nil {
			return nil, fail(err)
		}
		defer f.Close()
		src = f
	} else {
		ar := newAsyncReader(ctx, func() (io.Reader, error) { return os.Open(path) })
		defer ar.Close()
		src = ar
	}
	data, err := io.ReadAll(io.LimitReader(src, MaxAlertsFileBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: stopped reading: %w", path, context.Cause(ctx))
		}
		return nil, fail(err)
	}
	if len(data) > MaxAlertsFileBytes {
		return nil, &AlertError{File: path, Msg: fmt.Sprintf("larger than %d bytes: not an alerts file", MaxAlertsFileBytes)}
	}
	return ParseAlerts(path, data)
}

// ParseAlerts parses the contents of an alerts file; name is used in errors.
func ParseAlerts(name string, data []byte) ([]Alert, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &AlertError{File: name, Msg: "empty alerts file", Field: "alerts"}
		}
		return nil, yamlError(name, err)
	}
	// A second document ("---") would be ignored without a word.
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &AlertError{File: name, Line: extra.Line,
			Msg: "a second YAML document (---): an alerts file holds one; put every alert in its one alerts: list"}
	case !errors.Is(err, io.EOF):
		return nil, yamlError(name, err)
	}
	// Line numbers of each alert entry, for the checks below.
	lines := map[int]int{}
	fields := map[int]map[string]int{}
	values := map[int]map[string]*yaml.Node{}
	listed := false // an explicit "alerts:" list, even an empty one
	if len(doc.Content) > 0 && doc.Content[0].Kind == yaml.MappingNode {
		m := doc.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "alerts" && m.Content[i+1].Kind == yaml.SequenceNode {
				listed = true
				for j, it := range m.Content[i+1].Content {
					lines[j] = it.Line
					fields[j] = map[string]int{}
					values[j] = map[string]*yaml.Node{}
					for k := 0; k+1 < len(it.Content); k += 2 {
						fields[j][it.Content[k].Value] = it.Content[k].Line
						values[j][it.Content[k].Value] = it.Content[k+1]
					}
				}
			}
		}
	}
	var file struct {
		Alerts []Alert `yaml:"alerts"`
	}
	dec = yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil {
		ae := yamlError(name, err)
		// Name the field on the line yaml complained about.
		for j, fl := range fields {
			for f, l := range fl {
				if l == ae.Line && ae.Line > 0 {
					ae.Field = fmt.Sprintf("alerts[%d].%s", j, f)
				}
			}
		}
		return nil, ae
	}
	if len(file.Alerts) == 0 {
		if listed {
			// "alerts: []" is how a file turns every alert off.
			return []Alert{}, nil
		}
		return nil, &AlertError{File: name, Field: "alerts", Msg: "no alerts defined"}
	}
	at := func(j int, field string) int {
		if l, ok := fields[j][field]; ok {
			return l
		}
		return lines[j]
	}
	for j := range file.Alerts {
		al := &file.Alerts[j]
		errf := func(field, msg string) error {
			return &AlertError{File: name, Line: at(j, field), Field: fmt.Sprintf("alerts[%d].%s", j, field), Msg: msg}
		}
		if al.Metric == "" {
			al.Metric = al.Name
		}
		if al.Metric == "" {
			return nil, errf("metric", "missing")
		}
		if !isMetric(al.Metric) {
			return nil, errf("metric", "unknown metric "+strconv.Quote(al.Metric))
		}
		if al.Name == "" {
			al.Name = al.Metric
		}
		// Names and severities are printed in every format and on stderr.
		for _, f := range []struct{ field, v string }{{"name", al.Name}, {"severity", al.Severity}} {
			if why := unprintable(f.v); why != "" {
				return nil, errf(f.field, strconv.Quote(f.v)+" "+why)
			}
		}
		switch al.Op {
		case ">", ">=", "<", "<=":
		case "":
			return nil, errf("op", `missing (want ">", ">=", "<" or "<=")`)
		default:
			return nil, errf("op", fmt.Sprintf(`%q is not one of ">", ">=", "<", "<="`, al.Op))
		}
		if al.Threshold == nil {
			return nil, errf("threshold", "missing")
		}
		if t := *al.Threshold; math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, errf("threshold", fmt.Sprintf("%s is not a finite number (want e.g. 0.2)", values[j]["threshold"].Value))
		}
		if n := values[j]["minSamples"]; n != nil && n.ShortTag() != "!!int" {
			return nil, errf("minSamples", fmt.Sprintf("%s is not a whole number (want e.g. 20)", n.Value))
		}
		if al.MinSamples != nil && *al.MinSamples < 0 {
			return nil, errf("minSamples", fmt.Sprintf("%d is negative (want 0 or more)", *al.MinSamples))
		}
	}
	return file.Alerts, nil
}

// maxAlertText is the longest alert name or severity.
const maxAlertText = 200

// unprintable says what keeps s from being printed as it is, or "".
func unprintable(s string) string {
	if len(s) > maxAlertText {
		return fmt.Sprintf("is longer than %d bytes", maxAlertText)
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return fmt.Sprintf("holds the control or invisible character %U", r)
		}
	}
	return ""
}

// yamlError turns a yaml error ("yaml: line 3: ...") into an *AlertError.
func yamlError(name string, err error) *AlertError {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: unmarshal errors:\n")
	msg = strings.TrimSpace(strings.TrimPrefix(msg, "yaml: "))
	if i := strings.IndexByte(msg, '\n'); i > 0 {
		msg = msg[:i] // the first of several errors is enough
	}
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.IndexByte(rest, ':'); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				line = n
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	// Say it in the file's terms, not Go's.
	if f, ok := strings.CutPrefix(msg, "field "); ok {
		if i := strings.Index(f, " not found in type"); i > 0 {
			msg = "unknown field " + strconv.Quote(f[:i])
		}
	}
	if v, ok := strings.CutPrefix(msg, "cannot unmarshal !!"); ok {
		// "cannot unmarshal !!str `abc` into float64"
		if got, into, ok := strings.Cut(v, " into "); ok {
			if _, val, ok := strings.Cut(got, " "); ok {
				want := "a " + into
				if strings.HasPrefix(into, "float") || strings.HasPrefix(into, "int") {
					want = "a number"
				}
				msg = val + " is not " + want
			}
		}
	}
	return &AlertError{File: name, Line: line, Msg: msg}
}

// parseThreshold parses an --alert threshold: a number, or for a metric in
// seconds (time_to_recovery_*) also a duration with unit s or ms (30s,
// 500ms).
func parseThreshold(metric, s string) (float64, error) {
	if d, ok := LookupMetric(metric); ok && d.Unit == "seconds" {
		switch {
		case strings.HasSuffix(s, "ms"):
			v, err := strconv.ParseFloat(strings.TrimSuffix(s, "ms"), 64)
			return v / 1000, err
		case strings.HasSuffix(s, "s"):
			return strconv.ParseFloat(strings.TrimSuffix(s, "s"), 64)
		}
	}
	return strconv.ParseFloat(s, 64)
}
