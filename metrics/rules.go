package metrics

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/trace"
)

// source is how a trace analyze metric is computed from the Collector's
// counters over a window: num / den, a rate with a Wilson interval, or a
// mean without one.
type source struct {
	num, den string // counter (or summary _sum, _count) names
	mean     bool
}

// sources lists the metrics Rules can alert on: those whose numerator and
// denominator the Collector counts. A new one is one entry here.
var sources = map[string]source{
	"provider_retry_rate":   {num: MetricRequestsWithRetries, den: MetricRequests},
	"provider_failure_rate": {num: MetricRequestsFailed, den: MetricRequests},
	"l2_escalation_rate":    {num: MetricL2RunsEscalated, den: MetricL2Runs},
	"diagnosis_rate":        {num: MetricDiagnosesStarted, den: MetricStepsFinished},
	"avg_repair_iterations": {num: MetricRepairIterations + "_sum", den: MetricRepairIterations + "_count", mean: true},
}

// RuleMetrics lists the metrics Rules can alert on, in trace.Registry
// order.
func RuleMetrics() []string {
	var out []string
	for _, d := range trace.Registry {
		if _, ok := sources[d.Name]; ok {
			out = append(out, d.Name)
		}
	}
	return out
}

// RuleOptions are the settings of Rules; zero values take trace
// analyze's defaults.
type RuleOptions struct {
	// Window is the range the counts are taken over (increase over it);
	// default one hour.
	Window time.Duration
	// MinSamples is the minimum sample count of an alert without its own
	// (analyze's --min-samples); below it, and below 1, an alert never fires.
	MinSamples int
	// Confidence is the one-sided confidence of the Wilson bounds; 0 means
	// 0.95 (z ≈ 1.645).
	Confidence float64
}

// UnsupportedMetricError is an alert on a metric the Collector does not
// count the samples of.
type UnsupportedMetricError struct{ Alert, Metric string }

func (e *UnsupportedMetricError) Error() string {
	return fmt.Sprintf("alert %q: metric %q has no Prometheus counters", e.Alert, e.Metric)
}

// Hint says which metrics Rules supports.
func (e *UnsupportedMetricError) Hint() string {
	return "alert on one of " + strings.Join(RuleMetrics(), ", ") + " (the metrics the Collector exports the counts of)"
}

// Rules writes a Prometheus rule file (YAML) for alerts: one group,
// "retrylab", holding for each metric the alerts use recording rules of
// its numerator, its samples (denominator) and its value over the window
// (rates also their one-sided Wilson lower and upper bounds, with the
// formula and z of trace.Wilson), then one alerting rule per alert, named
// as the alert. An alert fires exactly when trace analyze would say
// firing on the same counts: its samples at least its minSamples (and 1),
// and for a rate the lower bound past the threshold for > and >=, the
// upper bound for < and <=, for a mean the value. Each alert has a
// severity label (the alert's, else "warning") and a summary annotation.
// The output depends only on its arguments.
func Rules(w io.Writer, alerts []trace.Alert, opts RuleOptions) error {
	if opts.Window == 0 {
		opts.Window = time.Hour
	}
	if opts.Window < 0 {
		return fmt.Errorf("window %v is not positive", opts.Window)
	}
	conf := opts.Confidence
	if conf == 0 {
		conf = 0.95
	}
	if !(conf > 0.5 && conf < 1) {
		return fmt.Errorf("confidence %v is out of range (want 0.5 < c < 1)", conf)
	}
	g := ruleGen{window: model.Duration(opts.Window).String(), z: math.Sqrt2 * math.Erfinv(2*conf-1),
		conf: conf, minSamples: opts.MinSamples, recorded: map[string]bool{}}
	var group ruleGroup
	group.Name = "retrylab"
	var alerting []rule
	for _, al := range alerts {
		r, records, err := g.alert(al)
		if err != nil {
			return err
		}
		group.Rules = append(group.Rules, records...)
		alerting = append(alerting, r)
	}
	group.Rules = append(group.Rules, alerting...)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Prometheus rules written by 'retrylab trace rules' (window %s, confidence %s): the\n", g.window, num(conf))
	buf.WriteString("# alerts of 'retrylab trace analyze' on the counters of retrylab's metrics.Collector.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(ruleFile{Groups: []ruleGroup{group}}); err != nil {
		return err
	}
	enc.Close()
	_, err := w.Write(buf.Bytes())
	return err
}

type ruleFile struct {
	Groups []ruleGroup `yaml:"groups"`
}

type ruleGroup struct {
	Name  string `yaml:"name"`
	Rules []rule `yaml:"rules"`
}

type rule struct {
	Record      string            `yaml:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty"`
	Expr        string            `yaml:"expr"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// ruleGen builds the rules of one file.
type ruleGen struct {
	window     string
	z, conf    float64
	minSamples int
	recorded   map[string]bool // metrics whose recording rules are written
}

// RecordName is the name of the recording rule of part (numerator,
// samples, value, wilson_lower, wilson_upper) of metric over window
// (as Prometheus writes durations: 1h, 30m, 1d).
func RecordName(metric, part, window string) string {
	return "retrylab:" + metric + ":" + part + "_" + window
}

// alert returns the alerting rule of al and the recording rules it needs
// that are not yet written.
func (g *ruleGen) alert(al trace.Alert) (rule, []rule, error) {
	name := al.Name
	if name == "" {
		name = al.Metric
	}
	src, ok := sources[al.Metric]
	if !ok {
		return rule{}, nil, &UnsupportedMetricError{Alert: name, Metric: al.Metric}
	}
	if al.Threshold == nil {
		return rule{}, nil, fmt.Errorf("alert %q: no threshold", name)
	}
	switch al.Op {
	case ">", ">=", "<", "<=":
	default:
		return rule{}, nil, fmt.Errorf("alert %q: unknown op %q (want > >= < <=)", name, al.Op)
	}
	var records []rule
	if !g.recorded[al.Metric] {
		g.recorded[al.Metric] = true
		records = g.records(al.Metric, src)
	}
	minN := g.minSamples
	if al.MinSamples != nil {
		minN = *al.MinSamples
	}
	minN = max(minN, 1)
	part, what := "value", "value"
	if !src.mean {
		part, what = "wilson_lower", fmt.Sprintf("one-sided %s%% Wilson lower bound", num(g.conf*100))
		if al.Op == "<" || al.Op == "<=" {
			part, what = "wilson_upper", fmt.Sprintf("one-sided %s%% Wilson upper bound", num(g.conf*100))
		}
	}
	t := num(*al.Threshold)
	expr := fmt.Sprintf("%s %s %s and %s >= %d", RecordName(al.Metric, part, g.window), al.Op, t,
		RecordName(al.Metric, "samples", g.window), minN)
	return rule{
		Alert:  name,
		Expr:   expr,
		Labels: map[string]string{"severity": tmplText(cmp.Or(al.Severity, "warning"))},
		Annotations: map[string]string{"summary": fmt.Sprintf(
			"%s: the %s of %s over %s is {{ printf \"%%.4f\" $value }}, %s %s (at least %d samples).",
			tmplText(name), what, al.Metric, g.window, al.Op, t, minN)},
	}, records, nil
}

// records returns the recording rules of metric.
func (g *ruleGen) records(metric string, src source) []rule {
	rec := func(part string) string { return RecordName(metric, part, g.window) }
	inc := func(m string) string { return fmt.Sprintf("sum(increase(%s[%s]))", m, g.window) }
	out := []rule{
		// A numerator nothing has counted yet may have no series at all
		// (a labelled counter exists once incremented): it is then 0.
		{Record: rec("numerator"), Expr: inc(src.num) + " or 0 * " + inc(src.den)},
		{Record: rec("samples"), Expr: inc(src.den)},
		{Record: rec("value"), Expr: rec("numerator") + " / " + rec("samples")},
	}
	if src.mean {
		return out
	}
	// trace.Wilson, operation for operation: p clamped to [0, 1], then
	// (mid ∓ half) / den, clamped to [0, 1].
	p := fmt.Sprintf("clamp_max(clamp_min(%s, 0), 1)", rec("value"))
	n := rec("samples")
	z, z2 := num(g.z), num(g.z*g.z)
	mid := fmt.Sprintf("%s + %s / (2 * %s)", p, z2, n)
	half := fmt.Sprintf("%s * sqrt(%s * (1 - %s) / %s + %s / (4 * %s * %s))", z, p, p, n, z2, n, n)
	den := fmt.Sprintf("(1 + %s / %s)", z2, n)
	return append(out,
		rule{Record: rec("wilson_lower"), Expr: fmt.Sprintf("clamp_min((%s - %s) / %s, 0)", mid, half, den)},
		rule{Record: rec("wilson_upper"), Expr: fmt.Sprintf("clamp_max((%s + %s) / %s, 1)", mid, half, den)},
	)
}

// tmplText quotes s for Prometheus' templates: an alert's name may hold
// "{{", which would otherwise start an action.
func tmplText(s string) string { return strings.ReplaceAll(s, "{{", `{{ "{{" }}`) }

// num formats v as the shortest decimal that reads back as v.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
