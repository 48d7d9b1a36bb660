package retry

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// TestSeed000R1StreamWithoutStopReasonIsStreamTransient: a stream whose
// message_stop came without a stop_reason (what the provider client now
// returns as KindIncomplete) is a stream interruption that forgeflare
// retries from the beginning, never a success.
func TestSeed000R1StreamWithoutStopReasonIsStreamTransient(t *testing.T) {
	t.Parallel()
	noStop := &provider.Error{Kind: provider.KindIncomplete, Provider: "anthropic", Streamed: true,
		Message: "stream ended without stop_reason", Text: "Hello"}
	c := Classify(noStop)
	if c.Type != StreamInterrupted || c.Class != Retryable || !c.Streamed {
		t.Fatalf("Classify = %+v, want stream_interrupted, retryable, streamed", c)
	}
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Model: "m"}
		got := doFake(t, r, noStop)
		if got.err != nil {
			t.Fatal(got.err)
		}
		want := "[retry] Attempt 1/4: stream_interrupted — waiting 2s — stream ended without stop_reason\n" +
			"[retry] Retrying from beginning of response...\n"
		if diff := cmp.Diff(want, got.log); diff != "" {
			t.Errorf("log mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestSeed000R3ErrorMessageOnEveryAttempt: every retried attempt's log line
// shows its error message (R3: "error message displayed to user on every
// attempt, not just the final failure"), on one line, after R4's exact text.
func TestSeed000R3ErrorMessageOnEveryAttempt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Model: "m"}
		e1, e2 := httpErr(529), httpErr(503)
		e1.Message, e2.Message = "Overloaded", "upstream\nconnect error"
		got := doFake(t, r, e1, e2)
		if got.err != nil {
			t.Fatal(got.err)
		}
		want := "[retry] Attempt 1/4: 529 — waiting 2s — Overloaded\n" +
			"[retry] Attempt 2/4: 503 — waiting 4s — upstream connect error\n"
		if diff := cmp.Diff(want, got.log); diff != "" {
			t.Errorf("log mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestSeed000R4RetryAfterLine: the retry-after line is exactly the seed's
// "[retry] Using retry-after: {n}s", on a line of its own before the
// attempt's.
func TestSeed000R4RetryAfterLine(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Model: "m"}
		got := doFake(t, r, retryAfterErr(429, "7", 7*time.Second))
		lines := strings.Split(strings.TrimSpace(got.log), "\n")
		if len(lines) != 2 || lines[0] != "[retry] Using retry-after: 7s" || !strings.HasPrefix(lines[1], "[retry] Attempt 1/4: 429 — waiting 7s") {
			t.Errorf("log = %q", got.log)
		}
		ra := eventsOf[trace.RetryAttempt](t, got.events, trace.TypeRetryAttempt)
		if len(ra) != 1 || ra[0].DelaySource != trace.DelayRetryAfter || ra[0].DelayMs != 7000 {
			t.Errorf("RetryAttempt = %+v", ra)
		}
	})
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"a\n b\t\tc ", "a b c"},
		{"", ""},
		{strings.Repeat("é", maxLogMessage+5), strings.Repeat("é", maxLogMessage) + "..."},
	}
	for _, tt := range tests {
		if got := oneLine(tt.in, maxLogMessage); got != tt.want {
			t.Errorf("oneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
