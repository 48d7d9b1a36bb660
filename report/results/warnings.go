package results

import (
	"fmt"
	"io"
	"strings"

	"github.com/retrylab/retrylab/chaos"
)

// A check can pass with a warning (verify.Check.Warning): the scenario's own
// expect.tolerance is so wide that a wrong wait would pass too. The verdict
// is the author's to choose, so it stays a pass, but the renderers show it
// where a pass would otherwise say nothing.

// warned reports whether a passing scenario has a check that passed with a
// warning.
func warned(r chaos.Result) bool { return r.Passed && len(r.WarningChecks()) > 0 }

// tableWarnings writes the warnings of a passing scenario's checks.
func tableWarnings(w io.Writer, r chaos.Result) {
	if !r.Passed {
		return
	}
	for _, c := range r.WarningChecks() {
		fmt.Fprintf(w, "\n%s: check %s passed with a warning\n  want:  %s\n  got:   %s\n  %s\n", r.Name, c.Name, c.Want, c.Got, c.Hint)
	}
}

// markdownWarnings writes a section listing the checks that passed with a
// warning, if any.
func markdownWarnings(w io.Writer, s *chaos.Summary) {
	var b strings.Builder
	for _, r := range s.Scenarios {
		if !warned(r) {
			continue
		}
		for _, c := range r.WarningChecks() {
			fmt.Fprintf(&b, "- **%s** (%s) `%s`: want %s, got %s\n  - ⚠️ %s\n", mdEscape(r.Name), mdEscape(r.File), c.Name,
				mdEscape(c.Want), mdEscape(c.Got), mdEscape(c.Hint))
		}
	}
	if b.Len() > 0 {
		fmt.Fprintf(w, "\n### Passed with a warning\n\n%s", b.String())
	}
}

// countWarned counts the passing scenarios with a warning.
func countWarned(s *chaos.Summary) int {
	n := 0
	for _, r := range s.Scenarios {
		if warned(r) {
			n++
		}
	}
	return n
}
