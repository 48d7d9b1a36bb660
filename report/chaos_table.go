package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"

	"github.com/retrylab/retrylab/chaos"
)

// ChaosTable renders a chaos run for people: one row per scenario, then the
// failed checks with want, got and where.
func ChaosTable(w io.Writer, s *chaos.Summary) error {
	t := tablewriter.NewWriter(w)
	t.Header("scenario", "result", "outcome", "attempts", "client waits", "server waits", "time")
	for _, r := range s.Scenarios {
		verdict := "PASS"
		if !r.Passed {
			verdict = "FAIL"
		}
		if err := t.Append(r.Name, verdict, r.Outcome, fmt.Sprint(r.Attempts),
			msList(r.DelaysMs.Client), msList(r.DelaysMs.Server), fmt.Sprintf("%dms", r.DurationMs)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, r := range s.Scenarios {
		if r.Error != "" {
			fmt.Fprintf(w, "\n%s: error: %s\n", r.Name, r.Error)
		}
		for _, c := range r.FailedChecks() {
			fmt.Fprintf(w, "\n%s: check %s failed\n  want:  %s\n  got:   %s\n  where: %s\n", r.Name, c.Name, c.Want, c.Got, c.Where)
		}
	}
	fmt.Fprintf(w, "\n%d passed, %d failed in %dms (seed %d, run folder %s)\n", s.Passed, s.Failed, s.DurationMs, s.Seed, s.RunDir)
	return nil
}

func msList(ms []int64) string {
	if len(ms) == 0 {
		return "-"
	}
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = fmt.Sprintf("%dms", m)
	}
	return strings.Join(s, " ")
}
