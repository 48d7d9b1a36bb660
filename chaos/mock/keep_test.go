package mock

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// TestEnvKeepAttempts: with KeepAttempts 3 the Env holds the first 3 and
// the last 3 to 5 records, counts every attempt in its tally, and logs no
// line per attempt when QuietAttempts.
func TestEnvKeepAttempts(t *testing.T) {
	toxi := startToxi(t)
	e := startEnvWith(t, EnvConfig{Toxi: toxi, KeepAttempts: 3, QuietAttempts: true,
		Scenario: &scenario.Scenario{Name: "keep", Provider: wire.ProviderAnthropic,
			Attempts: []scenario.Fault{{Kind: fault.Status{Status: 529}}, {Kind: fault.Status{Status: 529}}}}})
	for i := range 10 {
		resp, _, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
		if err != nil {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
		if want := map[bool]int{true: 529, false: 200}[i < 2]; resp.StatusCode != want {
			t.Fatalf("attempt %d: status %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	waitTally(t, e, 10)
	var ns []int
	for _, a := range e.Attempts() {
		if a.Ended.IsZero() {
			t.Errorf("attempt %d kept unfinished: %+v", a.N, a)
		}
		ns = append(ns, a.N)
	}
	if want := []int{1, 2, 3, 7, 8, 9, 10}; !slices.Equal(ns, want) {
		t.Errorf("kept attempts %v, want %v", ns, want)
	}
	if got := e.AttemptsSeen(); got != 10 {
		t.Errorf("AttemptsSeen = %d, want 10", got)
	}
	if got := e.Tally(); got[TallyKey{"status", 529}] != 2 || got[TallyKey{"ok", 200}] != 8 || len(got) != 2 {
		t.Errorf("Tally = %v, want 2 status 529 and 8 ok 200", got)
	}
	if strings.Contains(e.log.String(), "attempt 1:") {
		t.Errorf("a line per attempt though QuietAttempts:\n%s", e.log.String())
	}
}

// waitTally waits until n attempts have ended.
func waitTally(t *testing.T, e *testEnv, n int) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		sum := 0
		for _, v := range e.Tally() {
			sum += v
		}
		if sum >= n {
			return
		}
		select {
		case <-e.ended:
		case <-timeout.C:
			t.Fatal("attempts did not end")
		}
	}
}
