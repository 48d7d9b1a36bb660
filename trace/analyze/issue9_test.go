package analyze

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func bk(counts map[string]int64) []Bucket {
	out := make([]Bucket, MaxDistributionBucket+1)
	for i := range out {
		out[i].Value = distribution(make([]int64, MaxDistributionBucket+1))[i].Value
		out[i].Count = counts[out[i].Value]
	}
	return out
}

// TestAnalyzeIssue9HandChecked checks every issue 9 figure on a trace that
// holds every event type of the seeds (testdata/issue9), computed by hand.
func TestAnalyzeIssue9HandChecked(t *testing.T) {
	t.Parallel()
	for _, workers := range []int{1, 3} {
		an, err := Run(context.Background(), []string{"testdata/issue9/trace.jsonl"},
			Options{Alerts: DefaultAlerts(), MinSamples: 1, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		opts := cmpopts.EquateApprox(0, 1e-9)
		// Requests: 5; ok 4, failed 1 (gpt, no retry); with retries 3, all recovered.
		if diff := cmp.Diff(bk(map[string]int64{"0": 2, "1": 1, "2": 1, "10+": 1}), an.Requests.RetriesPerRequest); diff != "" {
			t.Errorf("retriesPerRequest (-want +got):\n%s", diff)
		}
		// Recovered: 4000, 2000, 60000 ms; failed once: 1 failed + 3 recovered.
		wantRec := Recovery{FailedOnce: 4, Recovered: 3, Rate: 0.75,
			TimeToRecoveryMs: RecoveryTimes{Count: 3, Mean: 22000, P50: 4000, P90: 60000, P99: 60000, Max: 60000}}
		if diff := cmp.Diff(wantRec, an.Recovery, opts); diff != "" {
			t.Errorf("recovery (-want +got):\n%s", diff)
		}
		wantOrch := Orchestrator{L3Runs: 2, JudgeRuns: 1, JudgeInvocations: 2, Candidates: 3, ValidCandidates: 2,
			Verifications: 2, VerificationsPassed: 1,
			RunStoppedByReason: map[string]int64{"budget_exceeded": 1, "non_improving": 1},
			EscalatedRuns:      IDList{Count: 2, IDs: []string{"r1", "r2"}},
			RepairIterations: RepairIterations{Runs: 2, Distribution: bk(map[string]int64{"2": 1, "5": 1}), Threshold: 3,
				Above: IDList{Count: 1, IDs: []string{"r1"}}}}
		if diff := cmp.Diff(wantOrch, an.Orchestrator); diff != "" {
			t.Errorf("orchestrator (-want +got):\n%s", diff)
		}
		wantTickets := Tickets{Decisions: 5, Tickets: 3, Retried: 2,
			RetriedByCategory:   map[string]int64{"transient": 1, "api_error": 1},
			Exhausted:           IDList{Count: 2, IDs: []string{"t2", "t3"}},
			SucceededAfterRetry: 1, RetrySuccessRate: 0.5,
			DelayMs:            Delays{Count: 3, Total: 3500, P50: 1000, P90: 2000, P99: 2000, Max: 2000},
			Transitions:        3,
			TransitionsByEvent: map[string]int64{"retry": 1, "succeed": 1, "hold": 1},
			TransitionsByTo:    map[string]int64{"ready": 1, "needs_review": 1, "on_hold": 1}}
		if diff := cmp.Diff(wantTickets, an.Tickets); diff != "" {
			t.Errorf("tickets (-want +got):\n%s", diff)
		}
		if want := (Histogram{Counts: [11]int64{2: 1, 3: 1, 4: 1}, SumMs: 3500}); an.TicketDelayHist != want {
			t.Errorf("ticket delay histogram %+v, want %+v", an.TicketDelayHist, want)
		}
		wantCore := RetryCore{ErrorReports: 2,
			ErrorReportsByFailureType:   map[string]int64{"rate_limit": 1, "auth": 1},
			ErrorReportsByCategory:      map[string]int64{"retryable": 1, "non-retryable": 1},
			EscalationsDeclined:         2,
			EscalationsDeclinedByReason: map[string]int64{"error_fallback": 1, "auto_after_retries": 1},
			EscalationsDeclinedByWhy:    map[string]int64{"cost_cap": 1, "top_of_ladder": 1},
			ErrorContextRetries:         1}
		if diff := cmp.Diff(wantCore, an.RetryCore); diff != "" {
			t.Errorf("retry core (-want +got):\n%s", diff)
		}
		rl := MessageCount{"rate limited: request <id> after <n>s", 2}
		ik := MessageCount{`invalid key "<…>"`, 1}
		wantMsgs := ErrorMessages{Total: 3, Top: []MessageCount{rl, ik},
			ByModel: []ModelMessages{{Model: "haiku", Total: 2, Top: []MessageCount{rl}}, {Model: "gpt", Total: 1, Top: []MessageCount{ik}}}}
		if diff := cmp.Diff(wantMsgs, an.ErrorMessages); diff != "" {
			t.Errorf("error messages (-want +got):\n%s", diff)
		}
		wantMetrics := map[string]float64{
			"judge_invocation_rate": 0.5, "candidate_validity_rate": 2.0 / 3, "verification_pass_rate": 0.5,
			"recovered_rate": 0.75, "time_to_recovery_mean": 22, "time_to_recovery_p50": 4,
			"time_to_recovery_p90": 60, "time_to_recovery_p99": 60, "retry_success_rate": 0.5,
			"ticket_exhausted_rate": 2.0 / 3,
		}
		for name, want := range wantMetrics {
			if got, _, _, ok := an.Metric(name); !ok || got < want-1e-9 || got > want+1e-9 {
				t.Errorf("Metric(%s) = %v, %v; want %v", name, got, ok, want)
			}
		}
	}
}

func TestNormalizeMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"rate limited", "rate limited"},
		{"HTTP 429: Too Many Requests", "HTTP <n>: Too Many Requests"},
		{"retry after 1.5s, waited 500ms.", "retry after <n>s, waited <n>ms."},
		{"request req_01HX9ABC failed", "request <id> failed"},
		{"trace 123e4567-e89b-12d3-a456-426614174000 lost", "trace <uuid> lost"},
		{"object deadbeef01 at 0x7ffd1234", "object <hex> at <hex>"},
		{`model "gpt-4o" not found`, `model "<…>" not found`},
		{"can't read 'file.txt'", `can't read "<…>"`},
		{"  many   spaces\n\tand tabs  ", "many spaces and tabs"},
		{"", "(empty)"},
		{"r-7f3a and run 12 of 12", "<id> and run <n> of <n>"},
		{"unterminated \"quote 42", "unterminated \"quote <n>"},
		{strings.Repeat("x", 300), strings.Repeat("x", MaxMessageBytes) + "…"},
	} {
		if got := NormalizeMessage(tc.in); got != tc.want {
			t.Errorf("NormalizeMessage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzNormalizeMessage: whatever the message, the template is valid UTF-8,
// bounded, holds no ASCII digit (every number, id and hex is a
// placeholder), and messages that differ only in their numbers share it.
func FuzzNormalizeMessage(f *testing.F) {
	for _, s := range []string{"HTTP 429 after 3s", "req_01HX 'q' \"x\"", "0xff deadbeef01", "\xff\xfe", "a\u2028b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := NormalizeMessage(s)
		if !utf8.ValidString(got) || len(got) > MaxMessageBytes+len("…") {
			t.Fatalf("NormalizeMessage(%q) = %q: invalid or too long", s, got)
		}
		if strings.ContainsAny(got, "0123456789") {
			t.Fatalf("NormalizeMessage(%q) = %q holds a digit", s, got)
		}
		b := []byte(s) // digits 1-7 shifted: numbers, hex and ids keep their kind
		for i, c := range b {
			if c >= '1' && c <= '7' {
				b[i] = c + 1
			}
		}
		other := string(b)
		if len(s) < MaxMessageBytes/2 && NormalizeMessage(other) != got {
			t.Fatalf("%q and %q differ only in digits but normalise to %q and %q", s, other, got, NormalizeMessage(other))
		}
	})
}
