package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/retrylab/retrylab/report/internal/golden"
	"github.com/retrylab/retrylab/trace/analyze"
)

// compareFixture is a doubled retry rate on 2,000 requests, delays shifted
// up a bucket, and a few escalation runs (too few to test).
func compareFixture() *analyze.Comparison {
	side := func(retried, failed int64, delayBucket int, runs int) *analyze.Analysis {
		a := &analyze.Analysis{Schema: analyze.Schema}
		a.Inputs = analyze.Inputs{Files: runs, Runs: runs}
		a.Requests.Total = 2000
		a.Requests.WithRetries = retried
		a.Metrics.ProviderRetryRate = float64(retried) / 2000
		a.Metrics.ProviderFailureRate = float64(failed) / 2000
		a.Metrics.EscalationRate = 0.1
		a.Requests.DurationMs = analyze.Quantiles{P50: 120, P90: 900, P99: 4000, Max: 9000}
		a.Attempts.DelayMs = analyze.Delays{Count: retried, Total: retried * int64(300*delayBucket), P50: int64(300 * delayBucket), P90: int64(600 * delayBucket), P99: int64(900 * delayBucket), Max: int64(1000 * delayBucket)}
		a.DelayHist.Counts[delayBucket] = retried
		a.DurationHist.Counts[0] = 1500
		a.DurationHist.Counts[3] = 500
		a.DurationHist.SumMs = 1500*100 + 500*900
		return a
	}
	return analyze.Compare(side(100, 20, 2, 10), side(200, 24, 3, 10), analyze.CompareOptions{
		MaxIncrease: map[string]float64{"provider_failure_rate": 0.01, "duration_ms_p99": 500},
	})
}

func TestCompareGolden(t *testing.T) {
	t.Parallel()
	c := compareFixture()
	if c.Regressions != 2 { // provider_retry_rate, delay_ms
		t.Fatalf("%d regressions, want 2: %+v", c.Regressions, c.Rows)
	}
	tests := []struct {
		name   string
		render func(*bytes.Buffer, *analyze.Comparison) error
	}{
		{"compare_table", func(b *bytes.Buffer, c *analyze.Comparison) error { return CompareTable(b, c) }},
		{"compare_json", func(b *bytes.Buffer, c *analyze.Comparison) error { return CompareJSON(b, c) }},
		{"compare_markdown", func(b *bytes.Buffer, c *analyze.Comparison) error { return CompareMarkdown(b, c) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.render(&buf, c); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.name+".golden", buf.Bytes())
		})
	}
}

// TestCompareJSONSchema: the JSON holds the documented fields.
func TestCompareJSONSchema(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := CompareJSON(&buf, compareFixture()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema      string           `json:"schema"`
		Regressions int              `json:"regressions"`
		Rows        []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "retrylab.compare/v1" || doc.Regressions != 2 || len(doc.Rows) != len(analyze.CompareRowNames()) {
		t.Fatalf("schema %q, %d regressions, %d rows", doc.Schema, doc.Regressions, len(doc.Rows))
	}
	for _, r := range doc.Rows {
		for _, k := range []string{"metric", "kind", "direction", "base", "current", "delta", "baseSamples", "currentSamples", "test", "verdict", "reason"} {
			if _, ok := r[k]; !ok {
				t.Fatalf("row %v lacks %q", r["metric"], k)
			}
		}
	}
}
