package yamldiag

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func TestProblemError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Problem
		want string
	}{
		{"everything", Problem{File: "a.yaml", Line: 3, Column: 5, Field: "x.y", Msg: "bad"}, "a.yaml:3:5: x.y: bad"},
		{"no column", Problem{File: "a.yaml", Line: 3, Field: "x", Msg: "bad"}, "a.yaml:3: x: bad"},
		{"no line: the column is left out too", Problem{File: "a.yaml", Column: 5, Msg: "bad"}, "a.yaml: bad"},
		{"no field", Problem{File: "a.yaml", Line: 1, Column: 1, Msg: "bad"}, "a.yaml:1:1: bad"},
		{"no file: no position either (a flag)", Problem{Line: 2, Column: 1, Field: "f", Msg: "bad"}, "f: bad"},
		{"the hint is not in the text", Problem{File: "a", Msg: "bad", Hint: "do this"}, "a: bad"},
		{"a % in a message is text", Problem{File: "a", Msg: "ratio 5% is above %d"}, "a: ratio 5% is above %d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestListErrorAndHint(t *testing.T) {
	t.Parallel()
	one := &Problem{File: "a", Line: 1, Column: 2, Msg: "m1", Hint: "h1"}
	two := &Problem{File: "a", Line: 4, Column: 1, Field: "f", Msg: "m2", Hint: "h2"}
	bare := &Problem{File: "a", Line: 5, Column: 1, Msg: "m3"}
	tests := []struct {
		name     string
		l        List
		want     string
		wantHint string
	}{
		{"one: alone, its hint for the caller", List{one}, "a:1:2: m1", "h1"},
		{"several: each hint under its problem", List{one, two}, "a:1:2: m1\n  hint: h1\na:4:1: f: m2\n  hint: h2", "all"},
		{"a problem without a hint has no hint line", List{one, bare}, "a:1:2: m1\n  hint: h1\na:5:1: m3", "all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.l.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if got := tt.l.Hint("all"); got != tt.wantHint {
				t.Errorf("Hint() = %q, want %q", got, tt.wantHint)
			}
		})
	}
}

func TestCollector(t *testing.T) {
	t.Parallel()
	c := New("f.yaml")
	if c.List() != nil || c.Len() != 0 {
		t.Fatalf("a new collector has problems: %v", c.List())
	}
	node := func(line, col int) *yaml.Node { return &yaml.Node{Line: line, Column: col} }
	c.Add(node(3, 7), "b", "third", "h")
	c.Addf(node(1, 4), "a", "h%", "ratio %v is above 1 (5%% max)", 2)
	c.Add(nil, "", "whole file", "")
	c.Add(node(3, 2), "c", "second on line 3", "")
	c.AddAt(3, 2, "d", "tie: found later", "")
	var got []string
	for _, p := range c.List() {
		got = append(got, p.Error()+" | "+p.Hint)
	}
	want := []string{
		"f.yaml: whole file | ",
		"f.yaml:1:4: a: ratio 2 is above 1 (5% max) | h%",
		"f.yaml:3:2: c: second on line 3 | ",
		"f.yaml:3:2: d: tie: found later | ",
		"f.yaml:3:7: b: third | h",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List() mismatch (-want +got):\n%s", diff)
	}
	if strings.Contains(c.List().Error(), "%!") {
		t.Errorf("a %% in a message or hint was taken as a verb: %s", c.List())
	}
}

// TestCollectorBounded: a file with a great many problems keeps the first
// ones and counts the rest in one last problem.
func TestCollectorBounded(t *testing.T) {
	t.Parallel()
	c := New("big.yaml")
	c.SetMax(3)
	for i := range 10 {
		c.AddAt(10-i, 1, fmt.Sprintf("k%d", i), "bad", "")
	}
	l := c.List()
	if c.Len() != 10 || len(l) != 4 {
		t.Fatalf("Len() = %d, len(List()) = %d, want 10 and 4", c.Len(), len(l))
	}
	if got, want := l[3].Error(), "big.yaml: 7 more problems not shown"; got != want || l[3].Hint == "" {
		t.Errorf("last problem = %q (hint %q), want %q with a hint", got, l[3].Hint, want)
	}
	if l[0].Line != 8 || l[2].Line != 10 {
		t.Errorf("kept problems not in line order: %v", l)
	}
}

func TestSyntax(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		src      string
		wantLine int
		wantMsg  string
	}{
		{"unclosed list", "a: [\n", 1, "did not find expected node content"},
		{"tab", "a:\n\tb: 1\n", 2, "found character that cannot start any token"},
		{"type error: the first", "a: [1, x]\nb: y\n", 1, "cannot unmarshal !!seq into int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v struct{ A, B int }
			err := yaml.Unmarshal([]byte(tt.src), &v)
			if err == nil {
				t.Fatal("no error")
			}
			line, msg := Syntax(err)
			if line != tt.wantLine || msg != tt.wantMsg {
				t.Errorf("Syntax(%q) = %d, %q; want %d, %q", err, line, msg, tt.wantLine, tt.wantMsg)
			}
		})
	}
	if line, msg := Syntax(errors.New("yaml: control characters are not allowed")); line != 0 || msg != "control characters are not allowed" {
		t.Errorf("no line: %d, %q", line, msg)
	}
}

func TestUnmarshalEveryError(t *testing.T) {
	t.Parallel()
	var v struct{ A, B int }
	err := yaml.Unmarshal([]byte("a: x\nb: y\n"), &v)
	lines, msgs := Unmarshal(err)
	if diff := cmp.Diff([]int{1, 2}, lines); diff != "" {
		t.Errorf("lines mismatch (-want +got):\n%s", diff)
	}
	if len(msgs) != 2 || !strings.Contains(msgs[1], "`y`") {
		t.Errorf("msgs = %q", msgs)
	}
	lines, msgs = Unmarshal(errors.New("yaml: line 4: bad"))
	if diff := cmp.Diff([]int{4}, lines); diff != "" || msgs[0] != "bad" {
		t.Errorf("a syntax error: %v %q", lines, msgs)
	}
}

func TestClosest(t *testing.T) {
	t.Parallel()
	known := []string{"attempts", "expect", "timeScale", "name"}
	for _, tt := range []struct{ in, want string }{
		{"attemps", "attempts"}, {"Expect", "expect"}, {"timescale", "timeScale"},
		{"nmae", "name"}, {"zzzzzzzz", ""}, {"", ""},
	} {
		if got := Closest(tt.in, known); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if Join("", "a") != "a" || Join("a", "b") != "a.b" {
		t.Error("Join")
	}
}

// FuzzLineOf checks that splitting "line N: msg" never panics and gives
// back a message that is a part of its input.
func FuzzLineOf(f *testing.F) {
	for _, s := range []string{"line 3: bad", "line x: bad", "line :", "line -3: x", "line 0: x", "line 99999999999999999999: x", "", "no line"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, msg := lineOf(s)
		if n < 0 || (n == 0 && msg != s) || !strings.Contains(s, msg) {
			t.Fatalf("lineOf(%q) = %d, %q", s, n, msg)
		}
	})
}
