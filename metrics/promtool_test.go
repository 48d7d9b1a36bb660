package metrics_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/metrics"
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

// verdictCase is one alert on counts k of n (for avg_repair_iterations: a
// sum of iterations k over n runs) and the state trace analyze gives it.
type verdictCase struct {
	name  string
	alert analyze.Alert
	k, n  int
	want  string
	// rulesSilent marks counts past the rules' exact table where analyze
	// fires but the rules' closed-form bound does not yet (they never fire
	// where analyze does not).
	rulesSilent bool
}

func alertOf(metric, op string, t float64, minSamples int) analyze.Alert {
	a := analyze.Alert{Metric: metric, Op: op, Threshold: &t}
	if minSamples > 0 {
		a.MinSamples = &minSamples
	}
	return a
}

// verdictCases are the cases both trace analyze and promtool judge.
func verdictCases() []verdictCase {
	cases := []verdictCase{
		{"wide interval above the threshold does not fire", alertOf("provider_retry_rate", ">", 0.2, 0), 2, 5, analyze.StateWarning, false},
		{"below minSamples does not fire", alertOf("provider_retry_rate", ">", 0.2, 20), 15, 15, analyze.StateInsufficientData, false},
		{"clear retry rate fires", alertOf("provider_retry_rate", ">", 0.2, 0), 60, 100, analyze.StateFiring, false},
		{"retry rate below", alertOf("provider_retry_rate", ">", 0.2, 0), 10, 100, analyze.StateOK, false},
		{"no requests", alertOf("provider_retry_rate", ">", 0.2, 0), 0, 0, analyze.StateInsufficientData, false},
		{"l2 escalation fires", alertOf("l2_escalation_rate", ">", 0.3, 0), 8, 10, analyze.StateFiring, false},
		{"l2 escalation wide", alertOf("l2_escalation_rate", ">", 0.3, 0), 4, 10, analyze.StateWarning, false},
		{"repair mean fires", alertOf("avg_repair_iterations", ">", 3, 0), 20, 4, analyze.StateFiring, false},
		{"repair mean at the threshold", alertOf("avg_repair_iterations", ">", 3, 0), 12, 4, analyze.StateOK, false},
		{"repair mean below minSamples", alertOf("avg_repair_iterations", ">", 3, 10), 50, 4, analyze.StateInsufficientData, false},
		{"diagnosis fires", alertOf("diagnosis_rate", ">", 0.1, 0), 30, 100, analyze.StateFiring, false},
		{"diagnosis wide", alertOf("diagnosis_rate", ">=", 0.1, 0), 2, 10, analyze.StateWarning, false},
		{"failure rate below fires on the upper bound", alertOf("provider_failure_rate", "<", 0.5, 0), 10, 100, analyze.StateFiring, false},
		{"nothing counted in the numerator (no series) fires a < alert", alertOf("provider_retry_rate", "<", 0.2, 0), 0, 50, analyze.StateFiring, false},
		{"failure rate below, wide", alertOf("provider_failure_rate", "<=", 0.5, 0), 4, 10, analyze.StateWarning, false},
	}
	// At the threshold itself: the bound one ulp above it fires, at it
	// does not (> is strict), on both sides.
	lo, _ := analyze.ExactBounds(30, 100, 0.95)
	cases = append(cases,
		verdictCase{"lower bound one ulp above the threshold", alertOf("provider_retry_rate", ">", math.Nextafter(lo, 0), 0), 30, 100, analyze.StateFiring, false},
		verdictCase{"lower bound at the threshold", alertOf("provider_retry_rate", ">", lo, 0), 30, 100, analyze.StateWarning, false},
	)
	// A severity with Go template delimiters: Prometheus templates label
	// values, so the rule must escape it to read back as written.
	hostile := alertOf("provider_retry_rate", ">", 0.2, 0)
	hostile.Severity = `page {{ x }} {{"`
	cases = append(cases, verdictCase{"severity with template delimiters", hostile, 60, 100, analyze.StateFiring, false})
	cases = append(cases, randomCases(24)...)
	for i := range cases {
		cases[i].alert.Name = fmt.Sprintf("case_%02d", i)
	}
	return append(cases, gateCases()...)
}

// gateCases sweep the default rate alerts (named sweep_METRIC, one alert
// for all their cases) over n = 1…60 at the counts on both sides of the
// exact gate, then at large n on both sides of the table's end (1000) and
// of the closed-form bound past it, and in the band between the exact gate
// and the closed form, where only analyze fires.
func gateCases() []verdictCase {
	var out []verdictCase
	add := func(al analyze.Alert, k, n int64, silent bool) {
		if k < 0 || k > n {
			return
		}
		out = append(out, verdictCase{name: fmt.Sprintf("%s %d of %d", al.Name, k, n), alert: al, k: int(k), n: int(n), rulesSilent: silent})
	}
	for _, al := range analyze.DefaultAlerts() {
		if al.Metric == "avg_repair_iterations" {
			continue
		}
		al.Name = "sweep_" + al.Metric
		t := *al.Threshold
		for n := int64(1); n <= 60; n++ {
			c := analyze.CriticalCount(al.Op, t, n, 0.95)
			add(al, c-1, n, false)
			add(al, c, n, false)
		}
		for _, n := range []int64{999, 1000, 1001, 5000, 20000} {
			c := analyze.CriticalCount(al.Op, t, n, 0.95)
			add(al, c-1, n, false)
			if n <= metrics.DefaultExactUpTo {
				add(al, c, n, false)
				continue
			}
			// Past the table: the closed form turns at cf ≥ c.
			cf := c
			for analyze.TailBound(al.Op, cf, n, t) >= 0.05 {
				cf++
			}
			add(al, cf, n, false)
			add(al, cf-1, n, cf-1 >= c)
		}
	}
	return out
}

// randomCases are n random alerts on random counts, with no verdict of
// their own: promtool must agree with analyze, whatever it says.
func randomCases(n int) []verdictCase {
	rng := rand.New(rand.NewPCG(23, 2026))
	metricNames := metrics.RuleMetrics()
	var out []verdictCase
	for i := range n {
		m := metricNames[rng.IntN(len(metricNames))]
		op := []string{">", ">=", "<", "<="}[rng.IntN(4)]
		total := rng.IntN(60)
		k, t := rng.IntN(total+1), float64(rng.IntN(100))/100
		if m == "avg_repair_iterations" {
			k, t = rng.IntN(5*total+1), float64(rng.IntN(60))/10
		}
		out = append(out, verdictCase{name: fmt.Sprintf("random %d", i), alert: alertOf(m, op, t, rng.IntN(30)), k: k, n: total})
	}
	return out
}

// writeCase writes the events of c's counts through tw (a Writer per run
// for the per-run metrics).
func writeCase(t *testing.T, file string, c verdictCase, obs trace.Observer) {
	t.Helper()
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := func(run int) *trace.Writer {
		tw := trace.NewWriter(out, fmt.Sprintf("run-%d", run))
		tw.Observe(obs)
		return tw
	}
	one := w(0)
	for i := range c.n {
		hit := i < c.k
		switch c.alert.Metric {
		case "provider_retry_rate", "provider_failure_rate":
			p := trace.ProviderRequestFinished{Provider: []string{"anthropic", "openai"}[i%2], Model: "m", Success: true}
			if hit && c.alert.Metric == "provider_retry_rate" {
				p.Retries = 1
			}
			if hit && c.alert.Metric == "provider_failure_rate" {
				p.Success = false
			}
			one.Emit(trace.TypeProviderRequestFinished, p)
		case "diagnosis_rate":
			one.Emit(trace.TypeStepFinished, struct{}{})
			if hit {
				one.Emit(trace.TypeDiagnosisStarted, struct{}{})
			}
		case "l2_escalation_rate":
			tw := w(i + 1)
			tw.Emit(trace.TypeIterationStarted, struct{}{})
			if hit {
				tw.Emit(trace.TypeRunEscalated, trace.RunEscalated{From: "L2", To: "L3", Reason: "stuck"})
			}
		case "avg_repair_iterations":
			it := c.k / c.n
			if i < c.k%c.n {
				it++
			}
			tw := w(i + 1)
			for j := range it + 1 {
				tw.Emit(trace.TypeRepairAttempted, map[string]int{"iteration": j})
			}
		default:
			t.Fatalf("no events for metric %s", c.alert.Metric)
		}
	}
}

// testWindowMin is the window of the rules promtool tests, in minutes (short,
// for speed: the rules' arithmetic does not depend on it).
const testWindowMin = 10

var testRuleOptions = metrics.RuleOptions{Window: testWindowMin * time.Minute, MinSamples: 1}

// caseMin is the minutes each case takes in a promtool series: its
// counters at 0 for the first testWindowMin+1 samples, then at their value
// up to the case's evaluation at its last minute, so that increase over
// the window there is exactly the value (the window starts on a 0 sample,
// which stops extrapolation, and ends on a sample). Cases follow each
// other in one series, one evaluation each (the evaluation interval is
// caseMin); a drop to 0 between them is a counter reset no window spans.
const caseMin = 2 * testWindowMin

// promValues returns what c exports, by series (name{labels}), leaving out
// those at 0: a counter nothing incremented may not exist, and the rules
// must do without it.
func promValues(t *testing.T, c *metrics.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	add := func(name string, ls []string, v float64) {
		if v != 0 {
			out[name+"{"+strings.Join(ls, ",")+"}"] = v
		}
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			switch {
			case m.GetCounter() != nil:
				add(mf.GetName(), ls, m.GetCounter().GetValue())
			case m.GetSummary() != nil:
				add(mf.GetName()+"_sum", ls, m.GetSummary().GetSampleSum())
				add(mf.GetName()+"_count", ls, float64(m.GetSummary().GetSampleCount()))
			}
		}
	}
	return out
}

// promSeries lays the cases' values (promValues of each) one after another
// as promtool input series: case i is evaluated at minute caseMin·(i+1).
// A series a case does not have has no samples in its stretch.
func promSeries(cases []map[string]float64) []map[string]string {
	names := map[string]bool{}
	for _, c := range cases {
		for n := range c {
			names[n] = true
		}
	}
	var out []map[string]string
	for _, name := range slices.Sorted(maps.Keys(names)) {
		vals := []string{"0"} // minute 0
		for _, c := range cases {
			v, ok := c[name]
			if !ok {
				vals = append(vals, fmt.Sprintf("_x%d", caseMin))
				continue
			}
			vals = append(vals, fmt.Sprintf("0+0x%d %s+0x%d", testWindowMin, fmtFloat(v), testWindowMin-2))
		}
		out = append(out, map[string]string{"series": name, "values": strings.Join(vals, " ")})
	}
	return out
}

func fmtFloat(v float64) string { return fmt.Sprint(v) }

// promtool finds promtool; absent, the test is skipped, except in CI
// (CI=true), which must run it.
func promtool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	msg := "promtool not found (apt-get install prometheus)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + ": CI must run this test")
	}
	t.Skip(msg)
	return ""
}

// TestRulesAgreeWithAnalyze judges every verdictCase twice: trace analyze
// of the case's events, and promtool test rules of the generated rules on
// the series a Collector exports of the same events. Both verdicts must be
// the case's: firing, or not (but for the band past the exact table, where
// the rules must stay silent). The cases of one alert share a rules file
// holding that alert alone and one test group, in which they follow each
// other in time: promtool evaluates every rule of its files at every step,
// and a rate alert's expression is long.
func TestRulesAgreeWithAnalyze(t *testing.T) {
	tool := promtool(t)
	dir := t.TempDir()
	type alertCases struct {
		alert  analyze.Alert
		values []map[string]float64
		tests  []any
	}
	var order []string
	byAlert := map[string]*alertCases{}
	for i, c := range verdictCases() {
		file := filepath.Join(dir, fmt.Sprintf("case%03d.jsonl", i))
		col := metrics.New(metrics.Options{})
		writeCase(t, file, c, col)
		a, err := analyze.Run(context.Background(), []string{file}, analyze.Options{Alerts: []analyze.Alert{c.alert}, MinSamples: 1})
		if err != nil {
			t.Fatal(err)
		}
		r := a.Alerts[0]
		if c.want != "" && r.State != c.want {
			t.Errorf("%s: trace analyze says %s (value %v, lower %v, upper %v, n %d), want %s", c.name, r.State, r.Value, r.Lower, r.Upper, r.Samples, c.want)
		}
		if c.rulesSilent && r.State != analyze.StateFiring {
			t.Errorf("%s: in the band past the table, analyze says %s, want firing", c.name, r.State)
		}
		ac := byAlert[c.alert.Name]
		if ac == nil {
			ac = &alertCases{alert: c.alert}
			byAlert[c.alert.Name] = ac
			order = append(order, c.alert.Name)
		}
		ac.values = append(ac.values, promValues(t, col))
		var exp []any
		if r.State == analyze.StateFiring && !c.rulesSilent {
			exp = append(exp, map[string]any{"exp_labels": map[string]string{"severity": cmp.Or(c.alert.Severity, "warning")},
				"exp_annotations": map[string]string{"summary": summary(t, c.alert, r.Value)}})
		}
		ac.tests = append(ac.tests, map[string]any{"eval_time": fmt.Sprintf("%dm", caseMin*len(ac.values)),
			"alertname": c.alert.Name, "exp_alerts": exp})
	}
	var testFiles []string
	for i, name := range order {
		ac := byAlert[name]
		var rules bytes.Buffer
		if err := metrics.Rules(&rules, []analyze.Alert{ac.alert}, testRuleOptions); err != nil {
			t.Fatal(err)
		}
		rulesFile, testFile := fmt.Sprintf("rules%02d.yml", i), fmt.Sprintf("tests%02d.yml", i)
		write(t, filepath.Join(dir, rulesFile), rules.Bytes())
		tests, err := yaml.Marshal(map[string]any{"rule_files": []string{rulesFile}, "evaluation_interval": fmt.Sprintf("%dm", caseMin),
			"tests": []any{map[string]any{"interval": "1m", "input_series": promSeries(ac.values), "alert_rule_test": ac.tests}}})
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, testFile), tests)
		testFiles = append(testFiles, testFile)
	}
	for _, args := range [][]string{append([]string{"check", "rules"}, replaceAll(testFiles, "tests", "rules")...), append([]string{"test", "rules"}, testFiles...)} {
		cmd := exec.Command(tool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// replaceAll returns ss with old replaced by new in each.
func replaceAll(ss []string, old, new string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ReplaceAll(s, old, new)
	}
	return out
}

// TestRulesGoldenPromtool: promtool checks every golden rule file.
func TestRulesGoldenPromtool(t *testing.T) {
	tool := promtool(t)
	files, err := filepath.Glob(filepath.Join("testdata", "rules_*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden rule files: %v", err)
	}
	for _, f := range files {
		if out, err := exec.Command(tool, "check", "rules", f).CombinedOutput(); err != nil {
			t.Errorf("promtool check rules %s: %v\n%s", f, err, out)
		}
	}
}

// summary is the summary annotation the rule of al renders for value.
func summary(t *testing.T, al analyze.Alert, value float64) string {
	t.Helper()
	var rules bytes.Buffer
	if err := metrics.Rules(&rules, []analyze.Alert{al}, testRuleOptions); err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert       string
				Annotations map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(rules.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(f.Groups[0].Rules, func(r struct {
		Alert       string
		Annotations map[string]string
	}) bool {
		return r.Alert == al.Name
	})
	return strings.Replace(f.Groups[0].Rules[i].Annotations["summary"], `{{ printf "%.4f" $value }}`, fmt.Sprintf("%.4f", value), 1)
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
