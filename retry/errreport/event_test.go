package errreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/retrylab/retrylab/trace"
)

// TestReportFromEventHostile: an ErrorReport written by a program nobody
// here wrote is shown safely: no control or format character reaches the
// text (a terminal escape, a carriage return that rewrites the line, a
// bidirectional override), no key, no string or list past its bound, and
// Render keeps every line within its width.
func TestReportFromEventHostile(t *testing.T) {
	t.Parallel()
	esc := "\x1b[2J\x1b]0;owned\x07\r\u202eevil\u200b"
	long := strings.Repeat("word ", 1<<18) // 1.25 MB
	ev := trace.ErrorReport{ID: "id" + esc, Category: "non-retryable" + esc, FailureType: "quota" + esc,
		Status: 429, Provider: "p" + esc, Model: strings.Repeat("m", 10000), Message: "key sk-ant-api03-abcdefghijklmnop " + esc + long,
		RequestID: "\xff\xfe", Reason: "r\nr", Attempts: 3, Tags: make([]string, 1000),
		Step: map[string]string{"plan": esc, "x\x1b": "y\x1b"}}
	for i := range 1000 {
		ev.Actions = append(ev.Actions, trace.ReportAction{Priority: "critical", Text: "do" + esc, Command: long, Setting: esc})
		ev.History = append(ev.History, trace.ReportAttempt{Attempt: i + 1, FailureType: "t" + esc, Message: long})
		ev.Step["k"+strings.Repeat("z", i)] = "v"
	}
	rep := FromEvent(ev)
	if len(rep.Recovery) != maxEventActions || len(rep.History) != maxEventHistory || len(rep.Tags) != maxEventTags ||
		len(rep.Step.fields()) > maxEventStep {
		t.Errorf("bounds: %d actions, %d history, %d tags, %d step fields", len(rep.Recovery), len(rep.History), len(rep.Tags), len(rep.Step.fields()))
	}
	if rep.History[len(rep.History)-1].Attempt != 1000 {
		t.Errorf("history kept %d last, want the last attempts (1000)", rep.History[len(rep.History)-1].Attempt)
	}
	if rep.Unrecoverable() {
		t.Errorf("tags %q (empty strings) made it unrecoverable", rep.Tags)
	}
	var b bytes.Buffer
	if err := rep.Render(&b, Style{Width: 80}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if len(out) > 64<<10 {
		t.Errorf("rendered %d bytes, want a bounded report", len(out))
	}
	if strings.Contains(out, "abcdefghijklmnop") {
		t.Errorf("the key reached the text:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("line of %d runes: %q", n, line)
		}
		if !utf8.ValidString(line) {
			t.Errorf("invalid UTF-8: %q", line)
		}
		for _, r := range line {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("control or format character %U in %q", r, line)
			}
		}
	}
}

func TestCleanEventString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"plain", "quota_exhausted", 20, "quota_exhausted"},
		{"white space becomes a space", "a\nb\tc\rd\u2028e", 20, "a b c d e"},
		{"escapes and bidi dropped", "\x1b[31mred\x1b[0m\u202e", 20, "[31mred[0m"},
		{"invalid UTF-8 replaced", "a\xffb", 20, "a\uFFFDb"},
		{"cut with an ellipsis", "abcdefghij", 5, "abcd…"},
		{"key redacted before the cut", "sk-ant-api03-" + strings.Repeat("x", 40), 30, "sk-***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cleanEventString(tt.in, tt.limit); got != tt.want {
				t.Errorf("cleanEventString(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
			}
		})
	}
}

// FuzzReportFromEvent: whatever a trace's ErrorReport payload holds, the
// report read from it renders within its width, as valid UTF-8 without a
// control or format character, in bounded size, and reading back its own
// event changes nothing.
func FuzzReportFromEvent(f *testing.F) {
	f.Add([]byte(`{"category":"non-retryable","failureType":"quota_exhausted","status":429,"message":"You exceeded your current quota","reason":"non-retryable","attempts":1,"actions":[{"priority":"critical","text":"Add credits","command":"plandex providers switch <provider>"}],"history":[{"attempt":1,"failureType":"quota_exhausted","delayMs":0}]}`), 61)
	f.Add([]byte(`{"message":"\u001b[2J\r\u202e","step":{"plan":"a\nb","x\u0000":"y"},"tags":[""],"actions":[{"text":"`+strings.Repeat("w ", 400)+`"}]}`), 40)
	f.Fuzz(func(t *testing.T, payload []byte, width int) {
		var ev trace.ErrorReport
		if json.Unmarshal(payload, &ev) != nil {
			return
		}
		st := Style{Width: width % 200}
		rep := FromEvent(ev)
		var b bytes.Buffer
		if err := rep.Render(&b, st); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if len(out) > 256<<10 {
			t.Fatalf("rendered %d bytes", len(out))
		}
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if n := utf8.RuneCountInString(line); n > st.width() || !utf8.ValidString(line) {
				t.Fatalf("line of %d runes (width %d) or invalid: %q", n, st.width(), line)
			}
			for _, r := range line {
				if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
					t.Fatalf("%U in %q", r, line)
				}
			}
		}
		var again bytes.Buffer
		if err := FromEvent(rep.Event()).Render(&again, st); err != nil {
			t.Fatal(err)
		}
		if again.String() != out {
			t.Fatalf("reading its own event back changed the report:\n%s\n---\n%s", out, again.String())
		}
	})
}
