package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"

	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

// hostileLabels are label values that broke, or could break, a format:
// control characters, invalid UTF-8, separators of each format.
var hostileLabels = []string{
	"esc\x1b[31mred", "nul\x00x", "bad\xff\xfeutf8", `quote"back\slash`, "new\nline\r\ttab",
	"pipe|cell", "<script>&amp;", "rtl\u202eoverride", "sep\u2028x", "# EOF", "del\x7f", "}{\"",
}

// secretValues are keys as a trace may hold them, plain and JSON-escaped
// (the reader decodes the escapes), with the part that must never be printed.
var secretValues = []struct{ inTrace, secret string }{
	{`sk-ant-api03-AbCdEfGhIjKlMnOp0123`, "AbCdEfGhIjKlMnOp0123"},
	{`sk-ant-\u0061pi03-QrStUvWxYz456789`, "QrStUvWxYz456789"},
	{`sk-proj-ZyXwVuTsRqPoNm98765`, "ZyXwVuTsRqPoNm98765"},
	{`AKIAIOSFODNN7EXAMPLE`, "IOSFODNN7EXAMPLE"},
	{`\u0041KIAJ2345ABCDEFGHIJK`, "J2345ABCDEFGHIJK"},
	{`Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0`, "eyJhbGciOiJIUzI1NiJ9"},
	{`x-api-key: k3yV4lu3Th4tIsL0ng`, "k3yV4lu3Th4tIsL0ng"},
	// Escaped beside a raw control character (encoding/json refuses the
	// string, so the reader once kept its escapes undecoded).
	{"\x01\\u0073k-ant-api03-CtrlBeside0123", "CtrlBeside0123"},
	{"\x02\\u0041KIAQ2345ABCDEFGHIJ", "Q2345ABCDEFGHIJ"},
	// Glued to a word, or of kinds provider.Redact does not know.
	{`key_AKIAZ2345ABCDEFGHIJ`, "Z2345ABCDEFGHIJ"},
	{`xsk-ant-api03-GluedToAWord9876`, "GluedToAWord9876"},
	{`ghp_GitHubT0kenGitHubT0kenGitHub00`, "GitHubT0kenGitHub"},
	{`AIzaSyGoogleKeyGoogleKeyGoogleKey12`, "GoogleKeyGoogleKey"},
	{`eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.SiGnAtUrEsIgNaTuRe`, "SiGnAtUrEsIgNaTuRe"},
	{`token=T0kenValueT0kenValue`, "T0kenValueT0kenValue"},
	{`{\"client_secret\":\"S3cretValueS3cret\"}`, "S3cretValueS3cret"},
}

// hostileTrace writes a trace whose every label field holds each hostile
// label and each secret, and analyses it grouped by every string dimension.
func hostileTrace(t *testing.T) string {
	t.Helper()
	q := func(s string) string { // a JSON string that keeps invalid UTF-8 as it is
		b, _ := json.Marshal(s)
		if !utf8.ValidString(s) {
			return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`, "\x00", `\u0000`, "\x1b", `\u001b`, "\x7f", "\x7f").Replace(s) + `"`
		}
		return string(b)
	}
	var vals []string
	for _, l := range hostileLabels {
		vals = append(vals, q(l))
	}
	for _, s := range secretValues {
		vals = append(vals, `"`+s.inTrace+`"`) // as written: escapes stay escapes
	}
	var b strings.Builder
	for i, v := range vals {
		fmt.Fprintf(&b, `{"type":"ProviderRequestFinished","runId":%s,"payload":{"provider":%s,"model":%s,"failureType":%s,"success":%v,"retries":%d,"durationMs":5}}`+"\n", v, v, v, v, i%2 == 0, i%3)
		fmt.Fprintf(&b, `{"type":"RetryAttempt","runId":%s,"payload":{"failureType":%s,"willRetry":true,"delayMs":1}}`+"\n", v, v)
		fmt.Fprintf(&b, `{"type":"RunEscalated","runId":%s,"payload":{"from":%s,"to":%s,"reason":%s}}`+"\n", v, v, v, v)
		fmt.Fprintf(&b, `{"type":%s,"runId":%s,"payload":{}}`+"\n", v, v)
		// Issue 9: every label of the new figures (messages, ticket ids,
		// categories, reasons, states) holds it too.
		fmt.Fprintf(&b, `{"type":"RetryAttempt","runId":%s,"payload":{"model":%s,"errorMessage":%s,"errorContext":true}}`+"\n", v, v, v)
		fmt.Fprintf(&b, `{"type":"RetryDecision","runId":%s,"payload":{"ticketId":%s,"category":%s,"shouldRetry":%v,"nextDelayMs":5}}`+"\n", v, v, v, i%2 == 0)
		fmt.Fprintf(&b, `{"type":"TicketTransition","runId":%s,"payload":{"ticketId":%s,"event":%s,"to":%s,"errorCategory":%s}}`+"\n", v, v, v, v, v)
		fmt.Fprintf(&b, `{"type":"RunStopped","runId":%s,"payload":{"reason":%s}}`+"\n", v, v)
		fmt.Fprintf(&b, `{"type":"RepairAttempted","runId":%s,"payload":{"iteration":9}}`+"\n", v)
		fmt.Fprintf(&b, `{"type":"ErrorReport","runId":%s,"payload":{"failureType":%s,"category":%s}}`+"\n", v, v, v)
		fmt.Fprintf(&b, `{"type":"EscalationDeclined","runId":%s,"payload":{"reason":%s,"why":%s}}`+"\n", v, v, v)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "trace.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAnalysisHostileLabelsAllFormats is a regression test: --format json
// failed on a label with a control character or invalid UTF-8, the other
// formats printed them raw (a terminal escape, a broken Markdown row), and
// keys in a trace's strings, plain or JSON-escaped, were printed. Every
// format must stay well-formed and print no key.
func TestAnalysisHostileLabelsAllFormats(t *testing.T) {
	t.Parallel()
	dir := hostileTrace(t)
	a := analyzeDirBy(t, dir, []string{"provider", "model", "failureType", "run"})
	if a.Requests.Total != int64(len(hostileLabels)+len(secretValues)) {
		t.Fatalf("%d requests read, want %d: the trace is not what the test means", a.Requests.Total, len(hostileLabels)+len(secretValues))
	}
	formats := []struct {
		name   string
		render func(*bytes.Buffer) error
		check  func(t *testing.T, out string)
	}{
		{"json", func(b *bytes.Buffer) error { return AnalysisJSON(b, a) }, func(t *testing.T, out string) {
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("invalid JSON: %v", err)
			}
			if !utf8.ValidString(out) {
				t.Error("JSON output is not valid UTF-8")
			}
			if !strings.Contains(out, `"esc\u001b[31mred"`) {
				t.Error(`JSON lacks the label "esc\u001b[31mred" escaped as JSON`)
			}
		}},
		{"table", func(b *bytes.Buffer) error { return AnalysisTable(b, a) }, checkNoControls},
		{"markdown", func(b *bytes.Buffer) error { return AnalysisMarkdown(b, a) }, func(t *testing.T, out string) {
			checkNoControls(t, out)
			cols := -1
			for _, line := range strings.Split(out, "\n") {
				if !strings.HasPrefix(line, "| ") {
					cols = -1
					continue
				}
				n := strings.Count(line, "|") - strings.Count(line, `\|`)
				if cols >= 0 && n != cols {
					t.Errorf("row with %d cells' pipes, want %d: %q", n, cols, line)
				}
				cols = n
			}
		}},
		{"html", func(b *bytes.Buffer) error { return AnalysisHTML(b, a) }, func(t *testing.T, out string) {
			checkNoControls(t, out)
			if strings.Count(out, errorHook) != 1 {
				t.Error("html lacks its error hook")
			}
			out = strings.Replace(out, errorHook, "", 1) // the page's own script
			if strings.Contains(out, "<script") {
				t.Error("html holds a raw <script")
			}
		}},
		{"openmetrics", func(b *bytes.Buffer) error { return AnalysisOpenMetrics(b, a) }, func(t *testing.T, out string) {
			checkNoControls(t, out)
			var p expfmt.TextParser
			if _, err := p.TextToMetricFamilies(strings.NewReader(out)); err != nil {
				t.Errorf("Prometheus text parser: %v", err)
			}
			if _, err := omParse(out); err != nil {
				t.Errorf("OpenMetrics: %v", err)
			}
		}},
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := f.render(&buf); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			f.check(t, out)
			for _, s := range secretValues {
				// Not even a part of it: any 6 characters of the secret.
				for i := 0; i+6 <= len(s.secret); i++ {
					if part := s.secret[i : i+6]; strings.Contains(out, part) {
						t.Errorf("output holds %q, part of the key %q (from %q)", part, s.secret, s.inTrace)
						break
					}
				}
			}
			if t.Failed() && testing.Verbose() {
				t.Log(out)
			}
		})
	}
}

// checkNoControls fails if out holds a control character other than a
// newline (and a tab, which the table renderers may use), or invalid UTF-8.
func checkNoControls(t *testing.T, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Error("output is not valid UTF-8")
	}
	for i, r := range out {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r < 0xa0) || r == '\u202e' || r == '\u2028' {
			t.Errorf("control character %U at byte %d: %q", r, i, out[max(0, i-20):min(len(out), i+20)])
			return
		}
	}
}

func analyzeDirBy(t *testing.T, dir string, by []string) *analyze.Analysis {
	t.Helper()
	files, err := trace.Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analyze.Run(context.Background(), files, analyze.Options{By: by, Alerts: analyze.DefaultAlerts(), MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
