package errreport

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// Bounds of FromEvent: what a report read from a trace keeps. A
// person reads it; a program that wrote more than this is not telling a
// person anything more.
const (
	maxEventMessage = 1000 // runes of the root cause's message
	maxEventText    = 300  // runes of an action's text, command or setting, or a history message
	maxEventLabel   = 120  // runes of any other string (type, provider, model, id, step value...)
	maxEventActions = 10
	maxEventHistory = 20 // the last ones are kept
	maxEventTags    = 8
	maxEventStep    = 16
)

// FromEvent is the Report an ErrorReport trace event describes (the
// inverse of Report.Event), for Render. The event may come from any
// program's trace, so nothing in it is trusted: every string is cut to a
// bound, made valid UTF-8, stripped of control and format characters (a
// line break or tab becomes a space) and of anything that looks like an
// API key (provider.Redact); actions, history, tags and step fields are
// bounded in number (the last attempts of a long history are kept). A
// report without tags is unrecoverable when its category is non-retryable,
// as the retry core tags it.
func FromEvent(ev trace.ErrorReport) *Report {
	label := func(s string) string { return cleanEventString(s, maxEventLabel) }
	text := func(s string) string { return cleanEventString(s, maxEventText) }
	r := &Report{ID: label(ev.ID), Reason: label(ev.Reason), Attempts: ev.Attempts,
		RootCause: RootCause{Category: label(ev.Category), Type: label(ev.FailureType), Status: ev.Status,
			Provider: label(ev.Provider), Model: label(ev.Model), Message: cleanEventString(ev.Message, maxEventMessage),
			RequestID: label(ev.RequestID)},
		Step: stepFromEvent(ev.Step)}
	for _, a := range ev.Actions[:min(len(ev.Actions), maxEventActions)] {
		r.Recovery = append(r.Recovery, Action{Priority: label(a.Priority), Text: text(a.Text),
			Command: text(a.Command), Setting: text(a.Setting)})
	}
	for _, h := range ev.History[max(len(ev.History)-maxEventHistory, 0):] {
		r.History = append(r.History, HistoryItem{Attempt: h.Attempt, Time: h.Time, Provider: label(h.Provider),
			Model: label(h.Model), Type: label(h.FailureType), Status: h.Status, Message: text(h.Message),
			DelayMs: h.DelayMs, DelaySource: label(h.DelaySource), SwitchedTo: label(h.SwitchedTo), ErrorContext: h.ErrorContext})
	}
	for _, t := range ev.Tags[:min(len(ev.Tags), maxEventTags)] {
		r.Tags = append(r.Tags, label(t))
	}
	if len(r.Tags) == 0 && r.RootCause.Category == categoryNonRetryable {
		r.Tags = []string{TagUnrecoverable}
	}
	if n := len(r.History); n > 0 {
		r.Time = r.History[n-1].Time
	}
	return r
}

// stepFromEvent is the StepContext of an event's step fields, bounded.
func stepFromEvent(m map[string]string) StepContext {
	var s StepContext
	n := 0
	// The seed's fields first, so that bounding keeps them.
	for _, k := range []string{"plan", "entry", "phase", "operation"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		n++
		v = cleanEventString(v, maxEventLabel)
		switch k {
		case "plan":
			s.Plan = v
		case "entry":
			s.Entry = v
		case "phase":
			s.Phase = v
		case "operation":
			s.Operation = v
		}
	}
	// The rest in key order, so that which are kept does not vary.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "plan", "entry", "phase", "operation":
			continue
		}
		if n >= maxEventStep {
			break
		}
		ck := cleanEventString(k, maxEventLabel)
		if ck == "" {
			continue
		}
		if s.Fields == nil {
			s.Fields = map[string]string{}
		}
		s.Fields[ck] = cleanEventString(m[k], maxEventLabel)
		n++
	}
	return s
}

// cleanEventString is s made safe to show: valid UTF-8, control and format
// characters dropped (white space among them becomes a space), keys
// redacted, at most limit runes (cut with "…").
func cleanEventString(s string, limit int) string {
	// A huge value is cut first, so that it costs little, but far enough
	// out (4 bytes a rune, and 256 more) that a key starting within the
	// limit is whole when it is redacted: the final cut, after the
	// redaction, never leaves part of a key the patterns could not see.
	if len(s) > 4*limit+256 {
		s = s[:4*limit+256]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == '\u2028' || r == '\u2029' || r == '\u0085':
			b.WriteByte(' ')
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
		default:
			b.WriteRune(r)
		}
	}
	s = provider.Redact(b.String())
	if utf8.RuneCountInString(s) > limit {
		s = string([]rune(s)[:limit-1]) + "…"
	}
	return s
}

// Title is the title of r's box: UNRECOVERABLE ERROR for a failure no
// retry can cure, RETRIES EXHAUSTED otherwise.
func (r *Report) Title() string {
	if r.Unrecoverable() {
		return "UNRECOVERABLE ERROR"
	}
	return "RETRIES EXHAUSTED"
}

// Line is r in one line, for a log or a table: its title, failure type,
// HTTP status, why retrying stopped and the first required action, e.g.
// "UNRECOVERABLE ERROR: quota_exhausted (HTTP 429), non-retryable after 1
// attempt(s); first: Add credits to your account".
func (r *Report) Line() string {
	line := r.Title() + ": " + string(r.RootCause.Type)
	if r.RootCause.Status != 0 {
		line += " (HTTP " + strconv.Itoa(r.RootCause.Status) + ")"
	}
	line += fmt.Sprintf(", %s after %d attempt(s)", r.Reason, r.Attempts)
	if len(r.Recovery) > 0 {
		line += "; first: " + r.Recovery[0].Text
	}
	return line
}
