package retry_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/policyfile"
	"github.com/retrylab/retrylab/retry/preset"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

func ExampleRetrier_Do() {
	p, _ := preset.Get("forgeflare")
	p.Default.InitialDelay = time.Millisecond // keep the example fast: 1ms, 2ms, ...
	for ft, s := range p.FailureTypes {
		s.InitialDelay = time.Millisecond
		p.FailureTypes[ft] = s
	}
	tw := trace.NewWriter(os.Stdout, "r-1")
	tw.SetClock(func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 123e6, time.UTC) })
	r := &retry.Retrier{
		Policy: p, Provider: "anthropic", Model: "claude-haiku-4-5",
		Trace: tw, Log: os.Stdout, Rand: rand.New(rand.NewPCG(1, 2)),
		// A fixed clock makes durationMs exactly the policy's waits.
		Now: func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) },
	}
	err := r.Do(context.Background(), func(ctx context.Context, a retry.Attempt) error {
		if a.Number == 1 {
			return &provider.Error{Kind: provider.KindHTTP, Provider: "anthropic", Status: 529, Message: "Overloaded"}
		}
		return nil
	})
	fmt.Println("err:", err)
	// Output:
	// {"v":1,"ts":"2026-11-21T10:00:00.123Z","type":"RetryAttempt","runId":"r-1","payload":{"provider":"anthropic","model":"claude-haiku-4-5","attempt":1,"maxAttempts":5,"failureType":"overloaded","status":529,"errorMessage":"Overloaded","willRetry":true,"delayMs":1,"delaySource":"backoff"}}
	// [retry] Attempt 1/4: 529 — waiting 0.001s — Overloaded
	// {"v":1,"ts":"2026-11-21T10:00:00.123Z","type":"ProviderRequestFinished","runId":"r-1","payload":{"provider":"anthropic","model":"claude-haiku-4-5","durationMs":1,"success":true,"retries":1}}
	// err: <nil>
}

// A Responses stream failed with rate_limit_exceeded and said how long to
// wait in words. Only a policy that reads messages (Codex CLI's rule) takes
// it as the Retry-After.
func ExamplePolicy_MessageRetryAfter() {
	err := &provider.Error{Kind: provider.KindSSEError, Provider: provider.ResponsesProvider, Streamed: true,
		Code: "rate_limit_exceeded", Message: "Rate limit reached for gpt-4.1. Please try again in 1.5s."}
	c := retry.Classify(err)
	fmt.Println(c.Type, c.Class, c.MessageRetryAfter)

	p, _ := policyfile.Parse([]byte("preset: openai-sdk\nstreamErrors: true\nretryAfter: {message: true}\n"), "codex.yaml")
	fmt.Println(p.MessageRetryAfter(c))
	sdk, _ := preset.Get("openai-sdk")
	fmt.Println(sdk.MessageRetryAfter(c))
	// Output:
	// rate_limit retryable 1.5s
	// 1.5s true
	// 0s false
}
