package retry

import (
	"testing"

	"github.com/retrylab/retrylab/trace"
)

// The switch decisions are pure: a table, no retrier, no clock.
func TestSwitchDecisions(t *testing.T) {
	t.Parallel()
	cur := target{"anthropic", "haiku"}
	esc := &Policy{}
	esc.Escalation.AfterRetries = 2
	esc.Escalation.OnContextLimit = true
	fb := &Policy{}
	fb.Fallback.Enabled = true
	fb.Fallback.MaxRetriesWithoutFallback = 3
	chain := Fallbacks{LargeContext: "sonnet-1m", Error: "sonnet", Provider: "openai", ProviderModel: "gpt-4o"}
	tests := []struct {
		name       string
		got        *switchTo
		to, reason string
	}{
		{"ladder: retried, below AfterRetries", ladderSwitch(esc, "sonnet", Classification{Type: Overloaded}, true, true, 2, cur), "", ""},
		{"ladder: after AfterRetries", ladderSwitch(esc, "sonnet", Classification{Type: Overloaded}, true, true, 3, cur), "sonnet", trace.ReasonAutoAfterRetries},
		{"ladder: not retried any more", ladderSwitch(esc, "sonnet", Classification{Type: Overloaded}, true, false, 1, cur), "sonnet", trace.ReasonAutoAfterRetries},
		{"ladder: not retryable", ladderSwitch(esc, "sonnet", Classification{Type: InvalidRequest}, false, false, 1, cur), "", ""},
		{"ladder: context too long at once", ladderSwitch(esc, "sonnet", Classification{Type: ContextTooLong}, false, false, 1, cur), "sonnet", trace.ReasonContextLimit},
		{"ladder: top", ladderSwitch(esc, "", Classification{Type: Overloaded}, true, false, 9, cur), "", ""},
		{"fallback: still retrying", fallbackSwitch(fb, chain, false, Classification{Type: Overloaded}, true, true, 1, cur, map[string]bool{}), "", ""},
		{"fallback: after MaxRetriesWithoutFallback", fallbackSwitch(fb, chain, false, Classification{Type: Overloaded}, true, true, 3, cur, map[string]bool{}), "sonnet", trace.ReasonErrorFallback},
		{"fallback: context too long", fallbackSwitch(fb, chain, false, Classification{Type: ContextTooLong}, false, false, 1, cur, map[string]bool{}), "sonnet-1m", trace.ReasonContextLimit},
		{"fallback: error model used, other provider", fallbackSwitch(fb, chain, false, Classification{Type: Overloaded}, true, false, 1, cur, map[string]bool{"error": true}), "gpt-4o", trace.ReasonProviderFallback},
		{"fallback: all used", fallbackSwitch(fb, chain, false, Classification{Type: Overloaded}, true, false, 1, cur, map[string]bool{"error": true, "provider": true}), "", ""},
	}
	for _, tt := range tests {
		switch {
		case tt.got == nil && tt.to != "":
			t.Errorf("%s: no switch, want %s (%s)", tt.name, tt.to, tt.reason)
		case tt.got != nil && (tt.got.to.model != tt.to || tt.got.reason != tt.reason):
			t.Errorf("%s: switch to %s (%s), want %q (%s)", tt.name, tt.got.to.model, tt.got.reason, tt.to, tt.reason)
		}
	}
}
