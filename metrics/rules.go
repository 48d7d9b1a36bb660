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

	"github.com/retrylab/retrylab/trace/analyze"
)

// source is how a trace analyze metric is computed from the Collector's
// counters over a window: num / den, a rate gated on its exact binomial
// bound, or a mean without one.
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

// RuleMetrics lists the metrics Rules can alert on, in analyze.Registry
// order.
func RuleMetrics() []string {
	var out []string
	for _, d := range analyze.Registry {
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
	// Confidence is the one-sided confidence of the exact bounds the rate
	// alerts are gated on; 0 means 0.95.
	Confidence float64
	// ExactUpTo is the largest sample count a rate alert's critical count
	// is tabulated for (0 means DefaultExactUpTo): up to it the rules fire
	// on exactly the counts analyze fires on; past it they use
	// analyze.TailBound, which may stay silent a fraction of a standard
	// deviation past analyze's gate, never fire before it.
	ExactUpTo int
}

// DefaultExactUpTo is RuleOptions.ExactUpTo's default: a rate alert's
// exact gate is written out for windows of up to this many samples.
const DefaultExactUpTo = 10_000

// MaxExactUpTo bounds ExactUpTo: each alert's expression grows by a term
// per n where the approximation of its critical count is off (a few per
// cent of n), and writing it costs a few gate evaluations per n.
const MaxExactUpTo = 1_000_000

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
// (rates also both counts rounded to whole numbers, k and n), then one
// alerting rule per alert, named as the alert. An alert fires exactly when
// trace analyze would say firing on the same counts: its samples at least
// its minSamples (and 1), and for a rate its exact (Clopper–Pearson) bound
// past the threshold — which PromQL cannot compute, so the rule compares k
// with the critical count analyze's gate turns at for the window's n
// (analyze.CriticalCount), tabulated up to ExactUpTo samples, and past that
// holds analyze.TailBound below 1 − confidence (never firing where analyze
// would not); for a mean, the value past the threshold. Each alert has a
// severity label (the alert's, else "warning") and a summary annotation.
// The output depends only on its arguments.
func Rules(w io.Writer, alerts []analyze.Alert, opts RuleOptions) error {
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
	exactUpTo := cmp.Or(opts.ExactUpTo, DefaultExactUpTo)
	if exactUpTo < 1 || exactUpTo > MaxExactUpTo {
		return fmt.Errorf("exact-up-to %d is out of range (want 1 to %d)", exactUpTo, MaxExactUpTo)
	}
	g := ruleGen{window: model.Duration(opts.Window).String(), conf: conf, exactUpTo: int64(exactUpTo),
		minSamples: opts.MinSamples, recorded: map[string]bool{}}
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
	fmt.Fprintf(&buf, "# Rate alerts are gated on the exact binomial (Clopper–Pearson) bound: on k against the\n# critical count for n up to %d samples, on a closed-form tail bound past it (docs/prometheus.md).\n", exactUpTo)
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
	conf       float64
	exactUpTo  int64 // the largest n whose critical count is tabulated
	minSamples int
	recorded   map[string]bool // metrics whose recording rules are written
}

// RecordName is the name of the recording rule of part (numerator,
// samples, value; for rates also k and n, the rounded counts) of metric over window
// (as Prometheus writes durations: 1h, 30m, 1d).
func RecordName(metric, part, window string) string {
	return "retrylab:" + metric + ":" + part + "_" + window
}

// alert returns the alerting rule of al and the recording rules it needs
// that are not yet written.
func (g *ruleGen) alert(al analyze.Alert) (rule, []rule, error) {
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
	t := num(*al.Threshold)
	var expr, what string
	if src.mean {
		what = "the value"
		expr = fmt.Sprintf("%s %s %s and %s >= %d", RecordName(al.Metric, "value", g.window), al.Op, t,
			RecordName(al.Metric, "samples", g.window), minN)
	} else {
		what = fmt.Sprintf("its one-sided %s%% exact (Clopper–Pearson) bound", num(g.conf*100))
		var err error
		if expr, err = g.rateGate(al.Metric, al.Op, *al.Threshold, minN); err != nil {
			return rule{}, nil, err
		}
	}
	return rule{
		Alert:  name,
		Expr:   expr,
		Labels: map[string]string{"severity": tmplText(cmp.Or(al.Severity, "warning"))},
		Annotations: map[string]string{"summary": fmt.Sprintf(
			"%s: %s over %s is {{ printf \"%%.4f\" $value }}, and %s is %s %s (at least %d samples).",
			tmplText(name), al.Metric, g.window, what, al.Op, t, minN)},
	}, records, nil
}

// rateGate is the expression of a rate alert: the metric's value where
// analyze's exact gate fires on the window's counts. For > and >= the gate
// fires when k reaches the critical count of n (analyze.CriticalCount); for
// < and <= it is the same on the mirrored counts, n − k of n at 1 − t. Up
// to exactUpTo samples the critical count is written exactly, as an
// approximation plus corrections (critical); past it the rule holds
// analyze.TailBound below 1 − confidence, operation for operation.
func (g *ruleGen) rateGate(metric, op string, t float64, minN int) (string, error) {
	rec := func(part string) string { return RecordName(metric, part, g.window) }
	k, n := rec("k"), rec("n")
	kk, tt := k, t // the count and threshold of the upper-tail gate
	if op == "<" || op == "<=" {
		kk, tt = fmt.Sprintf("(%s - %s)", n, k), 1-t
	}
	crit, err := g.critical(op, t, n)
	if err != nil {
		return "", err
	}
	head := fmt.Sprintf("%s and %s >= %d", rec("value"), rec("samples"), minN)
	exact := fmt.Sprintf("%s and %s <= %d and %s >= (%s)", head, n, g.exactUpTo, kk, crit)

	// Past the table: analyze.TailBound < α.
	// α to 15 digits: 1 − 0.95 is 0.050000000000000044 in binary.
	alpha := strconv.FormatFloat(1-g.conf, 'g', 15, 64)
	nk := fmt.Sprintf("(%s - %s)", n, kk)
	q := fmt.Sprintf("(%s / %s)", kk, n)
	kl := fmt.Sprintf("(%s * ln(%s / %s) + (1 - %s) * ln((1 - %s) / %s))", q, q, num(tt), q, q, num(1-tt))
	r := fmt.Sprintf("(%s * %s / ((%s + 1) * %s))", nk, num(tt), kk, num(1-tt))
	bound := fmt.Sprintf("sqrt(%s / (2 * pi() * %s * %s)) * exp(-%s * %s) / (1 - %s)", n, kk, nk, n, kl, r)
	past := fmt.Sprintf("%s and %s > %d", head, n, g.exactUpTo)
	inner := fmt.Sprintf("%s and %s > 0 and %s < %s and %s < 1 and %s < %s", past, kk, kk, n, r, bound, alpha)
	// At k = n (mirrored: 0) the tail is t^n exactly; PromQL's ln takes
	// vectors only, so the logarithms of constants are written out.
	all := fmt.Sprintf("%s and %s == %s and %s * %s < %s", past, kk, n, n, num(math.Log(tt)), num(math.Log(1-g.conf)))
	return exact + " or " + inner + " or " + all, nil
}

// critical returns a PromQL expression of n (a vector of whole counts)
// that equals, for every n from 1 to exactUpTo, the count the gate of op
// and t turns at on the upper-tail side (for < and <=, n minus the largest
// firing count), or a count past n where it never fires. It is the
// Cornish–Fisher approximation of the binomial quantile,
//
//	floor(n·t + z·sqrt(n·t(1−t)) + c0 + c1/sqrt(n·t(1−t))) + 1,
//
// which is right at all but a few per cent of n, plus a term
// (n == bool m) * d for each n = m where it is not. PromQL evaluates it
// as Go does here, operation for operation; c0 is nudged so that no n
// lands within 1e-9 of a whole number before floor, where another
// machine's rounding (a fused multiply-add) could take it across.
func (g *ruleGen) critical(op string, t float64, n string) (string, error) {
	cs := analyze.CriticalCounts(op, t, g.exactUpTo, g.conf)
	tt := t
	if op == "<" || op == "<=" {
		tt = 1 - t
	}
	// want is the upper-tail count the gate turns at, past m when it
	// never fires.
	want := func(m int64) int64 {
		w := cs[m]
		if op == "<" || op == "<=" {
			w = m - cs[m]
		}
		return min(w, m+1)
	}
	if !(tt > 0 && tt < 1) {
		// A threshold at or past 0 or 1: the gate fires from a fixed
		// count (any, or one) or never.
		never := want(1) == 2
		for m := int64(1); m <= g.exactUpTo; m++ {
			if never && want(m) != m+1 || !never && want(m) != want(1) {
				return "", fmt.Errorf("the critical counts of %s %v are neither fixed nor never (a bug: report it)", op, t)
			}
		}
		if never {
			return n + " + 1", nil
		}
		return strconv.FormatInt(want(1), 10), nil
	}
	z := math.Sqrt2 * math.Erfinv(2*g.conf-1)
	v := tt * (1 - tt)
	c0 := (1-2*tt)*(z*z-1)/6 + 0.5
	c1 := (z*z*z-3*z)*(1-6*v)/24 - (2*z*z*z-5*z)*(1-2*tt)*(1-2*tt)/36
	pre := func(m int64, c0 float64) float64 {
		mf := float64(m)
		return mf*tt + z*math.Sqrt(mf*v) + c0 + c1/math.Sqrt(mf*v)
	}
	for try := 0; ; try++ {
		if try == 100 {
			return "", fmt.Errorf("no safe approximation of the critical counts of %s %v (a bug: report it)", op, t)
		}
		c := c0 + float64(try)*1e-7
		ok := true
		for m := int64(1); m <= g.exactUpTo && ok; m++ {
			x := pre(m, c)
			ok = math.Abs(x-math.Round(x)) > 1e-9*max(1, math.Abs(x))
		}
		if ok {
			c0 = c
			break
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "floor(%s * %s + %s * sqrt(%s * %s) + %s + %s / sqrt(%s * %s)) + 1", n, num(tt), num(z), n, num(v), num(c0), num(c1), n, num(v))
	for m := int64(1); m <= g.exactUpTo; m++ {
		approx := int64(math.Floor(pre(m, c0))) + 1
		if w := want(m); min(approx, m+1) != w {
			fmt.Fprintf(&sb, " + (%s == bool %d) * %d", n, m, w-approx)
		}
	}
	return sb.String(), nil
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
	// The counts as whole numbers: increase() extrapolates to the window's
	// edges, and the exact gate is defined on whole counts.
	return append(out,
		rule{Record: rec("k"), Expr: fmt.Sprintf("round(%s)", rec("numerator"))},
		rule{Record: rec("n"), Expr: fmt.Sprintf("round(%s)", rec("samples"))},
	)
}

// tmplText quotes s for Prometheus' templates: an alert's name may hold
// "{{", which would otherwise start an action.
func tmplText(s string) string { return strings.ReplaceAll(s, "{{", `{{ "{{" }}`) }

// num formats v as the shortest decimal that reads back as v.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
