package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"

	"github.com/retrylab/retrylab/report/internal/golden"
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

func corpusAnalysis(t *testing.T) *analyze.Analysis {
	t.Helper()
	files, err := trace.Discover([]string{"../trace/testdata/corpus"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analyze.Run(context.Background(), files, analyze.Options{Alerts: analyze.DefaultAlerts(), MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAnalysisGolden(t *testing.T) {
	t.Parallel()
	a := corpusAnalysis(t)
	tests := []struct {
		name   string
		render func(*bytes.Buffer, *analyze.Analysis) error
	}{
		{"analysis_table", func(b *bytes.Buffer, a *analyze.Analysis) error { return AnalysisTable(b, a) }},
		{"analysis_json", func(b *bytes.Buffer, a *analyze.Analysis) error { return AnalysisJSON(b, a) }},
		{"analysis_markdown", func(b *bytes.Buffer, a *analyze.Analysis) error { return AnalysisMarkdown(b, a) }},
		{"analysis_openmetrics", func(b *bytes.Buffer, a *analyze.Analysis) error { return AnalysisOpenMetrics(b, a) }},
		{"analysis_html", func(b *bytes.Buffer, a *analyze.Analysis) error { return AnalysisHTML(b, a) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.render(&buf, a); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.name+".golden", buf.Bytes())
		})
	}
}

func TestAnalysisOpenMetricsParses(t *testing.T) {
	t.Parallel()
	a := corpusAnalysis(t)
	var buf bytes.Buffer
	if err := AnalysisOpenMetrics(&buf, a); err != nil {
		t.Fatal(err)
	}
	// The Prometheus text parser reads it too (it sees the counters'
	// _total samples as untyped; omParse below checks the types).
	var p expfmt.TextParser
	if _, err := p.TextToMetricFamilies(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("Prometheus text parser: %v\n%s", err, buf.String())
	}
	fams, err := omParse(buf.String())
	if err != nil {
		t.Fatalf("OpenMetrics: %v\n%s", err, buf.String())
	}
	// Every family has the type its name and samples promise.
	wantTypes := map[string]string{
		"retrylab_files": "counter", "retrylab_runs": "gauge", "retrylab_events": "counter",
		"retrylab_malformed_lines": "counter", "retrylab_unknown_events": "counter",
		"retrylab_requests": "counter", "retrylab_requests_failed": "counter",
		"retrylab_requests_with_retries": "counter", "retrylab_retries": "counter",
		"retrylab_retry_rate": "gauge", "retrylab_failure_rate": "gauge",
		"retrylab_recovered_rate": "gauge", "retrylab_amplification": "gauge",
		"retrylab_failed_attempts": "counter", "retrylab_failed_attempts_by_status": "counter",
		"retrylab_retry_delay_seconds": "histogram", "retrylab_request_duration_seconds": "histogram",
		"retrylab_escalations": "counter", "retrylab_escalations_by_reason": "counter",
		"retrylab_group_requests": "counter", "retrylab_group_retry_rate": "gauge",
		"retrylab_group_failure_rate": "gauge",
		"retrylab_alert_state":        "gauge", "retrylab_alert_value": "gauge", "retrylab_alert_threshold": "gauge",
	}
	for _, d := range analyze.Registry {
		wantTypes[d.OpenMetricsName()] = "gauge"
		wantTypes[d.OpenMetricsName()+"_samples"] = "gauge"
	}
	// Issue 9: seed 002's names, and the retrylab_* counts of seeds 003, 004.
	for name, typ := range map[string]string{
		"tickets_retried": "counter", "tickets_retry_exhausted": "counter", "retry_delay_seconds": "histogram",
		"retrylab_retry_decisions": "counter", "retrylab_ticket_transitions": "counter",
		"retrylab_ticket_transitions_by_state": "counter", "retrylab_requests_by_retries": "counter",
		"retrylab_judge_invocations": "counter", "retrylab_candidates": "counter", "retrylab_verifications": "counter",
		"retrylab_runs_stopped": "counter", "retrylab_escalated_runs": "gauge",
		"retrylab_runs_by_repair_iterations": "counter", "retrylab_runs_above_repair_threshold": "gauge",
		"retrylab_error_reports": "counter", "retrylab_error_reports_by_category": "counter",
		"retrylab_escalations_declined": "counter", "retrylab_escalations_declined_by_why": "counter",
		"retrylab_error_context_retries": "counter", "retrylab_error_messages": "counter",
		"retrylab_error_messages_by_model": "counter",
		// Issue 23: the alerts' counts under metrics.Collector's names.
		"retrylab_steps_finished": "counter", "retrylab_diagnoses_started": "counter",
		"retrylab_l2_runs": "counter", "retrylab_l2_runs_escalated": "counter",
		"retrylab_repair_iterations": "summary",
	} {
		wantTypes[name] = typ
	}
	gotTypes := map[string]string{}
	for name, f := range fams {
		gotTypes[name] = f.typ
	}
	if diff := cmp.Diff(wantTypes, gotTypes); diff != "" {
		t.Errorf("family types mismatch (-want +got):\n%s", diff)
	}

	value := func(family, typ, sample string, labels map[string]string) float64 {
		t.Helper()
		f, ok := fams[family]
		if !ok {
			t.Fatalf("no family %s", family)
		}
		if f.typ != typ {
			t.Fatalf("family %s has type %s, want %s", family, f.typ, typ)
		}
	samples:
		for _, s := range f.samples {
			if s.name != sample {
				continue
			}
			for k, v := range labels {
				if s.labels[k] != v {
					continue samples
				}
			}
			return s.value
		}
		t.Fatalf("no sample %s%v in family %s", sample, labels, family)
		return 0
	}
	checks := []struct {
		family, typ, sample string
		labels              map[string]string
		want                float64
	}{
		{"retrylab_requests", "counter", "retrylab_requests_total", nil, 4},
		{"retrylab_retries", "counter", "retrylab_retries_total", nil, 6},
		{"retrylab_runs", "gauge", "retrylab_runs", nil, 3},
		{"retrylab_retry_rate", "gauge", "retrylab_retry_rate", nil, 0.75},
		{"retrylab_amplification", "gauge", "retrylab_amplification", nil, 2.5},
		{"retrylab_failed_attempts", "counter", "retrylab_failed_attempts_total", map[string]string{"failure_type": "server_error"}, 4},
		{"retrylab_failed_attempts_by_status", "counter", "retrylab_failed_attempts_by_status_total", map[string]string{"status": "503"}, 4},
		{"retrylab_escalations", "counter", "retrylab_escalations_total", map[string]string{"from": "L2", "to": "L3"}, 1},
		{"retrylab_avg_repair_iterations", "gauge", "retrylab_avg_repair_iterations", nil, 3},
		{"retrylab_alert_state", "gauge", "retrylab_alert_state", map[string]string{"alert": "provider_retry_rate", "state": "firing"}, 1},
		{"retrylab_alert_state", "gauge", "retrylab_alert_state", map[string]string{"alert": "provider_retry_rate", "state": "ok"}, 0},
		{"retrylab_alert_state", "gauge", "retrylab_alert_state", map[string]string{"alert": "diagnosis_rate", "state": "warning"}, 1},
		{"retrylab_retry_delay_seconds", "histogram", "retrylab_retry_delay_seconds_count", nil, 6},
		{"retrylab_retry_delay_seconds", "histogram", "retrylab_retry_delay_seconds_sum", nil, 8},
		// Delays 500 1000 1000 1500 2000 2000 ms: le=0.5 → 1, le=1 → 3, le=2 → 6.
		{"retrylab_retry_delay_seconds", "histogram", "retrylab_retry_delay_seconds_bucket", map[string]string{"le": "0.25"}, 0},
		{"retrylab_retry_delay_seconds", "histogram", "retrylab_retry_delay_seconds_bucket", map[string]string{"le": "0.5"}, 1},
		{"retrylab_retry_delay_seconds", "histogram", "retrylab_retry_delay_seconds_bucket", map[string]string{"le": "1.0"}, 3},
		{"retrylab_retry_delay_seconds", "histogram", "retrylab_retry_delay_seconds_bucket", map[string]string{"le": "2.0"}, 6},
		{"retrylab_retry_delay_seconds", "histogram", "retrylab_retry_delay_seconds_bucket", map[string]string{"le": "64.0"}, 6},
		{"retrylab_retry_delay_seconds", "histogram", "retrylab_retry_delay_seconds_bucket", map[string]string{"le": "+Inf"}, 6},
	}
	for _, c := range checks {
		if got := value(c.family, c.typ, c.sample, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.sample, c.labels, got, c.want)
		}
	}
}

// TestOMParseRejects makes sure the checker behind the OpenMetrics tests
// catches what it is there to catch.
func TestOMParseRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"counter sample without _total", "# TYPE a counter\na 1\n# EOF\n"},
		{"gauge sample with _total", "# TYPE a gauge\na_total 1\n# EOF\n"},
		{"sample of an undeclared family", "# TYPE a counter\nb_total 1\n# EOF\n"},
		{"untyped sample", "a 1\n# EOF\n"},
		{"family declared twice", "# TYPE a gauge\na 1\n# TYPE a gauge\n# EOF\n"},
		{"repeated series", "# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n# EOF\n"},
		{"no EOF", "# TYPE a gauge\na 1\n"},
		{"unit not a suffix", "# TYPE a histogram\n# UNIT a seconds\na_bucket{le=\"+Inf\"} 0\na_count 0\na_sum 0\n# EOF\n"},
		{"le not canonical", "# TYPE a histogram\na_bucket{le=\"1\"} 0\na_bucket{le=\"+Inf\"} 0\na_count 0\na_sum 0\n# EOF\n"},
		{"no +Inf bucket", "# TYPE a histogram\na_bucket{le=\"1.0\"} 0\na_count 0\na_sum 0\n# EOF\n"},
		{"count differs from +Inf", "# TYPE a histogram\na_bucket{le=\"+Inf\"} 2\na_count 1\na_sum 0\n# EOF\n"},
		{"buckets not increasing", "# TYPE a histogram\na_bucket{le=\"2.0\"} 0\na_bucket{le=\"1.0\"} 0\na_bucket{le=\"+Inf\"} 0\na_count 0\na_sum 0\n# EOF\n"},
		{"negative counter", "# TYPE a counter\na_total -1\n# EOF\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := omParse(tt.in); err == nil {
				t.Errorf("omParse(%q) = nil error, want one", tt.in)
			}
		})
	}
	if _, err := omParse("# TYPE a_seconds histogram\n# UNIT a_seconds seconds\n# HELP a_seconds x\na_seconds_bucket{le=\"0.5\"} 1\na_seconds_bucket{le=\"1.0\"} 1\na_seconds_bucket{le=\"+Inf\"} 2\na_seconds_count 2\na_seconds_sum 3.5\n# TYPE b counter\nb_total{k=\"v \\\"q\\\"\"} 1\n# EOF\n"); err != nil {
		t.Errorf("valid exposition rejected: %v", err)
	}
}

// TestAnalysisOpenMetricsUniqueSeries is a regression test: an --alert on a
// metric that a default alert also watches gave both the same name, so the
// alert series repeated and Prometheus rejected the whole exposition.
func TestAnalysisOpenMetricsUniqueSeries(t *testing.T) {
	t.Parallel()
	files, err := trace.Discover([]string{"../trace/testdata/corpus"})
	if err != nil {
		t.Fatal(err)
	}
	extra, err := analyze.ParseAlert("provider_retry_rate>0.5")
	if err != nil {
		t.Fatal(err)
	}
	alerts := append(analyze.DefaultAlerts(), extra, extra)
	a, err := analyze.Run(context.Background(), files, analyze.Options{Alerts: alerts, MinSamples: 1, By: []string{"provider", "model", "failureType", "run", "day"}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := AnalysisOpenMetrics(&buf, a); err != nil {
		t.Fatal(err)
	}
	if _, err := omParse(buf.String()); err != nil {
		t.Errorf("OpenMetrics: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(buf.String(), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series := line[:strings.LastIndexByte(line, ' ')]
		if seen[series] {
			t.Errorf("series %s appears twice", series)
		}
		seen[series] = true
	}
	for _, want := range []string{
		`retrylab_alert_state{alert="provider_retry_rate",metric="provider_retry_rate",state="firing"}`,
		`retrylab_alert_state{alert="provider_retry_rate#2",metric="provider_retry_rate",state="firing"}`,
		`retrylab_alert_threshold{alert="provider_retry_rate#3",op=">"}`,
	} {
		if !seen[want] {
			t.Errorf("no series %s", want)
		}
	}
}

func TestAnDur(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ms   int64
		want string
	}{
		{0, "0ms"},
		{350, "350ms"},
		{999, "999ms"},
		{1000, "1.0s"},
		{2000, "2.0s"},
		{81579, "81.6s"},
		{99_949, "99.9s"},
		{150_000, "2.5min"},
		{7_200_000, "2.0h"},
	}
	for _, tt := range tests {
		if got := anDur(tt.ms); got != tt.want {
			t.Errorf("anDur(%d) = %q, want %q", tt.ms, got, tt.want)
		}
	}
}

// TestAnalysisHumanOutput is a regression test for the people-facing
// renderers: raw "81579ms" durations, empty model cells, an interval column
// labelled "interval (95%)" that showed two one-sided 95% bounds (a 90%
// interval), and escalation reasons listed in the from/to columns.
func TestAnalysisHumanOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lines := `{"v":1,"type":"ProviderRequestFinished","runId":"r1","payload":{"provider":"anthropic","durationMs":81579,"success":true,"retries":1}}
{"v":1,"type":"RetryAttempt","runId":"r1","payload":{"provider":"anthropic","failureType":"overloaded","status":529,"willRetry":true,"delayMs":2000}}
{"v":1,"type":"RunEscalated","runId":"r1","payload":{"from":"haiku","to":"sonnet","reason":"auto_after_retries"}}
`
	if err := os.WriteFile(filepath.Join(dir, "trace.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	a := analyzeDir(t, dir, 0.975)
	var md, tbl bytes.Buffer
	if err := AnalysisMarkdown(&md, a); err != nil {
		t.Fatal(err)
	}
	if err := AnalysisTable(&tbl, a); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| request duration | 1 | 81.6s | 81.6s | 81.6s | 81.6s | 81.6s |",
		"| wait before a retry | 1 | 2.0s | 2.0s | 2.0s | 2.0s | 2.0s |",
		"| anthropic | (none) | 1 |",
		"| rate | value | n | 95% interval |",
		"each bound is one-sided 97.5%",
		"### Escalations by path\n\n1 escalation in 1 of 1 run (100.0% of runs).\n\n| from | to | count |\n| --- | --- | --- |\n| haiku | sonnet | 1 |\n",
		"### Escalations by reason\n\n| reason | count |\n| --- | --- |\n| auto_after_retries | 1 |\n",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	for _, bad := range []string{"ms /", "81579", "interval (95%)", "| reason | auto_after_retries"} {
		if strings.Contains(md.String(), bad) || strings.Contains(tbl.String(), bad) {
			t.Errorf("output contains %q", bad)
		}
	}
	if !strings.Contains(tbl.String(), "│ anthropic │ (none) │") {
		t.Errorf("table lacks the (none) model cell:\n%s", tbl.String())
	}
}

func analyzeDir(t *testing.T, dir string, confidence float64) *analyze.Analysis {
	t.Helper()
	files, err := trace.Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analyze.Run(context.Background(), files, analyze.Options{Alerts: analyze.DefaultAlerts(), MinSamples: 1, Confidence: confidence})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAnalysisHTMLEscapes feeds hostile strings through every kind of cell
// (group keys, escalation paths and reasons, failure types, unknown event
// types) and checks they come out as text, and that the page stays
// self-contained.
func TestAnalysisHTMLEscapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Three requests, all retried: enough for the retry-rate alert's exact
	// bound to fire (one would not), so the firing row is checked too.
	req := `{"v":1,"type":"ProviderRequestFinished","runId":"r1","payload":{"provider":"<b>p</b>","model":"<script>alert(1)</script>","durationMs":5,"success":false,"retries":1}}
`
	lines := req + req + req + `{"v":1,"type":"RetryAttempt","runId":"r1","payload":{"failureType":"<img src=x onerror=alert(2)>","willRetry":true,"delayMs":1}}
{"v":1,"type":"RunEscalated","runId":"r1","payload":{"from":"\"><script>x</script>","to":"a&b","reason":"</td><script>"}}
{"v":1,"type":"<style>evil</style>","runId":"r1","payload":{}}
`
	if err := os.WriteFile(filepath.Join(dir, "trace.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	a := analyzeDir(t, dir, 0)
	var buf bytes.Buffer
	if err := AnalysisHTML(&buf, a); err != nil {
		t.Fatal(err)
	}
	page := strings.Replace(buf.String(), errorHook, "", 1) // the page's own script
	for _, bad := range []string{"<script", "<img", "<b>", "</td><script>", "<style>evil", "http://", "https://", "<link", "<script src"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q:\n%s", bad, page)
		}
	}
	for _, want := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt;",
		"&lt;b&gt;p&lt;/b&gt;",
		"&lt;img src=x onerror=alert(2)&gt;",
		"a&amp;b",
		"&lt;/td&gt;&lt;script&gt;",
		"&lt;style&gt;evil&lt;/style&gt;=1",
		`<tr class="state-firing">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if n := strings.Count(page, "<style>"); n != 1 {
		t.Errorf("page has %d <style> elements, want 1 (the inline CSS)", n)
	}
}
