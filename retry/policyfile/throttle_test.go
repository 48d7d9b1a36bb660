package policyfile

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/retry"
)

// TestParseLimiters reads budget and adaptiveThrottling, their defaults
// (gRPC's 10 and 0.1; the SRE book's 2 and 2m) and the round trip through
// Policy.String.
func TestParseLimiters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		budget    retry.BudgetConfig
		throttle  retry.ThrottleConfig
	}{
		{"none", "preset: forgeflare\n", retry.BudgetConfig{}, retry.ThrottleConfig{}},
		{"defaults", "preset: forgeflare\nbudget: {}\nadaptiveThrottling: {}\n",
			retry.BudgetConfig{MaxTokens: 10, TokenRatio: 0.1}, retry.ThrottleConfig{K: 2, Window: 2 * time.Minute}},
		{"given", "preset: forgeflare\nbudget: {maxTokens: 20, tokenRatio: 0.5}\nadaptiveThrottling: {k: 1.5, window: 30s}\n",
			retry.BudgetConfig{MaxTokens: 20, TokenRatio: 0.5}, retry.ThrottleConfig{K: 1.5, Window: 30 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(tc.src), "p.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.budget, p.Budget); diff != "" {
				t.Errorf("Budget mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.throttle, p.Throttling); diff != "" {
				t.Errorf("Throttling mismatch (-want +got):\n%s", diff)
			}
			back, err := Parse([]byte(p.String()), "render.yaml")
			if err != nil {
				t.Fatalf("rendering does not parse: %v\n%s", err, p.String())
			}
			if back.Budget != p.Budget || back.Throttling != p.Throttling {
				t.Errorf("round trip: %+v %+v, want %+v %+v", back.Budget, back.Throttling, p.Budget, p.Throttling)
			}
		})
	}
}

func TestParseLimitersErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, want string }{
		{"unknown budget key", "budget: {maxToken: 10}\n", "p.yaml:1:10: budget.maxToken: unknown field"},
		{"budget range", "budget: {maxTokens: 0}\n", "budget.maxTokens: 0 is out of range"},
		{"ratio range", "budget: {tokenRatio: 1000}\n", "budget.tokenRatio: 1000 is out of range"},
		{"budget scalar", "budget: 10\n", "p.yaml:1:9: budget: must be a mapping"},
		{"unknown throttling key", "adaptiveThrottling: {K: 2}\n", "adaptiveThrottling.K: unknown field"},
		{"k below 1", "adaptiveThrottling: {k: 0.5}\n", "adaptiveThrottling.k: 0.5 is out of range (hint: use a number between 1 and 100)"},
		{"window too short", "adaptiveThrottling: {window: 10ms}\n", "adaptiveThrottling.window: window 10ms is out of range (hint: use a window from 1s to 1h"},
		{"window bad", "adaptiveThrottling: {window: long}\n", `adaptiveThrottling.window: bad duration "long"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "p.yaml")
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *Error", err)
			}
			if full := err.Error() + " (hint: " + pe.Hint() + ")"; !strings.Contains(full, tc.want) {
				t.Errorf("error = %q\nwant it to contain %q", full, tc.want)
			}
		})
	}
}
