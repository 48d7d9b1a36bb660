package retry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// TestSeed004US002EnhancedPrompt: buildEnhancedRetryPrompt's text, with and
// without a failed output.
func TestSeed004US002EnhancedPrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    EnhancedRetryContext
		want string
	}{
		{"with failed output",
			EnhancedRetryContext{OriginalPrompt: "Write a JSON list of three colours.", FailedResponse: "red, green, blue",
				ErrorMessage: "not valid JSON", Suggestion: "Answer with JSON only."},
			"Previous attempt failed with the following error:\n---\nError: not valid JSON\n\nFailed output:\nred, green, blue\n---\n\n" +
				"Please try again, avoiding the issue that caused the failure.\nAnswer with JSON only.\n\nOriginal request:\nWrite a JSON list of three colours."},
		{"without failed output or suggestion",
			EnhancedRetryContext{OriginalPrompt: "Hi", ErrorMessage: "HTTP 500"},
			"Previous attempt failed with the following error:\n---\nError: HTTP 500\n\n---\n\n" +
				"Please try again, avoiding the issue that caused the failure.\n\n\nOriginal request:\nHi"},
		{"with a stack trace",
			EnhancedRetryContext{OriginalPrompt: "Hi", ErrorMessage: "TypeError: x is undefined", StackTrace: "at f (a.js:1:2)"},
			"Previous attempt failed with the following error:\n---\nError: TypeError: x is undefined\nStack trace:\nat f (a.js:1:2)\n\n---\n\n" +
				"Please try again, avoiding the issue that caused the failure.\n\n\nOriginal request:\nHi"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, EnhancedRetryPrompt(tt.c)); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// runValidated runs r.Run with the k-th attempt answering outputs[k] and
// errs[k], and a Validate that rejects any output but `["red","green","blue"]`.
func runValidated(t *testing.T, r *Retrier, outputs []string, errs ...error) (*RetryContext, run) {
	t.Helper()
	r.Validate = func(out string) error {
		if out != `["red","green","blue"]` {
			return errors.New("not a JSON list of three colours")
		}
		return nil
	}
	var rc *RetryContext
	got := captureRun(t, r, func(call func(context.Context, Attempt) (string, error)) error {
		var err error
		rc, err = r.Run(context.Background(), call)
		return err
	}, outputs, errs...)
	return rc, got
}

// TestSeed004US002LogicalFailureRetriedWithErrorContext: a response the
// caller rejects is a retryable logical failure; the retry's Attempt
// carries the error and the failed output, its prompt is the enhanced one,
// the trace marks the retry, and the earlier attempt stays in the history.
func TestSeed004US002LogicalFailureRetriedWithErrorContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "escalation-epic"), Provider: "anthropic", Model: "claude-haiku-4-5", ErrorContext: true}
		rc, got := runValidated(t, r, []string{"red, green, blue", `["red","green","blue"]`})
		if got.err != nil {
			t.Fatal(got.err)
		}
		if rc.Output != `["red","green","blue"]` || rc.Summary() != "succeeded after 2 attempt(s)" {
			t.Errorf("RetryContext = %+v", rc)
		}
		second := got.attempts[1]
		if second.Previous == nil || !second.Previous.Logical() || second.Previous.Output != "red, green, blue" ||
			second.Previous.Classification.Message != "not a JSON list of three colours" || len(second.History) != 1 {
			t.Fatalf("second attempt = %+v", second)
		}
		prompt := second.Prompt("List three colours as JSON.", "Answer with JSON only.")
		for _, want := range []string{"Error: not a JSON list of three colours", "Failed output:\nred, green, blue",
			"Please try again, avoiding the issue", "Original request:\nList three colours as JSON."} {
			if !strings.Contains(prompt, want) {
				t.Errorf("prompt lacks %q:\n%s", want, prompt)
			}
		}
		if got.attempts[0].Prompt("orig", "s") != "orig" {
			t.Error("the first attempt's prompt is not the original")
		}
		ra := eventsOf[trace.RetryAttempt](t, got.events, trace.TypeRetryAttempt)
		want := []trace.RetryAttempt{{Provider: "anthropic", Model: "claude-haiku-4-5", Attempt: 1, MaxAttempts: 2, FailureType: "logical_failure",
			ErrorMessage: "not a JSON list of three colours", WillRetry: true, DelaySource: "backoff", ErrorContext: true}}
		if diff := cmp.Diff(want, ra); diff != "" {
			t.Errorf("RetryAttempt mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestSeed004US002APIErrorContext: an API error's retry carries the error
// message and the text that had streamed before it.
func TestSeed004US002APIErrorContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), ErrorContext: true}
		drop := &provider.Error{Kind: provider.KindSSEError, ErrorType: "overloaded_error", Message: "Overloaded", Streamed: true, Text: "The three col"}
		_, got := runValidated(t, r, []string{"", `["red","green","blue"]`}, drop)
		if got.err != nil {
			t.Fatal(got.err)
		}
		prev := got.attempts[1].Previous
		if prev == nil || prev.Logical() || prev.Output != "The three col" || prev.Classification.Type != Overloaded {
			t.Errorf("Previous = %+v", prev)
		}
		if ra := eventsOf[trace.RetryAttempt](t, got.events, trace.TypeRetryAttempt); len(ra) != 1 || !ra[0].ErrorContext {
			t.Errorf("RetryAttempt = %+v, want errorContext", ra)
		}
	})
}

// TestLogicalFailureNotRetriedByDefault: a preset that says nothing of
// logical failures gives up on the first rejected response, reporting it.
func TestLogicalFailureNotRetriedByDefault(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "anthropic-sdk")}
		_, got := runValidated(t, r, []string{"nope"})
		var ex *ExhaustedError
		var le *LogicalError
		if !errors.As(got.err, &ex) || ex.Classification.Type != LogicalFailure || !errors.As(got.err, &le) || le.Output != "nope" {
			t.Fatalf("err = %v", got.err)
		}
		if ra := eventsOf[trace.RetryAttempt](t, got.events, trace.TypeRetryAttempt); len(ra) != 1 || ra[0].ErrorContext {
			t.Errorf("RetryAttempt = %+v", ra)
		}
	})
}

// TestAttemptPromptTruncatesFailedOutput: seed 004's risk "context too long
// after retries": the failed output quoted is cut.
func TestAttemptPromptTruncatesFailedOutput(t *testing.T) {
	t.Parallel()
	a := Attempt{Number: 2, Previous: &Failure{Output: strings.Repeat("x", MaxFailedOutput+100),
		Classification: Classification{Message: "bad"}}}
	p := a.Prompt("orig", "")
	if strings.Count(p, "x") != MaxFailedOutput || !strings.Contains(p, "[... truncated]") {
		t.Errorf("prompt has %d x's", strings.Count(p, "x"))
	}
}

// ladderRetrier is escalation-epic on the seed's ladder, failing with 503
// until the ladder moves.
func ladderRetrier(t *testing.T) *Retrier {
	return &Retrier{Policy: mustPreset(t, "escalation-epic"), Provider: "anthropic"}
}

func fiveOOThree(n int) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = httpErr(503)
	}
	return errs
}

// TestSeed004US003DefaultLadder: escalation-epic starts at the seed's first
// model and escalates along MODEL_LADDER.
func TestSeed004US003DefaultLadder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		got := doFake(t, ladderRetrier(t), fiveOOThree(4)...)
		if got.err != nil {
			t.Fatal(got.err)
		}
		if diff := cmp.Diff([]string{SeedLadder[0], SeedLadder[0], SeedLadder[0], SeedLadder[0], SeedLadder[1]}, got.models); diff != "" {
			t.Errorf("models mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestSeed004US003CostEstimateBeforeEscalation: the estimate is computed
// before the switch and offered to Confirm, which sees no RunEscalated yet;
// the RunEscalated then carries the same estimate.
func TestSeed004US003CostEstimateBeforeEscalation(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := ladderRetrier(t)
		var offers []EscalationOffer
		var escalatedBefore int
		var got run
		r.Confirm = func(ctx context.Context, o EscalationOffer) error {
			offers = append(offers, o)
			escalatedBefore = strings.Count(r.Log.(interface{ String() string }).String(), "Switching")
			return nil
		}
		got = doFake(t, r, fiveOOThree(4)...)
		if got.err != nil {
			t.Fatal(got.err)
		}
		want := []EscalationOffer{{From: SeedLadder[0], To: SeedLadder[1], Reason: trace.ReasonAutoAfterRetries, AfterRetries: 3,
			CostEstimate: 0.01, Priced: true}}
		if diff := cmp.Diff(want, offers); diff != "" {
			t.Errorf("offers mismatch (-want +got):\n%s", diff)
		}
		if escalatedBefore != 0 {
			t.Error("Confirm was called after the switch")
		}
		esc := eventsOf[trace.RunEscalated](t, got.events, trace.TypeRunEscalated)
		if len(esc) != 1 || esc[0].CostEstimate == nil || *esc[0].CostEstimate != 0.01 {
			t.Errorf("RunEscalated = %+v", esc)
		}
		if r.EscalationSpent() != 0.01 {
			t.Errorf("EscalationSpent = %v", r.EscalationSpent())
		}
	})
}

// TestSeed004US003ConfirmRefuses: a refused escalation does not happen: an
// EscalationDeclined is written and the request gives up.
func TestSeed004US003ConfirmRefuses(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := ladderRetrier(t)
		r.Confirm = func(context.Context, EscalationOffer) error { return errors.New("user said no") }
		got := doFake(t, r, fiveOOThree(4)...)
		var ex *ExhaustedError
		if !errors.As(got.err, &ex) || ex.Reason != ReasonEscalationDeclined || ex.Attempts != 4 {
			t.Fatalf("err = %v", got.err)
		}
		dec := eventsOf[trace.EscalationDeclined](t, got.events, trace.TypeEscalationDeclined)
		zero := 0.0
		want := []trace.EscalationDeclined{{From: SeedLadder[0], To: SeedLadder[1], Reason: "auto_after_retries", Why: "refused",
			Detail: "user said no", CostEstimate: ptr(0.01), Spent: &zero}}
		if diff := cmp.Diff(want, dec); diff != "" {
			t.Errorf("EscalationDeclined mismatch (-want +got):\n%s", diff)
		}
		if n := len(eventsOf[trace.RunEscalated](t, got.events, trace.TypeRunEscalated)); n != 0 {
			t.Errorf("%d RunEscalated after a refusal", n)
		}
		if !strings.Contains(got.log, "[retry] Not switching from claude-haiku-3-5-20241022 to claude-sonnet-4-20250514 (refused): user said no") {
			t.Errorf("log = %q", got.log)
		}
	})
}

// TestEscalationCostCapPerRun: escalation.maxCost caps what the switches of
// a run (every request of one Retrier) may add: the first escalation fits,
// the second request's does not.
func TestEscalationCostCapPerRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, err := TestPolicies.Parse([]byte("preset: escalation-epic\nescalation: {maxCost: 0.015}\n"), "p.yaml")
		if err != nil {
			t.Fatal(err)
		}
		r := &Retrier{Policy: p, Provider: "anthropic"}
		if got := doFake(t, r, fiveOOThree(4)...); got.err != nil {
			t.Fatalf("first request: %v", got.err)
		}
		got := doFake(t, r, fiveOOThree(4)...)
		var ex *ExhaustedError
		if !errors.As(got.err, &ex) || ex.Reason != ReasonEscalationDeclined {
			t.Fatalf("second request: err = %v, want the cap to stop it", got.err)
		}
		dec := eventsOf[trace.EscalationDeclined](t, got.events, trace.TypeEscalationDeclined)
		if len(dec) != 1 || dec[0].Why != trace.DeclinedCostCap || *dec[0].Spent != 0.01 || *dec[0].Cap != 0.015 {
			t.Errorf("EscalationDeclined = %+v", dec)
		}
		if r.EscalationSpent() != 0.01 {
			t.Errorf("EscalationSpent = %v, want only the first switch", r.EscalationSpent())
		}
	})
}

// TestEscalationCapUnpriced: under a cap, a switch that cannot be priced
// does not happen.
func TestEscalationCapUnpriced(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := mustPreset(t, "escalation-epic")
		p.Escalation.MaxCost = 1
		r := &Retrier{Policy: p, Ladder: []string{"llama-small", "llama-large"}}
		got := doFake(t, r, fiveOOThree(4)...)
		dec := eventsOf[trace.EscalationDeclined](t, got.events, trace.TypeEscalationDeclined)
		if got.err == nil || len(dec) != 1 || dec[0].Why != trace.DeclinedUnpriced {
			t.Errorf("err %v, EscalationDeclined %+v", got.err, dec)
		}
	})
}

// TestSeed004US003TopOfLadder: at the most capable model, a failure that
// would escalate ends with "already at the most capable model".
func TestSeed004US003TopOfLadder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		errs []error
	}{
		{"retries exhausted", fiveOOThree(4)},
		{"context limit", []error{&provider.Error{Kind: provider.KindHTTP, Status: 400, Message: "prompt exceeds context_length"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := ladderRetrier(t)
				r.Model = SeedLadder[2]
				got := doFake(t, r, tt.errs...)
				var ex *ExhaustedError
				if !errors.As(got.err, &ex) || ex.Reason != ReasonTopOfLadder {
					t.Fatalf("err = %v", got.err)
				}
				dec := eventsOf[trace.EscalationDeclined](t, got.events, trace.TypeEscalationDeclined)
				if len(dec) != 1 || dec[0].Why != trace.DeclinedTopOfLadder || dec[0].From != SeedLadder[2] || dec[0].To != "" {
					t.Errorf("EscalationDeclined = %+v", dec)
				}
				if !strings.Contains(got.log, "[retry] Not escalating from claude-opus-4-20250514: already at the most capable model") {
					t.Errorf("log = %q", got.log)
				}
				if ex.Report.Recovery[0].Setting != "client.escalation, escalation.ladder" {
					t.Errorf("first action = %+v", ex.Report.Recovery[0])
				}
			})
		})
	}
	// A model off the ladder is not at its top.
	synctest.Test(t, func(t *testing.T) {
		r := ladderRetrier(t)
		r.Model = "claude-haiku-4-5"
		got := doFake(t, r, fiveOOThree(4)...)
		var ex *ExhaustedError
		if !errors.As(got.err, &ex) || ex.Reason != ReasonAttemptsExhausted {
			t.Errorf("err = %v", got.err)
		}
	})
}

// TestParseEscalationGuard: escalation.ladder and escalation.maxCost in a
// policy file, and their errors.
func TestParseEscalationGuard(t *testing.T) {
	t.Parallel()
	p, err := TestPolicies.Parse([]byte("preset: escalation-epic\nescalation: {ladder: [a, b], maxCost: 0.5}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(p.Escalation.Ladder, []string{"a", "b"}) || p.Escalation.MaxCost != 0.5 {
		t.Errorf("escalation = %+v", p.Escalation)
	}
	for src, want := range map[string]string{
		"escalation: {ladder: [a]}\n":       "p.yaml:1:22: escalation.ladder: must be a list of at least two models",
		"escalation: {ladder: [a, a]}\n":    `p.yaml:1:26: escalation.ladder: model "a" is on the ladder twice`,
		"escalation: {maxCost: -1}\n":       "p.yaml:1:23: escalation.maxCost: -1 is out of range",
		"escalation: {ladder: [a, {b: c}]}": "p.yaml:1:26: escalation.ladder: must be a list of model names",
	} {
		_, err := TestPolicies.Parse([]byte(src), "p.yaml")
		if err == nil || err.Error() != want {
			t.Errorf("ParsePolicy(%q) = %v, want %q", src, err, want)
		}
	}
}

// TestEscalationGuardSkippedWhenSwitchCannotHappen: a switch the retry
// budget stops is never offered to Confirm, and one a failed rollback stops
// is not counted as spent.
func TestEscalationGuardSkippedWhenSwitchCannotHappen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := ladderRetrier(t)
		r.Budget = NewBudget(2, 0) // two failures leave it at half: no retry, no switch
		r.Confirm = func(context.Context, EscalationOffer) error { t.Error("Confirm called"); return nil }
		r.Policy.Escalation.AfterRetries = 0
		got := doFake(t, r, &provider.Error{Kind: provider.KindHTTP, Status: 400, Message: "prompt exceeds context_length"})
		var ex *ExhaustedError
		if !errors.As(got.err, &ex) || ex.Reason != ReasonBudgetExhausted {
			t.Errorf("err = %v", got.err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r := ladderRetrier(t)
		r.Operation = SafeAfterRollback
		r.Rollback = func(context.Context, Attempt) error { return errors.New("no checkpoint") }
		got := doFake(t, r, &provider.Error{Kind: provider.KindHTTP, Status: 400, Message: "prompt exceeds context_length"})
		if got.err == nil || r.EscalationSpent() != 0 {
			t.Errorf("err %v, spent %v; want the failed rollback to stop the switch and refund it", got.err, r.EscalationSpent())
		}
	})
}
