package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/retrylab/retrylab/chaos"
)

// ChaosMarkdown renders a chaos run as GitHub-flavoured Markdown, e.g. for
// a CI job summary.
func ChaosMarkdown(w io.Writer, s *chaos.Summary) error {
	fmt.Fprintf(w, "## Chaos run: %d passed, %d failed\n\n", s.Passed, s.Failed)
	fmt.Fprintf(w, "Run folder `%s`, seed %d, %dms.\n\n", s.RunDir, s.Seed, s.DurationMs)
	fmt.Fprintln(w, "| scenario | result | outcome | attempts | client waits (policy) | server waits (wall) | time |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range s.Scenarios {
		v := "✅ pass"
		if !r.Passed {
			v = "❌ fail"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %dms |\n", mdEscape(r.Name), v, r.Outcome, r.Attempts,
			msList(r.DelaysMs.Client), msList(r.DelaysMs.Server), r.DurationMs)
	}
	var failed bool
	for _, r := range s.Scenarios {
		fcs := r.FailedChecks()
		if len(fcs) == 0 && r.Error == "" {
			continue
		}
		if !failed {
			fmt.Fprintln(w, "\n### Failed checks")
			failed = true
		}
		fmt.Fprintf(w, "\n**%s** (`%s`)\n\n", mdEscape(r.Name), r.File)
		if r.Error != "" {
			fmt.Fprintf(w, "- error: %s\n", mdEscape(r.Error))
		}
		for _, c := range fcs {
			fmt.Fprintf(w, "- `%s`: want %s, got %s — %s\n", c.Name, mdEscape(c.Want), mdEscape(c.Got), mdEscape(c.Where))
		}
	}
	return nil
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
