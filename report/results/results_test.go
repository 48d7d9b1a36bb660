package results

import (
	"bytes"
	"encoding/xml"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/report/internal/golden"
)

// chaosSummary is a fixed run: one pass, one scenario failing a delay check,
// one that passed on a re-run, one inconclusive, one skipped, and a client
// without a trace whose failure types are unverified.
func chaosSummary() *chaos.Summary {
	s := &chaos.Summary{RunDir: "runs/2026-11-21T10-00-00Z", Seed: 42, DurationMs: 650, Toxiproxy: "embedded",
		Scenarios: []chaos.Result{
			{Name: "overloaded-529-backoff", File: "scenarios/overloaded-529-backoff.yaml", Passed: true, Verdict: chaos.VerdictPass, Outcome: "success",
				Attempts: 3, FailureTypes: []string{"overloaded", "overloaded"},
				DelaysMs: chaos.DelaysMs{Client: []int64{2000, 4000}, Server: []int64{201, 402}}, Escalations: []scenario.Escalation{},
				DurationMs: 650, Seed: 42, TimeScale: 0.1, Client: "built-in", Faults: []string{"529", "529"},
				Dir: "runs/2026-11-21T10-00-00Z/overloaded-529-backoff",
				// An outage: two phases (a mix, then one fault whose name
				// has markup), and a draw past the last phase.
				Outage: &chaos.OutageResult{Seed: 7,
					Phases: []chaos.OutagePhase{
						{ForMs: 1500, Mix: []chaos.OutageMix{{Weight: 6, Fault: "529"}, {Weight: 1, Fault: "drop after 400 bytes"}, {Weight: 3, Fault: "ok"}}},
						{ForMs: 90000, Mix: []chaos.OutageMix{{Weight: 1, Fault: `ok "<b>hi</b>"`}}},
					},
					Draws: []chaos.OutageDraw{
						{Attempt: 1, AtMs: 0, Phase: 1, Entry: 1, Fault: "529"},
						{Attempt: 2, AtMs: 1210, Phase: 1, Entry: 1, Fault: "529"},
						{Attempt: 3, AtMs: 95000, Phase: 0, Entry: 0, Fault: "ok"},
					}},
				Checks: []verify.Check{
					{Name: "outcome", Passed: true, State: verify.StatePass, Want: "success", Got: "success"},
					{Name: "delays.client", Passed: true, State: verify.StatePass, Want: "2s, 4s", Got: "2s, 4s"},
				}},
			{Name: "rerun", File: "scenarios/rerun.yaml", Passed: true, Verdict: chaos.VerdictPass, PassedOnRerun: true, Outcome: "success",
				Attempts: 2, FailureTypes: []string{"overloaded"}, DelaysMs: chaos.DelaysMs{Client: []int64{2000}, Server: []int64{290}},
				Escalations: []scenario.Escalation{}, DurationMs: 400, Seed: 42, TimeScale: 0.1, Client: "built-in", Faults: []string{"529"},
				Dir: "runs/2026-11-21T10-00-00Z/rerun",
				Checks: []verify.Check{
					{Name: "delays.server", State: verify.StateFail, Want: "200ms", Got: "290ms", Where: "server.jsonl: gap between attempts 1 and 2"},
				},
				Reruns: []chaos.Rerun{{Run: 2, Verdict: chaos.VerdictPass, Checks: []verify.Check{}, DelaysMs: chaos.DelaysMs{Client: []int64{2000}, Server: []int64{201}},
					Dir: "runs/2026-11-21T10-00-00Z/rerun/rerun-2"}}},
			{Name: "busy", File: "scenarios/busy.yaml", Verdict: chaos.VerdictInconclusive, Outcome: "success",
				Attempts: 2, FailureTypes: []string{"overloaded", "overloaded"}, DelaysMs: chaos.DelaysMs{Server: []int64{95}},
				Escalations: []scenario.Escalation{}, DurationMs: 300, Seed: 42, TimeScale: 0.05, Client: "sh agent.sh", Faults: []string{"529"},
				Dir: "runs/2026-11-21T10-00-00Z/busy",
				Checks: []verify.Check{
					{Name: "failureTypes", State: verify.StateUnverified, Want: "overloaded", Got: "overloaded (the faults the client met)", Where: "server.jsonl", Hint: "write RetryAttempt events"},
					{Name: "delays.server", State: verify.StateInconclusive, Want: "100ms", Got: "95ms", Where: "server.jsonl: gap between attempts 1 and 2", Hint: "lower --parallel"},
				},
				Reruns: []chaos.Rerun{
					{Run: 2, Verdict: chaos.VerdictInconclusive, Checks: []verify.Check{{Name: "delays.server", State: verify.StateInconclusive}}, Dir: "runs/2026-11-21T10-00-00Z/busy/rerun-2"},
					{Run: 3, Verdict: chaos.VerdictInconclusive, Checks: []verify.Check{{Name: "delays.server", State: verify.StateInconclusive}}, Dir: "runs/2026-11-21T10-00-00Z/busy/rerun-3"},
				}},
			{Name: "node-sdk", File: "scenarios/sdk/node.yaml", Verdict: chaos.VerdictSkipped, SkipReason: "needs node, which is not in PATH",
				FailureTypes: []string{}, Escalations: []scenario.Escalation{}, Checks: []verify.Check{}, Client: "node sdk.mjs",
				Dir: "runs/2026-11-21T10-00-00Z/node-sdk"},
			{Name: "wrong | delay", File: "scenarios/wrong.yaml", Verdict: chaos.VerdictFail, Outcome: "success", Attempts: 2,
				FailureTypes: []string{"rate_limit"}, DelaysMs: chaos.DelaysMs{Client: []int64{1000}, Server: []int64{100}},
				Escalations: []scenario.Escalation{}, DurationMs: 120, Seed: 42, TimeScale: 0.1, Client: "python3 agent.py",
				Faults: []string{"429 retry-after=1"}, Dir: "runs/2026-11-21T10-00-00Z/wrong",
				Checks: []verify.Check{
					{Name: "delays.client", State: verify.StateFail, Want: "2s", Got: "1s", Where: "trace.jsonl: RetryAttempt attempt 1 (rate_limit), wait 1"},
				},
				Findings: []verify.Finding{
					{Code: "retry_after_ignored", Attempts: []int{1, 2}, Evidence: "attempt 2 arrived 0.4s after a 429 with a Retry-After of 3s"},
					{Code: "stitched_answer", Attempts: []int{1}, Evidence: `the output holds "a <b>cut</b> | answer" joined to the next`},
				}},
		}}
	s.Finish()
	return s
}

func TestChaosGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		render func(*bytes.Buffer, *chaos.Summary) error
	}{
		{"table", func(b *bytes.Buffer, s *chaos.Summary) error { return Table(b, s) }},
		{"json", func(b *bytes.Buffer, s *chaos.Summary) error { return JSON(b, s) }},
		{"markdown", func(b *bytes.Buffer, s *chaos.Summary) error { return Markdown(b, s) }},
		{"junit", func(b *bytes.Buffer, s *chaos.Summary) error { return JUnit(b, s) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b, chaosSummary()); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "chaos_"+tt.name+".golden", b.Bytes())
		})
	}
}

func TestChaosJUnitParses(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := JUnit(&b, chaosSummary()); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// Suites in name order: busy (an unverified check skipped, an
	// inconclusive one failed), node-sdk (skipped), overloaded-529-backoff,
	// rerun (its first run's failure kept as output, not a failure), wrong.
	if got.Tests != 7 || got.Failures != 2 || got.Skipped != 2 || len(got.Suites) != 5 {
		t.Fatalf("junit = %+v, want 7 tests, 2 failures, 2 skipped in 5 suites", got)
	}
	busy, skip, rerun, wrong := got.Suites[0], got.Suites[1], got.Suites[3], got.Suites[4]
	if busy.Cases[0].Skipped == nil || busy.Cases[1].Failure == nil || busy.Cases[1].Failure.Type != "inconclusive" {
		t.Errorf("busy: cases %+v, want failureTypes skipped and delays.server failed as inconclusive", busy.Cases)
	}
	if skip.Cases[0].Skipped == nil || skip.Skipped != 1 {
		t.Errorf("node-sdk: %+v, want a skipped case", skip)
	}
	if rerun.Failures != 0 || rerun.Cases[0].Failure != nil || rerun.Cases[0].SystemOut == "" {
		t.Errorf("rerun: %+v, want no failure and the first run's check as output", rerun)
	}
	if wrong.Cases[0].Failure == nil {
		t.Errorf("wrong: %+v, want a failure", wrong)
	}
}

// TestChaosInterruptedNotFailure: an interrupted run showed its unfinished
// scenarios as ordinary failures (failureType "canceled"). They are
// INTERRUPTED in the table and Markdown and skipped with a message in JUnit,
// never failures; one never started is listed too.
func TestChaosInterruptedNotFailure(t *testing.T) {
	t.Parallel()
	s := &chaos.Summary{RunDir: "runs/x", Seed: 1, Scenarios: []chaos.Result{
		{Name: "cut", Verdict: chaos.VerdictInterrupted, Interrupted: "unfinished: interrupted by SIGINT", Attempts: 2,
			FailureTypes: []string{}, Escalations: []scenario.Escalation{}, Checks: []verify.Check{}, DurationMs: 300},
		{Name: "never", Verdict: chaos.VerdictInterrupted, Interrupted: "not started: interrupted by SIGINT",
			FailureTypes: []string{}, Escalations: []scenario.Escalation{}, Checks: []verify.Check{}},
		{Name: "ok", Verdict: chaos.VerdictPass, Passed: true, FailureTypes: []string{}, Escalations: []scenario.Escalation{},
			Checks: []verify.Check{{Name: "outcome", Passed: true, State: verify.StatePass}}},
	}}
	s.Finish()
	if s.Interrupted != 2 || s.Failed != 0 || s.Passed != 1 {
		t.Fatalf("summary counts: %d interrupted, %d failed, %d passed; want 2, 0, 1", s.Interrupted, s.Failed, s.Passed)
	}
	tests := []struct {
		name   string
		render func(*bytes.Buffer, *chaos.Summary) error
		want   []string
	}{
		{"table", func(b *bytes.Buffer, s *chaos.Summary) error { return Table(b, s) },
			[]string{"INTERRUPTED", "cut: interrupted: unfinished: interrupted by SIGINT", "never: interrupted: not started", "1 passed, 0 failed, 2 interrupted"}},
		{"markdown", func(b *bytes.Buffer, s *chaos.Summary) error { return Markdown(b, s) },
			[]string{"| cut | ⏹️ INTERRUPTED |", "- interrupted: not started: interrupted by SIGINT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b, s); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !bytes.Contains(b.Bytes(), []byte(w)) {
					t.Errorf("%s output lacks %q:\n%s", tt.name, w, b.String())
				}
			}
			if bytes.Contains(b.Bytes(), []byte("FAIL")) || bytes.Contains(b.Bytes(), []byte("❌")) {
				t.Errorf("%s output shows a failure:\n%s", tt.name, b.String())
			}
		})
	}
	var b bytes.Buffer
	if err := JUnit(&b, s); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Failures != 0 || got.Errors != 0 || got.Skipped != 2 || got.Tests != 3 {
		t.Fatalf("junit = %d tests, %d failures, %d errors, %d skipped; want 3, 0, 0, 2", got.Tests, got.Failures, got.Errors, got.Skipped)
	}
	if c := got.Suites[0].Cases[0]; c.Skipped == nil || c.Skipped.Message != "interrupted: unfinished: interrupted by SIGINT" {
		t.Errorf("cut: %+v, want skipped with the interrupt's message", c)
	}
}

// TestChaosWarningShown: a check that passed with a warning (issue 18: the
// scenario's own tolerance would let a wrong wait pass too) keeps its
// scenario a pass, and the table and Markdown show it: the verdict, the
// count, and the check with its warning.
func TestChaosWarningShown(t *testing.T) {
	t.Parallel()
	hint := "warning: the tolerance is the scenario's choice, and it is wide: expect.tolerance (250ms + 2%) accepts gaps from 110ms to 820ms"
	s := &chaos.Summary{RunDir: "runs/x", Seed: 1, Scenarios: []chaos.Result{
		{Name: "node-sdk", File: "scenarios/sdk/node.yaml", Verdict: chaos.VerdictPass, Passed: true, FailureTypes: []string{}, Escalations: []scenario.Escalation{},
			Checks: []verify.Check{
				{Name: "outcome", Passed: true, State: verify.StatePass, Want: "success", Got: "success"},
				{Name: "delays.server", Passed: true, State: verify.StatePass, Want: "[375ms, 500ms]", Got: "450ms", Hint: hint},
			}},
		{Name: "quiet", Verdict: chaos.VerdictPass, Passed: true, FailureTypes: []string{}, Escalations: []scenario.Escalation{},
			Checks: []verify.Check{{Name: "outcome", Passed: true, State: verify.StatePass}}},
	}}
	s.Finish()
	if s.Passed != 2 || s.Failed != 0 {
		t.Fatalf("summary counts: %d passed, %d failed; want 2, 0", s.Passed, s.Failed)
	}
	tests := []struct {
		name   string
		render func(*bytes.Buffer, *chaos.Summary) error
		want   []string
	}{
		{"table", func(b *bytes.Buffer, s *chaos.Summary) error { return Table(b, s) },
			[]string{"PASS (warning)", "node-sdk: check delays.server passed with a warning", "  want:  [375ms, 500ms]", "  " + hint, "2 passed (1 with a warning), 0 failed"}},
		{"markdown", func(b *bytes.Buffer, s *chaos.Summary) error { return Markdown(b, s) },
			[]string{"| node-sdk | ✅ pass ⚠️ warning |", "| quiet | ✅ pass |", "### Passed with a warning", "`delays.server`: want [375ms, 500ms], got 450ms", "⚠️ " + hint, "2 passed (1 with a warning)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b, s); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !bytes.Contains(b.Bytes(), []byte(w)) {
					t.Errorf("%s output lacks %q:\n%s", tt.name, w, b.String())
				}
			}
			for _, bad := range []string{"FAIL", "❌", "did not pass", "quiet: check"} {
				if bytes.Contains(b.Bytes(), []byte(bad)) {
					t.Errorf("%s output shows %q:\n%s", tt.name, bad, b.String())
				}
			}
		})
	}
}

// TestScaleNote: the note under a table of waits names each time-scaled
// scenario with waits once, under its scale, in lines of the width.
func TestScaleNote(t *testing.T) {
	t.Parallel()
	res := func(name string, scale float64, server ...int64) chaos.Result {
		return chaos.Result{Name: name, TimeScale: scale, DelaysMs: chaos.DelaysMs{Server: server}}
	}
	tests := []struct {
		name  string
		rs    []chaos.Result
		width int
		want  []string
	}{
		{"all at time scale 1: no note", []chaos.Result{res("a", 1, 100), res("b", 0, 100)}, 80, nil},
		{"a scaled scenario without waits is not named", []chaos.Result{res("a", 0.1)}, 80, nil},
		{"grouped by scale, smallest first", []chaos.Result{res("a", 0.25, 252), res("b", 0.1, 100), res("c", 0.25, 500)}, 80, []string{
			"", "Waits in policy time: a server wait is the gap measured ÷ the time scale.",
			"  time scale 0.1: b",
			"  time scale 0.25: a, c",
		}},
		{"wrapped at the width", []chaos.Result{res("scenario-one", 0.5, 1), res("scenario-two", 0.5, 1), res("scenario-three", 0.5, 1)}, 40, []string{
			"", "Waits in policy time: a server wait is the gap measured ÷ the time scale.",
			"  time scale 0.5: scenario-one,",
			"    scenario-two, scenario-three",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &chaos.Summary{Scenarios: tt.rs}
			if diff := cmp.Diff(tt.want, scaleNote(s, tt.width)); diff != "" {
				t.Errorf("scaleNote() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServerPolicyMs: server waits are shown in policy time, the gap
// divided by the time scale, rounded; result.json keeps the gap.
func TestServerPolicyMs(t *testing.T) {
	t.Parallel()
	r := chaos.Result{TimeScale: 0.25, DelaysMs: chaos.DelaysMs{Server: []int64{252, 512, 1002}}}
	if diff := cmp.Diff([]int64{1008, 2048, 4008}, serverPolicyMs(r)); diff != "" {
		t.Errorf("serverPolicyMs() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{252, 512, 1002}, r.DelaysMs.Server); diff != "" {
		t.Errorf("DelaysMs.Server changed (-want +got):\n%s", diff)
	}
}
