package report

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/trace/analyze"
)

// TestRegistryEveryMetricEverywhere walks analyze.Registry: on a trace with
// every event type of the seeds, each metric has samples, shows in every
// output format, and an alert on it fires (and one that cannot, does not).
func TestRegistryEveryMetricEverywhere(t *testing.T) {
	t.Parallel()
	var alerts []analyze.Alert
	for _, d := range analyze.Registry {
		fire, never := -0.5, -0.5
		alerts = append(alerts,
			analyze.Alert{Name: d.Name + "-fires", Metric: d.Name, Op: ">", Threshold: &fire},
			analyze.Alert{Name: d.Name + "-quiet", Metric: d.Name, Op: "<", Threshold: &never})
	}
	a, err := analyze.Run(context.Background(), []string{"../trace/analyze/testdata/issue9/trace.jsonl"},
		analyze.Options{Alerts: alerts, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range analyze.Registry {
		if _, n := d.Value(a); n < 1 {
			t.Errorf("%s: no samples in testdata/issue9", d.Name)
		}
		if d.Help == "" || d.Samples == "" || d.Kind == "" {
			t.Errorf("%s: registry entry lacks help, samples or kind", d.Name)
		}
		if got := a.Alerts[2*i].State; got != analyze.StateFiring {
			t.Errorf("alert %s > -0.5: %s, want firing", d.Name, got)
		}
		if got := a.Alerts[2*i+1].State; got != analyze.StateOK {
			t.Errorf("alert %s < -0.5: %s, want ok", d.Name, got)
		}
	}
	outputs := map[string]func(*bytes.Buffer) error{
		"table":       func(b *bytes.Buffer) error { return AnalysisTable(b, a) },
		"markdown":    func(b *bytes.Buffer) error { return AnalysisMarkdown(b, a) },
		"html":        func(b *bytes.Buffer) error { return AnalysisHTML(b, a) },
		"openmetrics": func(b *bytes.Buffer) error { return AnalysisOpenMetrics(b, a) },
		"json":        func(b *bytes.Buffer) error { return AnalysisJSON(b, a) },
	}
	for format, render := range outputs {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, d := range analyze.Registry {
			name := d.Name
			if format == "openmetrics" {
				name = d.OpenMetricsName() + " "
			}
			if !strings.Contains(out, name) {
				t.Errorf("%s output lacks metric %s", format, name)
			}
			if format != "openmetrics" && !strings.Contains(out, d.Name+"-fires") {
				t.Errorf("%s output lacks the alert on %s", format, d.Name)
			}
		}
		if format == "json" {
			var doc struct{ Metrics map[string]float64 }
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			for _, d := range analyze.Registry {
				v, _ := d.Value(a)
				if got, ok := doc.Metrics[d.Name]; !ok || got != v {
					t.Errorf("json metrics.%s = %v (present %v), want %v", d.Name, got, ok, v)
				}
			}
		}
		if format == "openmetrics" {
			if _, err := omParse(out); err != nil {
				t.Errorf("openmetrics: %v", err)
			}
		}
	}
}

// TestIssue9FiguresEveryFormat: the sections of seeds 002, 003 and 004
// show in every format for people, and seed 002's names in OpenMetrics.
func TestIssue9FiguresEveryFormat(t *testing.T) {
	t.Parallel()
	a, err := analyze.Run(context.Background(), []string{"../trace/analyze/testdata/issue9/trace.jsonl"},
		analyze.Options{Alerts: analyze.DefaultAlerts(), MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	for format, render := range map[string]func(*bytes.Buffer) error{
		"table":    func(b *bytes.Buffer) error { return AnalysisTable(b, a) },
		"markdown": func(b *bytes.Buffer) error { return AnalysisMarkdown(b, a) },
		"html":     func(b *bytes.Buffer) error { return AnalysisHTML(b, a) },
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Retries per request", "Recovery", "Top error messages", "Top error messages by model",
			"rate limited: request", "L2/L3 runs", "Runs stopped by reason", "budget_exceeded", "Tickets", "t2, t3",
			"Ticket transitions by event", "Error reports by failure type", "Declined escalations by why", "top_of_ladder"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s output lacks %q", format, want)
			}
		}
	}
	var b bytes.Buffer
	if err := AnalysisOpenMetrics(&b, a); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`tickets_retried_total{category="transient"} 1`, `tickets_retried_total{category="api_error"} 1`,
		"tickets_retry_exhausted_total 2", `retry_delay_seconds_bucket{le="0.5"} 1`, `retry_delay_seconds_bucket{le="+Inf"} 3`,
		"retry_delay_seconds_sum 3.5", "retry_delay_seconds_count 3", "retry_success_rate 0.5",
		`retrylab_error_messages_total{message="rate limited: request <id> after <n>s"} 2`,
		`retrylab_requests_by_retries_total{retries="10+"} 1`, "retrylab_error_context_retries_total 1",
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("openmetrics lacks %q", want)
		}
	}
}
