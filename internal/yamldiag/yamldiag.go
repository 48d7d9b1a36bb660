// Package yamldiag collects the problems found in a YAML file (a chaos
// scenario, a retry policy, an alerts file) so that one run reports every
// problem at once, each with its file, line, column, field path and a hint
// saying what to do next.
//
// A decoder makes a Collector for its file, calls Add or Addf for each
// problem at the node it is about, and returns Collector.List, which is nil
// when there was none. The text is the same for every kind of file:
//
//	file:line:column: field.path: what is wrong
//	  hint: what to do
//
// with the hint under each problem when there are several; with one problem
// the caller prints its hint on a line of its own (see List.Error).
package yamldiag

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Problem is one problem found in a file. Line and Column are 1-based; 0
// when unknown (a file that cannot be read, a problem with the whole
// document), and then they are left out of the text.
type Problem struct {
	File   string
	Line   int
	Column int
	Field  string // field path, e.g. "attempts[2].retryAfter"; "" for the whole document
	Msg    string
	Hint   string // what to do next; "" when the caller has one for the whole file
}

// Error reads "file:line:column: field: msg"; the position only when known,
// the location only when File is set, the field only when set. The hint is
// not part of it: List.Error and the CLI print it.
func (p *Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(p.Line))
			if p.Column > 0 {
				b.WriteByte(':')
				b.WriteString(strconv.Itoa(p.Column))
			}
		}
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// List is the problems of one or more files, in file and position order.
type List []*Problem

// Error is the one problem's text alone when there is one (its hint is for
// the caller to print once, see Hint); with several, each problem's text
// followed, when it has one, by its hint on an indented "  hint: " line.
func (l List) Error() string {
	if len(l) == 1 {
		return l[0].Error()
	}
	var b strings.Builder
	for i, p := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Error())
		if p.Hint != "" {
			b.WriteString("\n  hint: ")
			b.WriteString(p.Hint)
		}
	}
	return b.String()
}

// Hint is the hint for the line the CLI prints after the error: the one
// problem's own hint, else several (what to do about them all), whose
// hints Error has already printed.
func (l List) Hint(several string) string {
	if len(l) == 1 {
		return l[0].Hint
	}
	return several
}

// DefaultMax is how many problems a Collector keeps by default: a hostile
// file with a million bad keys is reported in bounded memory.
const DefaultMax = 100

// Collector gathers the problems of one file. The zero value is not ready:
// use New.
type Collector struct {
	file string
	max  int
	list List
	more int // problems past max, counted only
}

// New returns a Collector for file that keeps up to DefaultMax problems.
func New(file string) *Collector { return &Collector{file: file, max: DefaultMax} }

// SetMax changes how many problems c keeps (at least 1); the others are
// counted and reported as one last problem.
func (c *Collector) SetMax(n int) { c.max = max(n, 1) }

// Add records a problem at node n (its line and column; none when n is nil)
// in the field path field, with msg as it is and hint as what to do next.
func (c *Collector) Add(n *yaml.Node, field, msg, hint string) {
	line, col := 0, 0
	if n != nil {
		line, col = n.Line, n.Column
	}
	c.AddAt(line, col, field, msg, hint)
}

// Addf is Add with msg formatted from format and args; the hint is its own
// parameter, so a message may hold any text, a % included.
func (c *Collector) Addf(n *yaml.Node, field, hint, format string, args ...any) {
	c.Add(n, field, fmt.Sprintf(format, args...), hint)
}

// AddAt records a problem at a line and column (0 when unknown).
func (c *Collector) AddAt(line, col int, field, msg, hint string) {
	c.addProblem(&Problem{File: c.file, Line: line, Column: col, Field: field, Msg: msg, Hint: hint})
}

// addProblem records p, or counts it past the maximum.
func (c *Collector) addProblem(p *Problem) {
	if len(c.list) >= c.max {
		c.more++
		return
	}
	c.list = append(c.list, p)
}

// Len is how many problems c has seen, the ones past its maximum included.
func (c *Collector) Len() int { return len(c.list) + c.more }

// List returns the problems in position order (problems on one line in
// column order, problems without a position first, ties in the order they
// were found), then a last one counting those past the maximum; nil if
// there is none.
func (c *Collector) List() List {
	if c.Len() == 0 {
		return nil
	}
	out := slices.Clone(c.list)
	slices.SortStableFunc(out, func(a, b *Problem) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	if c.more > 0 {
		out = append(out, &Problem{File: c.file, Msg: fmt.Sprintf("%d more problems not shown", c.more),
			Hint: "fix the problems above and check the file again"})
	}
	return out
}

// Syntax turns an error of yaml.Unmarshal or yaml.Decoder.Decode ("yaml:
// line 3: did not find expected key") into its line and message without
// the "yaml: " and "line N: " prefixes; line is 0 when the error names none.
// Of "yaml: unmarshal errors:" it returns the first.
func Syntax(err error) (line int, msg string) {
	msg = strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
	msg = strings.TrimSpace(strings.TrimPrefix(msg, "yaml: "))
	if i := strings.IndexByte(msg, '\n'); i > 0 {
		msg = msg[:i]
	}
	return lineOf(msg)
}

// Unmarshal returns each error of a *yaml.TypeError as a line and a
// message, as Syntax does for one; of any other error, Syntax's one.
func Unmarshal(err error) (lines []int, msgs []string) {
	te, ok := err.(*yaml.TypeError)
	if !ok {
		l, m := Syntax(err)
		return []int{l}, []string{m}
	}
	for _, e := range te.Errors {
		l, m := lineOf(strings.TrimSpace(e))
		lines = append(lines, l)
		msgs = append(msgs, m)
	}
	return lines, msgs
}

// lineOf splits "line N: msg" into N and msg; else 0 and s.
func lineOf(s string) (int, string) {
	rest, ok := strings.CutPrefix(s, "line ")
	if !ok {
		return 0, s
	}
	i := strings.IndexByte(rest, ':')
	if i <= 0 {
		return 0, s
	}
	n, err := strconv.Atoi(rest[:i])
	if err != nil || n < 1 {
		return 0, s
	}
	return n, strings.TrimSpace(rest[i+1:])
}

// Join appends key to the field path path with a dot.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Closest returns the word of known nearest to s when it is near enough to
// be a typo of it (an edit distance of at most max(2, len(s)/3), compared
// without case), else "".
func Closest(s string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := levenshtein(strings.ToLower(s), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD <= max(2, len(s)/3) {
		return best
	}
	return ""
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Fields maps the keys of the mapping n to their values (the last one of a
// key given twice); empty when n is nil or not a mapping.
func Fields(n *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	if n == nil || n.Kind != yaml.MappingNode {
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}

// KindName says what n is, for messages: "a mapping", "a list", "nothing"
// or the scalar quoted.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}
