package chaos

import (
	"slices"
	"testing"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/trace"
)

// TestProgressSeedLines: the retry core's lines reach the progress verbatim
// (seed 000 R4's "[retry] Using retry-after: Ns", the escalation guard's
// "Not switching" and "Not escalating" lines), and each wait line says where
// its wait came from.
func TestProgressSeedLines(t *testing.T) {
	t.Parallel()
	in := []string{
		"[retry] Using retry-after: 4s",
		"[retry] Attempt 1/3: 429 — waiting 4s — rate limited",
		"[retry] Attempt 2/3: 529 — waiting 2s — overloaded",
		"[retry] Not switching from claude-haiku-4-5 to claude-sonnet-4-5 (rate_limit): escalation would cost $0.40, over escalation.maxCost $0.10",
		"[retry] Not escalating from claude-opus-4-1: already at the most capable model",
		"[retry] Retrying from beginning of response...",
	}
	want := []string{
		"[retry] Using retry-after: 4s",
		"[retry] Attempt 1/3: 429 — waiting 4s — rate limited (retry-after)",
		"[retry] Attempt 2/3: 529 — waiting 2s — overloaded (backoff)",
		in[3], in[4], in[5],
	}
	var got []string
	p := &progress{emit: func(s string) { got = append(got, s) }}
	for _, s := range in {
		p.line(s)
	}
	if !slices.Equal(got, want) {
		t.Errorf("progress lines:\n got %q\nwant %q", got, want)
	}
}

// TestProgressStructured: with the built-in client's OnAttempt, the wait
// line's label comes from the attempt's outcome, not from the log text.
func TestProgressStructured(t *testing.T) {
	t.Parallel()
	var got []string
	p := &progress{emit: func(s string) { got = append(got, s) }}
	p.attempt(retry.AttemptOutcome{Next: retry.NextRetry, DelaySource: trace.DelayRetryAfter})
	p.line("[retry] Using retry-after: 4s")
	p.line("[retry] Attempt 1/3: 429 — waiting 4s — rate limited")
	p.attempt(retry.AttemptOutcome{Next: retry.NextRetry, DelaySource: trace.DelayBackoff})
	p.line("[retry] Using retry-after: 9s") // a line the hook contradicts: not read
	p.line("[retry] Attempt 2/3: 529 — waiting 2s — overloaded")
	want := []string{
		"[retry] Using retry-after: 4s",
		"[retry] Attempt 1/3: 429 — waiting 4s — rate limited (retry-after)",
		"[retry] Using retry-after: 9s",
		"[retry] Attempt 2/3: 529 — waiting 2s — overloaded (backoff)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("progress lines:\n got %q\nwant %q", got, want)
	}
}
