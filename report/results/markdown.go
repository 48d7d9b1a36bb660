package results

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/retrylab/retrylab/chaos"
)

// Markdown renders a chaos run as GitHub-flavoured Markdown, e.g. for
// a CI job summary.
func Markdown(w io.Writer, s *chaos.Summary) error {
	fmt.Fprintf(w, "## Chaos run: %s\n\n", tally(s))
	fmt.Fprintf(w, "Run folder `%s`, seed %d, %dms.\n\n", s.RunDir, s.Seed, s.DurationMs)
	fmt.Fprintln(w, "| scenario | result | outcome | attempts | client waits | server waits | time |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	groups := chaos.SkipGroups(s.Scenarios)
	inGroup := map[string]bool{} // skipped scenarios said by their group
	for _, row := range scenarioRows(s, groups) {
		if g := row.group; g != nil {
			fmt.Fprintf(w, "| (%d scenarios) | ⏭️ skipped |  |  | - | - |  |\n", len(g.Results))
			for _, r := range g.Results {
				inGroup[r.Name] = true
			}
			continue
		}
		r := row.r
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %dms |\n", mdEscape(r.Name), markdownVerdict(r), r.Outcome, r.Attempts,
			msList(r.DelaysMs.Client), msList(serverPolicyMs(r)), r.DurationMs)
	}
	if note := scaleNote(s, 0); note != nil {
		fmt.Fprintf(w, "\n%s\n", mdEscape(strings.TrimSpace(note[1])))
		for _, l := range note[2:] {
			fmt.Fprintf(w, "- %s\n", mdEscape(strings.TrimSpace(l)))
		}
	}
	markdownWarnings(w, s)
	markdownOutages(w, s)
	markdownFindings(w, s)
	markdownFleets(w, s)
	var failed bool
	for _, r := range s.Scenarios {
		fcs := r.NotPassedChecks()
		if len(fcs) == 0 && r.Error == "" && (r.SkipReason == "" || inGroup[r.Name]) && r.Interrupted == "" {
			continue
		}
		if !failed {
			fmt.Fprintln(w, "\n### Checks that did not pass")
			failed = true
		}
		// Collapsible on GitHub; open, since these are what one came for.
		// The blank line after <summary> lets Markdown render inside.
		fmt.Fprintf(w, "\n<details open><summary>%s <b>%s</b> (%s)</summary>\n\n", detailsIcon(r), html.EscapeString(visibleLine(r.Name)), html.EscapeString(visibleLine(r.File)))
		if r.Error != "" {
			fmt.Fprintf(w, "- error: %s\n", mdEscape(r.Error))
		}
		if r.SkipReason != "" {
			fmt.Fprintf(w, "- skipped: %s\n", mdEscape(r.SkipReason))
		}
		if r.Interrupted != "" {
			fmt.Fprintf(w, "- interrupted: %s\n", mdEscape(r.Interrupted))
		}
		if r.PassedOnRerun {
			fmt.Fprintf(w, "- passed on run %d; run 1 had:\n", len(r.Reruns)+1)
		}
		for _, c := range fcs {
			fmt.Fprintf(w, "- `%s` %s: want %s, got %s — %s\n", c.Name, stateWord(c.State), mdEscape(c.Want), mdEscape(c.Got), mdEscape(c.Where))
			if c.Hint != "" {
				fmt.Fprintf(w, "  - hint: %s\n", mdEscape(c.Hint))
			}
		}
		for _, rr := range r.Reruns {
			fmt.Fprintf(w, "- run %d: %s%s\n", rr.Run, rr.Verdict, mdEscape(checkNames(rr.Checks)))
		}
		fmt.Fprintln(w, "\n</details>")
	}
	skipDetails(w, groups)
	markdownReports(w, s)
	return nil
}

// markdownVerdict is a scenario's result in the Markdown table.
func markdownVerdict(r chaos.Result) string {
	switch {
	case r.Verdict == chaos.VerdictSkipped:
		return "⏭️ skipped"
	case r.Verdict == chaos.VerdictInterrupted:
		return "⏹️ INTERRUPTED"
	case r.Verdict == chaos.VerdictError:
		return "⚠️ ERROR"
	case r.PassedOnRerun:
		return fmt.Sprintf("✅ pass (run %d)", len(r.Reruns)+1)
	case r.Verdict == chaos.VerdictInconclusive:
		return "❔ inconclusive"
	case !r.Passed:
		return "❌ fail"
	case warned(r):
		return "✅ pass ⚠️ warning"
	}
	return "✅ pass"
}

// skipDetails says each group of several skipped scenarios once: what is
// missing, what to run, and the scenarios' names, folded.
func skipDetails(w io.Writer, groups []chaos.SkipGroup) {
	heading := false
	for _, g := range groups {
		if len(g.Results) < 2 {
			continue
		}
		if !heading {
			fmt.Fprintln(w, "\n### Skipped")
			heading = true
		}
		fmt.Fprintf(w, "\n<details><summary>⏭️ <b>%s</b></summary>\n\n", html.EscapeString(visibleLine(g.Line())))
		if g.Hint != "" {
			fmt.Fprintf(w, "- to run them: `%s`\n", strings.ReplaceAll(visibleLine(g.Hint), "`", "'"))
		}
		names := make([]string, len(g.Results))
		for i, r := range g.Results {
			names[i] = mdEscape(r.Name)
		}
		fmt.Fprintf(w, "- scenarios: %s\n", strings.Join(names, ", "))
		fmt.Fprintln(w, "\n</details>")
	}
}

// detailsIcon is the icon and word of a scenario whose checks are listed.
func detailsIcon(r chaos.Result) string {
	switch {
	case r.Verdict == chaos.VerdictSkipped:
		return "⏭️ skipped:"
	case r.Verdict == chaos.VerdictInterrupted:
		return "⏹️ interrupted:"
	case r.Verdict == chaos.VerdictError:
		return "⚠️ error:"
	case r.PassedOnRerun:
		return "✅ passed on rerun:"
	case r.Verdict == chaos.VerdictInconclusive:
		return "❔ inconclusive:"
	case !r.Passed:
		return "❌ failed:"
	}
	return "✅ passed:"
}

// visibleLine is s on one line.
func visibleLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
