package scenario

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLimitsLoad checks that limits: decodes into Account, each key
// optional, and that a scenario without it has none.
func TestLimitsLoad(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml string
		want       *Account
	}{
		{"all", "limits: {requestsPerMinute: 50, inputTokensPerMinute: 20000, outputTokensPerMinute: 8000, concurrency: 4}\n",
			&Account{RequestsPerMinute: 50, InputTokensPerMinute: 20000, OutputTokensPerMinute: 8000, Concurrency: 4}},
		{"one", "limits:\n  concurrency: 2\n", &Account{Concurrency: 2}},
		{"at the bounds", "limits: {requestsPerMinute: 1000000, outputTokensPerMinute: 1000000000}\n",
			&Account{RequestsPerMinute: MaxRequestsPerMinute, OutputTokensPerMinute: MaxTokensPerMinute}},
		{"none", "expect: {outcome: success}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := ParseScenario("limits.yaml", []byte("name: limits\n"+tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, sc.Limits); diff != "" {
				t.Errorf("Limits mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLimitsErrors checks the problems of limits: that the golden files of
// TestLoadErrors do not show: a null limits:, the bound of every key.
func TestLimitsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, yaml, want string }{
		{"null", "limits:\n", "limits.yaml:2:8: limits: limits limits nothing"},
		{"requests", "limits: {requestsPerMinute: 1000001}\n", "limits.yaml:2:29: limits.requestsPerMinute: requestsPerMinute is 1000001, above 1000000"},
		{"output", "limits: {outputTokensPerMinute: 1000000001}\n", "limits.yaml:2:33: limits.outputTokensPerMinute: outputTokensPerMinute is 1000000001, above 1000000000"},
		{"concurrency", "limits: {concurrency: 100001}\n", "limits.yaml:2:23: limits.concurrency: concurrency is 100001, above 100000"},
		{"not a number", "limits: {concurrency: four}\n", "limits.yaml:2:23: limits.concurrency: want a whole number, got \"four\""},
		{"a list", "limits: [50]\n", "limits.yaml:2:9: limits: want a mapping, got a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenario("limits.yaml", []byte("name: limits\n"+tc.yaml))
			if err == nil {
				t.Fatal("ParseScenario = nil error")
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error = %q\nwant    %q", got, tc.want)
			}
		})
	}
}
