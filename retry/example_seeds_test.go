package retry_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/provider"
)

// A response the caller rejects is retried with the error in the prompt
// (seed 004 US-002).
func ExampleRetrier_Run() {
	p, _ := retry.Preset("escalation-epic") // retries a rejected response once, at once
	r := &retry.Retrier{Policy: p, Model: "claude-haiku-4-5", ErrorContext: true,
		Validate: func(out string) error {
			if !strings.HasPrefix(out, "[") {
				return errors.New("not a JSON array")
			}
			return nil
		}}
	rc, err := r.Run(context.Background(), func(ctx context.Context, a retry.Attempt) (string, error) {
		prompt := a.Prompt("List three colours as a JSON array.", "Answer with JSON only.")
		fmt.Printf("attempt %d prompt:\n%s\n", a.Number, prompt)
		if a.Previous == nil {
			return "red, green, blue", nil // what the model said
		}
		return `["red","green","blue"]`, nil
	})
	fmt.Println(rc.Output, err)
	fmt.Println(rc.Summary())
	// Output:
	// attempt 1 prompt:
	// List three colours as a JSON array.
	// attempt 2 prompt:
	// Previous attempt failed with the following error:
	// ---
	// Error: not a JSON array
	//
	// Failed output:
	// red, green, blue
	// ---
	//
	// Please try again, avoiding the issue that caused the failure.
	// Answer with JSON only.
	//
	// Original request:
	// List three colours as a JSON array.
	// ["red","green","blue"] <nil>
	// succeeded after 2 attempt(s)
}

// Seed 001's walkthrough 2: a quota error is not retried, and the report
// says what to do.
func ExampleReport_Render() {
	p, _ := retry.Preset("plandex")
	r := &retry.Retrier{Policy: p, Provider: "openai", Model: "gpt-4",
		Now: func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }}
	err := r.Do(context.Background(), func(ctx context.Context, a retry.Attempt) error {
		return &provider.Error{Kind: provider.KindHTTP, Provider: "openai", Status: 429, ErrorType: "insufficient_quota",
			Message: "You exceeded your current quota, please check your plan and billing details."}
	})
	var ex *retry.ExhaustedError
	if errors.As(err, &ex) {
		ex.Report.Render(os.Stdout, retry.Style{Width: 64})
	}
	// Output:
	// ╔══════════════════════════════════════════════════════════════╗
	// ║                     UNRECOVERABLE ERROR                      ║
	// ╚══════════════════════════════════════════════════════════════╝
	//
	// ▌ WHAT HAPPENED
	// │ You exceeded your current quota, please check your plan and
	// │ billing details.
	//
	// ▌ REQUIRED ACTIONS
	// │ 1. [CRITICAL] Add credits to your account
	// │ 2. [HIGH]     Switch to a different provider
	// │    └─ Run: plandex providers switch <provider>
	// │ 3. [MEDIUM]   Upgrade your plan
	//
	// ▌ ROOT CAUSE
	// │ Type:      quota_exhausted (non-retryable)
	// │ HTTP:      429
	// │ Provider:  openai gpt-4
	// │ Stopped:   non-retryable, after 1 attempt(s)
	//
	// ▌ RETRY HISTORY
	// │ 1. 10:00:00.000Z HTTP 429 quota_exhausted on openai/gpt-4:
	// │    gave up
}

func ExampleFromEnv() {
	env := map[string]string{"PLANDEX_MAX_RETRY_ATTEMPTS": "3", "PLANDEX_RETRY_IRREVERSIBLE": "maybe"}
	_, err := retry.FromEnv(retry.Plandex(), func(k string) string { return env[k] })
	fmt.Println("error:", err)
	var ee *retry.EnvError
	if errors.As(err, &ee) {
		fmt.Println("hint:", ee.Hint())
	}
	env["PLANDEX_RETRY_IRREVERSIBLE"] = "true"
	p, _ := retry.FromEnv(retry.Plandex(), func(k string) string { return env[k] })
	fmt.Println(p.Strategy(retry.RateLimit).MaxAttempts, p.Strategy(retry.Timeout).MaxAttempts, p.AllowIrreversible)
	// Output:
	// error: PLANDEX_RETRY_IRREVERSIBLE="maybe": not a boolean
	// hint: set it to true to allow retrying irreversible operations, or false
	// 3 2 true
}

// Seed 002: a ticket that keeps failing with a rate limit is retried after
// 1s, 2s and 4s, then put on hold until a person releases it.
func ExampleTickets() {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	board := &retry.Tickets{}
	board.Add(retry.Ticket{ID: "T-1", CreatedAt: now})
	for {
		ready := board.Ready(now, 1)
		if len(ready) == 0 {
			break
		}
		board.Claim("T-1", now)
		t, d, _ := board.Fail("T-1", "429 rate limit exceeded", now)
		fmt.Println(strings.TrimSpace(fmt.Sprint(t.State, " ", t.RetryCount, " ", d.NextDelay, " ", t.HoldReason)))
		now = t.RetryAfter
	}
	t, _ := board.Release("T-1", "alice")
	fmt.Println(t.State, t.RetryCount)
	// Output:
	// ready 1 1s
	// ready 2 2s
	// ready 3 4s
	// on_hold 3 0s Max retries exceeded: transient
	// ready 0
}
