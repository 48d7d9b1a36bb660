package matrix

import (
	"fmt"
	"io"
	"path"
	"strings"
)

// confMark is a confidence's mark in the table.
func confMark(level string) string {
	switch level {
	case "high":
		return "●"
	case "medium":
		return "◐"
	case "low":
		return "○"
	}
	return ""
}

// evidenceLink is the run folder of a cell's first probe that has one,
// relative to the matrix's folder; "" when none.
func (e *Entry) evidenceLink(c Cell) string {
	for _, p := range c.Probes {
		if dir, ok := e.Evidence[p]; ok && safeRel(dir) {
			return path.Join(dir, "result.json")
		}
	}
	return ""
}

// safeRel reports whether an evidence path is one a page may link to: a
// relative path inside the matrix's folder, of plain characters (a
// matrix.json read back is hostile input).
func safeRel(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || len(p) > 1000 {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return false
		}
	}
	for _, r := range p {
		ok := r == '/' || r == '.' || r == '_' || r == '-' || r == '+' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// Legend is what the marks and states mean (both pages say it).
const Legend = "Each cell links to the result.json of the probe run it comes from (server.jsonl beside it is the mock's journal); " +
	"● high, ◐ medium, ○ low confidence. \"unknown\": the probe ran and could not tell (the evidence says why); " +
	"\"not probed\": the probe's battery has no such experiment; \"n/a\": the wire format has no such failure. " +
	"Δ marks a cell changed since the earlier matrix."

// Markdown writes matrix.md: the table, then each client's evidence.
func Markdown(w io.Writer, m *Matrix) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Retry matrix\n\n%d client(s), probed by retrylab %s. %s\n\n", len(m.Clients), mdEsc(m.Retrylab), Legend)
	if m.Against != "" {
		fmt.Fprintf(&b, "Changes are against %s.\n\n", mdEsc(m.Against))
	}
	b.WriteString("| client | version | provider |")
	for _, c := range Columns {
		fmt.Fprintf(&b, " %s |", c.Title)
	}
	b.WriteString("\n|---|---|---|")
	b.WriteString(strings.Repeat("---|", len(Columns)))
	b.WriteString("\n")
	for i := range m.Clients {
		e := &m.Clients[i]
		ver := mdEsc(e.Version)
		if e.Changed("version") || e.Changed("client") {
			ver = "Δ " + ver
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s |", mdEsc(e.Name), anchor(e.Name), ver, mdEsc(e.Provider))
		for _, c := range e.Cells() {
			text := mdEsc(c.Text)
			if l := e.evidenceLink(c); l != "" {
				text = fmt.Sprintf("[%s](%s)", text, l)
			}
			if m := confMark(c.Confidence); m != "" {
				text += " " + m
			}
			if e.Changed(c.Key) {
				text = "Δ " + text
			}
			fmt.Fprintf(&b, " %s |", text)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Columns\n\n")
	for _, c := range Columns {
		fmt.Fprintf(&b, "- **%s** (`%s`): %s\n", c.Title, c.Key, c.Doc)
	}
	for i := range m.Clients {
		e := &m.Clients[i]
		fmt.Fprintf(&b, "\n## %s\n\n", mdEsc(e.Name))
		fmt.Fprintf(&b, "<a id=\"%s\"></a>%s %s, %s", anchor(e.Name), mdEsc(e.Name), mdEsc(e.Version), mdEsc(e.Provider))
		if e.WallMs > 0 {
			fmt.Fprintf(&b, ", probed in %.0fs%s", float64(e.WallMs)/1000, mdEsc(e.floorNote()))
		}
		b.WriteString(".\n\n")
		if e.Error != "" {
			fmt.Fprintf(&b, "Not probed: %s\n", mdEsc(e.Error))
			continue
		}
		if len(e.Changes) > 0 {
			b.WriteString("Changes:\n\n")
			for _, c := range e.Changes {
				fmt.Fprintf(&b, "- Δ `%s`: %s → %s\n", c.Column, mdEsc(c.Before), mdEsc(c.After))
			}
			b.WriteString("\n")
		}
		cols := Columns
		for j, c := range e.Cells() {
			if c.State == NotProbed || c.State == NA {
				continue
			}
			conf := c.Confidence
			if conf == "" {
				conf = c.State
			}
			fmt.Fprintf(&b, "- **%s**: %s (%s)", cols[j].Title, mdEsc(c.Text), conf)
			if c.Basis != "" {
				fmt.Fprintf(&b, ": %s", mdEsc(c.Basis))
			}
			var links []string
			for _, p := range c.Probes {
				if dir, ok := e.Evidence[p]; ok && safeRel(dir) {
					links = append(links, fmt.Sprintf("[%s](%s)", p, dir))
				}
			}
			if len(links) > 0 {
				fmt.Fprintf(&b, " — %s", strings.Join(links, ", "))
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEsc makes text safe in a Markdown table cell: no pipe, no newline, no
// HTML.
func mdEsc(s string) string {
	r := strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "[", "\\[", "]", "\\]", "`", "'")
	return r.Replace(s)
}

// anchor is a client's anchor id: its name (nameRE keeps it safe).
func anchor(name string) string { return "client-" + strings.ToLower(name) }
