package trace_test

import (
	"os"
	"time"

	"github.com/retrylab/retrylab/trace"
)

// A Writer stamps every event with the run id and the time, and writes it as
// one line; many goroutines (or processes, with trace.Create) may share it.
func ExampleWriter() {
	w := trace.NewWriter(os.Stdout, "r-7f3a")
	w.SetClock(func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 123e6, time.UTC) })
	w.Emit(trace.TypeRetryAttempt, trace.RetryAttempt{
		Provider: "anthropic", Model: "claude-haiku-4-5", Attempt: 1, MaxAttempts: 5,
		FailureType: "overloaded", Status: 529, ErrorMessage: "Overloaded",
		WillRetry: true, DelayMs: 2000, DelaySource: trace.DelayBackoff,
	})
	w.Emit(trace.TypeProviderRequestFinished, trace.ProviderRequestFinished{
		Provider: "anthropic", Model: "claude-haiku-4-5", DurationMs: 2650, Success: true, Retries: 1,
	})
	// Output:
	// {"v":1,"ts":"2026-11-21T10:00:00.123Z","type":"RetryAttempt","runId":"r-7f3a","payload":{"provider":"anthropic","model":"claude-haiku-4-5","attempt":1,"maxAttempts":5,"failureType":"overloaded","status":529,"errorMessage":"Overloaded","willRetry":true,"delayMs":2000,"delaySource":"backoff"}}
	// {"v":1,"ts":"2026-11-21T10:00:00.123Z","type":"ProviderRequestFinished","runId":"r-7f3a","payload":{"provider":"anthropic","model":"claude-haiku-4-5","durationMs":2650,"success":true,"retries":1}}
}
