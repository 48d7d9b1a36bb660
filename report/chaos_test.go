package report

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/chaos"
)

// chaosSummary is a fixed run: one pass, one scenario failing a delay check.
func chaosSummary() *chaos.Summary {
	s := &chaos.Summary{RunDir: "runs/2026-11-21T10-00-00Z", Seed: 42, DurationMs: 650, Toxiproxy: "embedded",
		Scenarios: []chaos.Result{
			{Name: "overloaded-529-backoff", File: "scenarios/overloaded-529-backoff.yaml", Passed: true, Outcome: "success",
				Attempts: 3, FailureTypes: []string{"overloaded", "overloaded"},
				DelaysMs: chaos.DelaysMs{Client: []int64{2000, 4000}, Server: []int64{201, 402}}, Escalations: []chaos.Escalation{},
				DurationMs: 650, Seed: 42, TimeScale: 0.1, Client: "built-in", Faults: []string{"529", "529"},
				Dir: "runs/2026-11-21T10-00-00Z/overloaded-529-backoff",
				Checks: []chaos.Check{
					{Name: "outcome", Passed: true, Want: "success", Got: "success"},
					{Name: "delays.client", Passed: true, Want: "2s, 4s", Got: "2s, 4s"},
				}},
			{Name: "wrong | delay", File: "scenarios/wrong.yaml", Outcome: "success", Attempts: 2,
				FailureTypes: []string{"rate_limit"}, DelaysMs: chaos.DelaysMs{Client: []int64{1000}, Server: []int64{100}},
				Escalations: []chaos.Escalation{}, DurationMs: 120, Seed: 42, TimeScale: 0.1, Client: "python3 agent.py",
				Faults: []string{"429 retry-after=1"}, Dir: "runs/2026-11-21T10-00-00Z/wrong",
				Checks: []chaos.Check{
					{Name: "delays.client", Want: "2s", Got: "1s", Where: "trace.jsonl: RetryAttempt attempt 1 (rate_limit), wait 1"},
				}},
		}}
	s.Finish()
	return s
}

func TestChaosGolden(t *testing.T) {
	tests := []struct {
		name   string
		render func(*bytes.Buffer, *chaos.Summary) error
	}{
		{"table", func(b *bytes.Buffer, s *chaos.Summary) error { return ChaosTable(b, s) }},
		{"json", func(b *bytes.Buffer, s *chaos.Summary) error { return ChaosJSON(b, s) }},
		{"markdown", func(b *bytes.Buffer, s *chaos.Summary) error { return ChaosMarkdown(b, s) }},
		{"junit", func(b *bytes.Buffer, s *chaos.Summary) error { return ChaosJUnit(b, s) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b, chaosSummary()); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "chaos_"+tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("Chaos %s mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestChaosJUnitParses(t *testing.T) {
	var b bytes.Buffer
	if err := ChaosJUnit(&b, chaosSummary()); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Tests != 3 || got.Failures != 1 || len(got.Suites) != 2 || got.Suites[1].Cases[0].Failure == nil {
		t.Errorf("junit = %+v, want 3 tests, 1 failure in the second suite", got)
	}
}
