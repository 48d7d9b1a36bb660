package metrics_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/metrics"
	"github.com/retrylab/retrylab/trace/analyze"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestRulesGolden(t *testing.T) {
	seven := 7
	custom := []analyze.Alert{
		{Name: "too many failures", Metric: "provider_failure_rate", Op: ">=", Threshold: f(0.05), MinSamples: &seven, Severity: "page"},
		{Name: "retries low", Metric: "provider_retry_rate", Op: "<", Threshold: f(0.5)},
		{Name: "provider_retry_rate", Metric: "provider_retry_rate", Op: ">", Threshold: f(0.2)},
		{Name: `odd {{ $value }} "name" #1: {{`, Metric: "avg_repair_iterations", Op: "<=", Threshold: f(1e-9), Severity: "info: 'x'"},
	}
	for _, tc := range []struct {
		name   string
		alerts []analyze.Alert
		opts   metrics.RuleOptions
	}{
		{"default", analyze.DefaultAlerts(), metrics.RuleOptions{}},
		{"custom_30m", custom, metrics.RuleOptions{Window: 30 * time.Minute, MinSamples: 20, Confidence: 0.99}},
		{"none", []analyze.Alert{}, metrics.RuleOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := metrics.Rules(&got, tc.alerts, tc.opts); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "rules_"+tc.name+".yml")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("Rules() mismatch (-want +got):\n%s", diff)
			}
			var again bytes.Buffer
			metrics.Rules(&again, tc.alerts, tc.opts)
			if !bytes.Equal(again.Bytes(), got.Bytes()) {
				t.Error("Rules() is not deterministic")
			}
		})
	}
}

func TestRulesErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		alerts []analyze.Alert
		opts   metrics.RuleOptions
	}{
		{"metric without counters", []analyze.Alert{{Metric: "escalation_rate", Op: ">", Threshold: f(0.1)}}, metrics.RuleOptions{}},
		{"no threshold", []analyze.Alert{{Metric: "diagnosis_rate", Op: ">"}}, metrics.RuleOptions{}},
		{"bad op", []analyze.Alert{{Metric: "diagnosis_rate", Op: "=", Threshold: f(0.1)}}, metrics.RuleOptions{}},
		{"negative window", analyze.DefaultAlerts(), metrics.RuleOptions{Window: -time.Hour}},
		{"confidence", analyze.DefaultAlerts(), metrics.RuleOptions{Confidence: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := metrics.Rules(&out, tc.alerts, tc.opts); err == nil {
				t.Errorf("Rules() = nil error, want one; wrote\n%s", out.String())
			}
			if out.Len() > 0 {
				t.Errorf("Rules() wrote %d bytes on error, want none", out.Len())
			}
		})
	}
	var um *metrics.UnsupportedMetricError
	err := metrics.Rules(&bytes.Buffer{}, []analyze.Alert{{Metric: "recovered_rate", Op: "<", Threshold: f(0.7)}}, metrics.RuleOptions{})
	if !errors.As(err, &um) || um.Hint() == "" {
		t.Errorf("Rules(recovered_rate) = %v, want an *UnsupportedMetricError with a hint", err)
	}
}

func f(v float64) *float64 { return &v }
