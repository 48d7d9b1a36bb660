package matrix

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/retrylab/retrylab/internal/yamldiag"
)

// Rule is one --fail-on rule: when a change of a cell fails the run.
//
// Grammar (docs/matrix.md): RULES is RULE[,RULE...]; a RULE is
//
//	COLUMN            any change of the cell (retryAfter.seconds)
//	COLUMN=VALUE      the cell changed to VALUE (retryAfter.seconds=no)
//	COLUMN>N, >=, <, <=
//	                  the cell changed and its new number is past N while
//	                  the old one was not (maxRetries>1, backoff.initialMs<500);
//	                  a number that became unknown does not cross
//
// COLUMN is a column key (matrix.ColumnKeys), "version", or "client" (a
// client new in the matrix); a key ending in ".*" names every column under
// it (retried.*).
type Rule struct {
	Text   string
	Column string // without the ".*"
	Prefix bool
	Op     string // "", "=", ">", ">=", "<", "<="
	Value  string
	Num    float64
}

// MaxRules bounds --fail-on.
const MaxRules = 100

// ParseRules reads --fail-on.
func ParseRules(s string) ([]Rule, error) {
	var out []Rule
	parts := strings.Split(s, ",")
	if len(parts) > MaxRules {
		return nil, fmt.Errorf("%d rules, more than %d", len(parts), MaxRules)
	}
	known := append(ColumnKeys(), "version", "client")
	for _, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("an empty rule in %q", s)
		}
		r := Rule{Text: part}
		col := part
		for _, op := range []string{">=", "<=", ">", "<", "="} {
			if i := strings.Index(part, op); i >= 0 {
				col, r.Op, r.Value = strings.TrimSpace(part[:i]), op, strings.TrimSpace(part[i+len(op):])
				break
			}
		}
		if strings.HasSuffix(col, ".*") {
			r.Prefix, col = true, strings.TrimSuffix(col, ".*")
		}
		r.Column = col
		if !r.matchesAny(known) {
			hint := ""
			if k := yamldiag.Closest(col, known); k != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", k)
			}
			return nil, fmt.Errorf("rule %q: unknown column %q%s", part, col, hint)
		}
		switch r.Op {
		case "=":
			if r.Value == "" {
				return nil, fmt.Errorf("rule %q: no value after =", part)
			}
		case ">", ">=", "<", "<=":
			n, err := strconv.ParseFloat(r.Value, 64)
			if err != nil || n != n {
				return nil, fmt.Errorf("rule %q: %q is not a number (ms for the *Ms columns)", part, r.Value)
			}
			r.Num = n
		}
		out = append(out, r)
	}
	return out, nil
}

func (r Rule) matchesAny(keys []string) bool {
	for _, k := range keys {
		if r.matches(k) {
			return true
		}
	}
	return false
}

func (r Rule) matches(column string) bool {
	if r.Prefix {
		return strings.HasPrefix(column, r.Column+".")
	}
	return column == r.Column
}

// Fires reports whether the rule fails the run on change c.
func (r Rule) Fires(c Change) bool {
	if !r.matches(c.Column) {
		return false
	}
	switch r.Op {
	case "":
		return true
	case "=":
		return c.After == r.Value
	}
	if c.AfterNum == nil {
		return false
	}
	past := func(v float64) bool {
		switch r.Op {
		case ">":
			return v > r.Num
		case ">=":
			return v >= r.Num
		case "<":
			return v < r.Num
		}
		return v <= r.Num
	}
	return past(*c.AfterNum) && (c.BeforeNum == nil || !past(*c.BeforeNum))
}

// Violation is a change a rule fails the run on.
type Violation struct {
	Client string
	Rule   string
	Change Change
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: %s: %s → %s (rule %s)", v.Client, v.Change.Column, v.Change.Before, v.Change.After, v.Rule)
}

// Check lists the changes of m (after Diff) that a rule fires on.
func Check(rules []Rule, m *Matrix) []Violation {
	var out []Violation
	for _, e := range m.Clients {
		for _, c := range e.Changes {
			for _, r := range rules {
				if r.Fires(c) {
					out = append(out, Violation{Client: e.Name, Rule: r.Text, Change: c})
					break
				}
			}
		}
	}
	return out
}
