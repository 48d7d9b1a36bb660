package retry_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/errreport"
	"github.com/retrylab/retrylab/retry/preset"
	"github.com/retrylab/retrylab/retry/provider"
)

// A response the caller rejects is retried with the error in the prompt
// (seed 004 US-002).
func ExampleRetrier_Run() {
	p, _ := preset.Get("escalation-epic") // retries a rejected response once, at once
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
func ExampleExhaustedError() {
	p, _ := preset.Get("plandex")
	r := &retry.Retrier{Policy: p, Provider: "openai", Model: "gpt-4",
		Now: func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }}
	err := r.Do(context.Background(), func(ctx context.Context, a retry.Attempt) error {
		return &provider.Error{Kind: provider.KindHTTP, Provider: "openai", Status: 429, ErrorType: "insufficient_quota",
			Message: "You exceeded your current quota, please check your plan and billing details."}
	})
	var ex *retry.ExhaustedError
	if errors.As(err, &ex) {
		ex.Report.Render(os.Stdout, errreport.Style{Width: 64})
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
	_, err := retry.FromEnv(preset.Plandex(), func(k string) string { return env[k] })
	fmt.Println("error:", err)
	var ee *retry.EnvError
	if errors.As(err, &ee) {
		fmt.Println("hint:", ee.Hint())
	}
	env["PLANDEX_RETRY_IRREVERSIBLE"] = "true"
	p, _ := retry.FromEnv(preset.Plandex(), func(k string) string { return env[k] })
	fmt.Println(p.Strategy(retry.RateLimit).MaxAttempts, p.Strategy(retry.Timeout).MaxAttempts, p.AllowIrreversible)
	// Output:
	// error: PLANDEX_RETRY_IRREVERSIBLE="maybe": not a boolean
	// hint: set it to true to allow retrying irreversible operations, or false
	// 3 2 true
}
