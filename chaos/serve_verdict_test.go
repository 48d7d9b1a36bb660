package chaos

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/mock"
)

// TestServeVerdictSummarised: a verdict of many attempts prints their
// counts by fault and status, the first and the last verdictLines/2 and
// one line for the rest; a short one prints every attempt.
func TestServeVerdictSummarised(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		seen, kept int
		lines      int // attempt lines
		hidden     string
	}{
		{seen: 3, kept: 3, lines: 3},
		{seen: verdictLines, kept: verdictLines, lines: verdictLines},
		{seen: 100, kept: 100, lines: verdictLines, hidden: "  … 60 attempt(s) not shown …\n"},
		{seen: 5000, kept: 2 * serveKeep, lines: verdictLines, hidden: "  … 4960 attempt(s) not shown …\n"},
	} {
		t.Run(fmt.Sprint(tc.seen), func(t *testing.T) {
			var as []mock.ServerAttempt
			for i := range tc.kept {
				n := i + 1
				if i >= tc.kept/2 {
					n = tc.seen - tc.kept + i + 1
				}
				a := mock.ServerAttempt{N: n, Fault: "ok", Status: 200, Arrived: t0.Add(time.Duration(n) * time.Second)}
				a.Ended = a.Arrived.Add(time.Millisecond)
				if n == 1 {
					a.Fault, a.Status = "status", 529
				}
				as = append(as, a)
			}
			v := newServeVerdict(as)
			v.Seen, v.Tally = tc.seen, map[mock.TallyKey]int{{Fault: "ok", Status: 200}: tc.seen - 1, {Fault: "status", Status: 529}: 1}
			var b strings.Builder
			if err := v.Write(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			head := fmt.Sprintf("server saw %d attempt(s): %d ok 200, 1 status 529\n", tc.seen, tc.seen-1)
			if !strings.HasPrefix(out, head) {
				t.Errorf("verdict starts %q, want %q", strings.SplitAfter(out, "\n")[0], head)
			}
			if got := strings.Count(out, "  attempt "); got != tc.lines {
				t.Errorf("%d attempt lines, want %d:\n%s", got, tc.lines, out)
			}
			if got := strings.Contains(out, "not shown"); got != (tc.hidden != "") || !strings.Contains(out, tc.hidden) {
				t.Errorf("verdict lacks %q:\n%s", tc.hidden, out)
			}
			if !strings.Contains(out, fmt.Sprintf("attempt %d: ok", tc.seen)) {
				t.Errorf("the last attempt is not shown:\n%s", out)
			}
		})
	}
}
