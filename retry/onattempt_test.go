package retry

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/trace"
)

// TestOnAttempt: every ended attempt is reported once, with what comes next
// (a wait and its source, a switch, giving up, done), in the order of the
// log lines it precedes.
func TestOnAttempt(t *testing.T) {
	t.Parallel()
	// Only a classification's type and status are compared here; the
	// classifier's tests cover the rest.
	ignore := cmp.Transformer("typeStatus", func(c Classification) [2]any { return [2]any{c.Type, c.Status} })
	t.Run("retry then done", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var got []AttemptOutcome
			r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Model: "m",
				OnAttempt: func(o AttemptOutcome) { got = append(got, o) }}
			if res := doFake(t, r, retryAfterErr(429, "5", 5*time.Second), httpErr(529)); res.err != nil {
				t.Fatal(res.err)
			}
			want := []AttemptOutcome{
				{Attempt: 1, OnTarget: 1, Provider: "anthropic", Model: "m", Classification: Classification{Type: RateLimit, Status: 429},
					Next: NextRetry, Delay: 5 * time.Second, DelaySource: trace.DelayRetryAfter},
				{Attempt: 2, OnTarget: 2, Provider: "anthropic", Model: "m", Classification: Classification{Type: Overloaded, Status: 529},
					Next: NextRetry, Delay: 4 * time.Second, DelaySource: trace.DelayBackoff},
				{Attempt: 3, OnTarget: 3, Provider: "anthropic", Model: "m", Next: NextDone},
			}
			if diff := cmp.Diff(want, got, ignore); diff != "" {
				t.Errorf("OnAttempt (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("give up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var got []AttemptOutcome
			r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Model: "m",
				OnAttempt: func(o AttemptOutcome) { got = append(got, o) }}
			if res := doFake(t, r, httpErr(400)); res.err == nil {
				t.Fatal("a 400 succeeded")
			}
			if len(got) != 1 || got[0].Next != NextGiveUp || got[0].Reason == "" || got[0].Delay != 0 {
				t.Errorf("OnAttempt = %+v, want one give_up with its reason", got)
			}
		})
	})
	t.Run("switch", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var got []AttemptOutcome
			r := &Retrier{Policy: mustPreset(t, "escalation-epic"), Provider: "anthropic", Model: "claude-haiku-4-5",
				Ladder:    []string{"claude-haiku-4-5", "claude-sonnet-4-5"},
				OnAttempt: func(o AttemptOutcome) { got = append(got, o) }}
			if res := doFake(t, r, httpErr(503), httpErr(503), httpErr(503), httpErr(503)); res.err != nil {
				t.Fatal(res.err)
			}
			var nexts []Next
			for _, o := range got {
				nexts = append(nexts, o.Next)
			}
			want := []Next{NextRetry, NextRetry, NextRetry, NextSwitch, NextDone}
			if !cmp.Equal(nexts, want) || got[3].SwitchTo != "claude-sonnet-4-5" || got[3].Reason == "" || got[4].Model != "claude-sonnet-4-5" || got[4].OnTarget != 1 {
				t.Errorf("OnAttempt nexts %v (want %v): %+v", nexts, want, got)
			}
		})
	})
}
