package results

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/report"
)

// A scenario's outage (chaos.Result.Outage) is shown as it was run: its
// seed, a line per phase (how long, the mix) and what each attempt drew
// (the phase of its moment, the mix entry, the fault), all in policy time
// from the first attempt's arrival. The table says it compactly, Markdown
// in full, JUnit as properties (the HTML page in full, report/outage.go).

// drawShort is one draw as the table says it: "#2 529 @2.043s p1".
func drawShort(d chaos.OutageDraw) string {
	p := "after"
	if d.Phase > 0 {
		p = fmt.Sprintf("p%d", d.Phase)
	}
	return fmt.Sprintf("#%d %s @%s %s", d.Attempt, d.Fault, report.PolicyMs(d.AtMs), p)
}

// tableOutages writes each scenario's outage: its seed and phases, then
// its draws, each wrapped at width (0: not wrapped).
func tableOutages(w io.Writer, s *chaos.Summary, width int) {
	first := true
	for _, r := range s.Scenarios {
		o := r.Outage
		if o == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nOutages (policy time from the first attempt; #attempt fault @time phase):")
			first = false
		}
		phases := make([]string, 0, len(o.Phases)+1)
		for i, p := range o.Phases {
			phases = append(phases, fmt.Sprintf("phase %d for %s: %s", i+1, report.PolicyMs(p.ForMs), report.OutageMix(p)))
		}
		wrapItems(w, fmt.Sprintf("  %s: seed %d;", r.Name, o.Seed), "   ", append(phases, "then ok"), ";", width)
		if len(o.Draws) == 0 {
			fmt.Fprintln(w, "    drew: nothing (no attempt reached the outage)")
			continue
		}
		draws := make([]string, len(o.Draws))
		for i, d := range o.Draws {
			draws[i] = drawShort(d)
		}
		wrapItems(w, "    drew:", "        ", draws, ",", width)
	}
}

// wrapItems writes head and the items, each after a space and all but the
// last followed by sep, starting a line with indent where the next item
// would pass width (0: one line). An item longer than a line has one.
func wrapItems(w io.Writer, head, indent string, items []string, sep string, width int) {
	line, fresh := head, true
	for i, it := range items {
		it = " " + it
		if i < len(items)-1 {
			it += sep
		}
		if width > 0 && !fresh && len(line)+len(it) > width {
			fmt.Fprintln(w, line)
			line = indent
		}
		line += it
		fresh = false
	}
	fmt.Fprintln(w, line)
}

// markdownOutages writes an Outages section, if any scenario has one: per
// scenario, a table of its phases and one of its draws. Fault names come
// from the scenario file: they are HTML-escaped as evidence is.
func markdownOutages(w io.Writer, s *chaos.Summary) {
	var b strings.Builder
	for _, r := range s.Scenarios {
		o := r.Outage
		if o == nil {
			continue
		}
		esc := func(s string) string { return mdEscape(html.EscapeString(s)) }
		fmt.Fprintf(&b, "\n**%s**: seed %d.\n\n| phase | for | mix (weight × fault) |\n|---|---|---|\n", esc(r.Name), o.Seed)
		for i, p := range o.Phases {
			m := make([]string, len(p.Mix))
			for j, e := range p.Mix {
				m[j] = fmt.Sprintf("%d × %s", e.Weight, esc(e.Fault))
			}
			fmt.Fprintf(&b, "| %d | %s | %s |\n", i+1, report.PolicyMs(p.ForMs), strings.Join(m, ", "))
		}
		b.WriteString("| after | | ok |\n")
		if len(o.Draws) == 0 {
			b.WriteString("\nNo attempt reached the outage.\n")
			continue
		}
		b.WriteString("\n| attempt | at | phase | mix entry | fault |\n|---|---|---|---|---|\n")
		for _, d := range o.Draws {
			entry := "-"
			if d.Entry > 0 {
				entry = fmt.Sprint(d.Entry)
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", d.Attempt, report.PolicyMs(d.AtMs), report.OutagePhaseName(d), entry, esc(d.Fault))
		}
	}
	if b.Len() > 0 {
		fmt.Fprintf(w, "\n### Outages\n\nEach outage as it was run, in policy time from the first attempt's arrival: its phases, then what each attempt drew (docs/chaos.md, Outages).\n%s", b.String())
	}
}

// junitOutage adds a scenario's outage to its suite's properties:
// outage.seed, outage.phase.N ("for 20s: 6×529, 3×ok") and outage.draw.N
// for the N-th draw ("attempt 2 at 2.043s: phase 1, entry 1: 529").
func junitOutage(su *junitSuite, r chaos.Result) {
	o := r.Outage
	if o == nil {
		return
	}
	su.Properties = append(su.Properties, junitProperty{"outage.seed", fmt.Sprint(o.Seed)})
	for i, p := range o.Phases {
		su.Properties = append(su.Properties, junitProperty{fmt.Sprintf("outage.phase.%d", i+1), fmt.Sprintf("for %s: %s", report.PolicyMs(p.ForMs), report.OutageMix(p))})
	}
	for i, d := range o.Draws {
		where := "after the last phase"
		if d.Phase > 0 {
			where = fmt.Sprintf("phase %d, entry %d", d.Phase, d.Entry)
		}
		su.Properties = append(su.Properties, junitProperty{fmt.Sprintf("outage.draw.%d", i+1),
			fmt.Sprintf("attempt %d at %s: %s: %s", d.Attempt, report.PolicyMs(d.AtMs), where, d.Fault)})
	}
}
