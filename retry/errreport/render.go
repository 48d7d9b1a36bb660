package errreport

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Style is how Report.Render lays a report out. The library never looks at
// the terminal itself: the caller passes the width and whether to colour,
// or asks StyleFor.
type Style struct {
	Width int  // columns; 0 means 80, and less than 40 means 40
	Color bool // ANSI colours
}

// StyleFor is the Style for writing to f: Color only when f is a terminal
// (a character device) and NO_COLOR is unset or empty, Width from COLUMNS
// (80 when unset or not a number). getenv is os.Getenv, or a fake.
func StyleFor(f *os.File, getenv func(string) string) Style {
	st := Style{Width: 80}
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
		st.Width = n
	}
	if f != nil {
		fi, err := f.Stat()
		st.Color = err == nil && fi.Mode()&os.ModeCharDevice != 0 && getenv("NO_COLOR") == ""
	}
	return st
}

func (st Style) width() int {
	switch {
	case st.Width <= 0:
		return 80
	case st.Width < 40:
		return 40
	}
	return st.Width
}

// ANSI sequences, used only with Style.Color.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[1;31m"
	ansiYellow = "\x1b[33m"
)

// reportWriter lays out one report.
type reportWriter struct {
	b     strings.Builder
	width int
	color bool
}

func (w *reportWriter) paint(code, s string) string {
	if !w.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

// Render writes r as seed 001's boxed report (walkthrough 2): a title box,
// then WHAT HAPPENED, REQUIRED ACTIONS (with the command to run or the
// setting to change under each), ROOT CAUSE, STEP (when the caller gave
// one) and RETRY HISTORY, each line at most st.Width columns (one column
// per rune). The title is UNRECOVERABLE ERROR for a failure no retry can
// cure, RETRIES EXHAUSTED otherwise.
func (r *Report) Render(out io.Writer, st Style) error {
	w := &reportWriter{width: st.width(), color: st.Color}
	w.box(r.Title())
	w.section("WHAT HAPPENED")
	w.para(2, r.RootCause.Message, "")
	w.actions(r.Recovery)
	w.rootCause(r)
	w.step(r.Step)
	w.history(r.History)
	_, err := io.WriteString(out, w.b.String())
	return err
}

func (w *reportWriter) box(title string) {
	inner := w.width - 2
	left := (inner - utf8.RuneCountInString(title)) / 2
	right := inner - left - utf8.RuneCountInString(title)
	bar := strings.Repeat("═", inner)
	fmt.Fprintf(&w.b, "╔%s╗\n║%s%s%s║\n╚%s╝\n", bar, strings.Repeat(" ", left), w.paint(ansiRed, title), strings.Repeat(" ", max(right, 0)), bar)
}

func (w *reportWriter) section(name string) {
	fmt.Fprintf(&w.b, "\n▌ %s\n", w.paint(ansiBold, name))
}

// para writes text wrapped under "│ ", the first line after first (already
// that many columns wide, counted in indent) and the rest indented by indent.
func (w *reportWriter) para(indent int, text, first string) {
	lines := wrap(text, w.width-indent)
	if len(lines) == 0 {
		lines = []string{""}
	}
	for i, line := range lines {
		lead := strings.Repeat(" ", indent-2)
		if i == 0 {
			lead = first
		}
		w.b.WriteString(strings.TrimRight("│ "+lead+line, " ") + "\n")
	}
}

// priorityTag is "[HIGH]" padded to the width of "[CRITICAL]", plus a space.
func (w *reportWriter) priorityTag(p string) string {
	tag := "[" + strings.ToUpper(p) + "]"
	pad := strings.Repeat(" ", max(len("[CRITICAL]")-len(tag), 0)+1)
	switch p {
	case PriorityCritical:
		tag = w.paint(ansiRed, tag)
	case PriorityHigh:
		tag = w.paint(ansiYellow, tag)
	}
	return tag + pad
}

func (w *reportWriter) actions(acts []Action) {
	if len(acts) == 0 {
		return
	}
	w.section("REQUIRED ACTIONS")
	for i, a := range acts {
		num := strconv.Itoa(i+1) + ". "
		first := num + w.priorityTag(a.Priority)
		w.para(2+len(num)+len("[CRITICAL] "), a.Text, first)
		sub := strings.Repeat(" ", len(num)) + "└─ "
		subWidth := 2 + utf8.RuneCountInString(sub)
		if a.Command != "" {
			w.para(subWidth, "Run: "+a.Command, sub)
		}
		if a.Setting != "" {
			w.para(subWidth, "Set: "+a.Setting, sub)
		}
	}
}

func (w *reportWriter) rootCause(r *Report) {
	rc := r.RootCause
	w.section("ROOT CAUSE")
	kv := func(k, v string) {
		if v != "" {
			w.para(2+len("Provider:  "), v, fmt.Sprintf("%-11s", k+":"))
		}
	}
	kv("Type", fmt.Sprintf("%s (%s)", rc.Type, rc.Category))
	if rc.Status != 0 {
		kv("HTTP", strconv.Itoa(rc.Status))
	}
	prov := rc.Provider
	if rc.Model != "" {
		prov = strings.TrimPrefix(prov+" "+rc.Model, " ")
	}
	kv("Provider", prov)
	kv("Request", rc.RequestID)
	kv("Stopped", fmt.Sprintf("%s, after %d attempt(s)", r.Reason, r.Attempts))
}

func (w *reportWriter) step(s StepContext) {
	f := s.fields()
	if len(f) == 0 {
		return
	}
	w.section("STEP")
	// The seed's fields first, in its order, then the caller's own, sorted.
	keys := []string{}
	for _, k := range []string{"plan", "entry", "phase", "operation"} {
		if _, ok := f[k]; ok {
			keys = append(keys, k)
		}
	}
	var rest []string
	for k := range f {
		if !slices.Contains(keys, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	keys = append(keys, rest...)
	for _, k := range keys {
		w.para(2+len(k)+2, f[k], k+": ")
	}
}

func (w *reportWriter) history(h []HistoryItem) {
	if len(h) == 0 {
		return
	}
	w.section("RETRY HISTORY")
	for i, a := range h {
		num := strconv.Itoa(a.Attempt) + ". "
		what := string(a.Type)
		if a.Status != 0 {
			what = "HTTP " + strconv.Itoa(a.Status) + " " + what
		}
		next := "gave up"
		switch {
		case a.SwitchedTo != "":
			next = "switched to " + a.SwitchedTo
		case a.DelaySource != "" && a.DelaySource != "none":
			next = fmt.Sprintf("waited %ss (%s)", secondsMs(a.DelayMs), a.DelaySource)
		case i < len(h)-1:
			next = "retried at once"
		}
		if a.ErrorContext {
			next += ", with error context"
		}
		line := fmt.Sprintf("%s %s on %s: %s", a.Time.UTC().Format("15:04:05.000Z"), what, strings.TrimPrefix(a.Provider+"/"+a.Model, "/"), next)
		w.para(2+len(num), line, num)
	}
}

func secondsMs(ms int64) string {
	return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64), "0"), ".")
}

// wrap breaks text into lines of at most width runes at spaces; a word
// longer than width is cut. Runs of white space count as one space.
func wrap(text string, width int) []string {
	width = max(width, 10)
	var lines []string
	var cur []rune
	for _, word := range strings.Fields(text) {
		wr := []rune(word)
		for len(wr) > width {
			if len(cur) > 0 {
				lines, cur = append(lines, string(cur)), nil
			}
			lines, wr = append(lines, string(wr[:width])), wr[width:]
		}
		switch {
		case len(cur) == 0:
			cur = wr
		case len(cur)+1+len(wr) <= width:
			cur = append(append(cur, ' '), wr...)
		default:
			lines, cur = append(lines, string(cur)), wr
		}
	}
	if len(cur) > 0 {
		lines = append(lines, string(cur))
	}
	return lines
}
