package chaos

import (
	"slices"
	"testing"
)

// TestProgressSeedLines: the retry core's lines reach the progress verbatim
// (seed 000 R4's "[retry] Using retry-after: Ns", the escalation guard's
// "Not switching" and "Not escalating" lines), and each wait line says where
// its wait came from.
func TestProgressSeedLines(t *testing.T) {
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
