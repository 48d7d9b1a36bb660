package results

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/verify"
)

// A run's findings (chaos.Result.Findings) are what it shows of its
// client without being asked: the renderers list them after the table,
// with their evidence. They are not failures: only expect.findings,
// through its findings check, makes one fail.

// findingLine is one finding as the table and system-out say it.
func findingLine(f verify.Finding) string {
	return fmt.Sprintf("%s (%s): %s", f.Code, attemptsWord(f.Attempts), f.Evidence)
}

func attemptsWord(as []int) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = fmt.Sprint(a)
	}
	if len(as) == 1 {
		return "attempt " + s[0]
	}
	return "attempts " + strings.Join(s, ", ")
}

// tableFindings writes the findings of every scenario, one line each.
func tableFindings(w io.Writer, s *chaos.Summary) {
	first := true
	for _, r := range s.Scenarios {
		for _, f := range r.Findings {
			if first {
				fmt.Fprintln(w, "\nFindings (not checks: expect.findings gates on them):")
				first = false
			}
			fmt.Fprintf(w, "  %s: %s\n", r.Name, findingLine(f))
		}
	}
}

// markdownFindings writes a Findings section, if any scenario has one.
// Evidence may quote a client's output: it is HTML-escaped, so that no
// markup a client printed renders.
func markdownFindings(w io.Writer, s *chaos.Summary) {
	var b strings.Builder
	for _, r := range s.Scenarios {
		for _, f := range r.Findings {
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", mdEscape(html.EscapeString(r.Name)), f.Code, attemptsWord(f.Attempts), mdEscape(html.EscapeString(f.Evidence)))
		}
	}
	if b.Len() > 0 {
		fmt.Fprintf(w, "\n### Findings\n\nWhat the runs show of their clients without being asked (docs/chaos.md, Findings); not failures unless expect.findings says so.\n\n| scenario | finding | attempts | evidence |\n|---|---|---|---|\n%s", b.String())
	}
}

// junitFindings adds a scenario's findings to its suite: a property per
// finding (finding.N: the code) and the lines in system-out.
func junitFindings(su *junitSuite, r chaos.Result) {
	if len(r.Findings) == 0 {
		return
	}
	var lines []string
	for i, f := range r.Findings {
		su.Properties = append(su.Properties, junitProperty{fmt.Sprintf("finding.%d", i+1), f.Code})
		lines = append(lines, "finding "+findingLine(f))
	}
	out := strings.Join(lines, "\n") + "\n"
	if su.SystemOut != "" {
		out += "\n" + su.SystemOut
	}
	su.SystemOut = out
}
