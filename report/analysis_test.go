package report

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"

	"github.com/retrylab/retrylab/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func corpusAnalysis(t *testing.T) *trace.Analysis {
	t.Helper()
	files, err := trace.Discover([]string{"../trace/testdata/corpus"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := trace.Analyze(context.Background(), files, trace.Options{Alerts: trace.DefaultAlerts(), MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAnalysisGolden(t *testing.T) {
	a := corpusAnalysis(t)
	tests := []struct {
		name   string
		render func(*bytes.Buffer, *trace.Analysis) error
	}{
		{"analysis_table", func(b *bytes.Buffer, a *trace.Analysis) error { return AnalysisTable(b, a) }},
		{"analysis_json", func(b *bytes.Buffer, a *trace.Analysis) error { return AnalysisJSON(b, a) }},
		{"analysis_markdown", func(b *bytes.Buffer, a *trace.Analysis) error { return AnalysisMarkdown(b, a) }},
		{"analysis_openmetrics", func(b *bytes.Buffer, a *trace.Analysis) error { return AnalysisOpenMetrics(b, a) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.render(&buf, a); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				os.MkdirAll("testdata", 0o755)
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestAnalysisOpenMetricsParses(t *testing.T) {
	a := corpusAnalysis(t)
	var buf bytes.Buffer
	if err := AnalysisOpenMetrics(&buf, a); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), "# EOF\n") {
		t.Error("output must end with # EOF")
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("Prometheus text parser: %v\n%s", err, buf.String())
	}
	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		mf, ok := fams[name]
		if !ok {
			t.Fatalf("no family %s", name)
		}
	metrics:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue metrics
				}
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			default:
				return m.GetUntyped().GetValue()
			}
		}
		t.Fatalf("no sample %s%v", name, labels)
		return 0
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"retrylab_requests_total", nil, 4},
		{"retrylab_retries_total", nil, 6},
		{"retrylab_retry_rate", nil, 0.75},
		{"retrylab_amplification", nil, 2.5},
		{"retrylab_failed_attempts_total", map[string]string{"failure_type": "server_error"}, 4},
		{"retrylab_failed_attempts_by_status_total", map[string]string{"status": "503"}, 4},
		{"retrylab_escalations_total", map[string]string{"from": "L2", "to": "L3"}, 1},
		{"retrylab_avg_repair_iterations", nil, 3},
		{"retrylab_alert_state", map[string]string{"alert": "provider_retry_rate", "state": "firing"}, 1},
		{"retrylab_alert_state", map[string]string{"alert": "provider_retry_rate", "state": "ok"}, 0},
		{"retrylab_alert_state", map[string]string{"alert": "diagnosis_rate", "state": "warning"}, 1},
	}
	for _, c := range checks {
		if got := value(c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	h := fams["retrylab_retry_delay_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 6 || h.GetSampleSum() != 8 {
		t.Errorf("delay histogram count/sum = %d/%v, want 6/8", h.GetSampleCount(), h.GetSampleSum())
	}
	b := h.GetBucket()
	// Delays 500 1000 1000 1500 2000 2000 ms: le=0.5 → 1, le=1 → 3, le=2 → 6.
	got := map[float64]uint64{}
	for _, x := range b {
		got[x.GetUpperBound()] = x.GetCumulativeCount()
	}
	for le, want := range map[float64]uint64{0.25: 0, 0.5: 1, 1: 3, 2: 6, 64: 6} {
		if got[le] != want {
			t.Errorf("bucket le=%v: %d, want %d", le, got[le], want)
		}
	}
	if !strings.Contains(buf.String(), `retrylab_retry_delay_seconds_bucket{le="+Inf"} 6`) {
		t.Error(`missing le="+Inf" bucket`)
	}
}

// TestAnalysisOpenMetricsUniqueSeries is a regression test: an --alert on a
// metric that a default alert also watches gave both the same name, so the
// alert series repeated and Prometheus rejected the whole exposition.
func TestAnalysisOpenMetricsUniqueSeries(t *testing.T) {
	files, err := trace.Discover([]string{"../trace/testdata/corpus"})
	if err != nil {
		t.Fatal(err)
	}
	extra, err := trace.ParseAlert("provider_retry_rate>0.5")
	if err != nil {
		t.Fatal(err)
	}
	alerts := append(trace.DefaultAlerts(), extra, extra)
	a, err := trace.Analyze(context.Background(), files, trace.Options{Alerts: alerts, MinSamples: 1, By: []string{"provider", "model", "failureType", "run", "day"}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := AnalysisOpenMetrics(&buf, a); err != nil {
		t.Fatal(err)
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
