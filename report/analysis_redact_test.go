package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/trace/analyze"
)

// TestRedactLabelKeyForms is a regression test: AWS key ids glued to a word
// or cut short, and keys of kinds provider.Redact does not know (GitHub,
// Google, Slack, Stripe, Hugging Face, JWTs, values of token=, secret:,
// ?key=) were printed by trace analyze. Labels that hold no key are left
// as they are.
func TestRedactLabelKeyForms(t *testing.T) {
	t.Parallel()
	keys := []struct{ in, secret string }{
		{"AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"},
		{"key_AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"},
		{"xAKIAIOSFODNN7EXAMPLEyz", "IOSFODNN7EXAMPLE"},
		{"ASIASHORTER12345", "SHORTER12345"},
		{"sk-ant-api03-AbCdEfGh0123", "AbCdEfGh0123"},
		{"xsk-ant-api03-AbCdEfGh0123", "AbCdEfGh0123"},
		{"model=sk-proj-AbCdEfGh0123", "AbCdEfGh0123"},
		{"ghp_0123456789abcdefABCDEF", "0123456789abcdef"},
		{"github_pat_11ABCDEFG0123456789_abcdef", "11ABCDEFG0123456789"},
		{"AIzaSyA0123456789abcdefghijklmnopq", "0123456789abcdefghij"},
		{"xoxb-123456789012-abcdefABCDEF", "123456789012"},
		{"sk_live_0123456789abcdefABCD", "0123456789abcdef"},
		{"hf_0123456789abcdefABCDEFGHIJ", "0123456789abcdef"},
		{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2ln", "c2lnbmF0dXJlc2ln"},
		{"Bearer abcdefghijklmnop0123", "abcdefghijklmnop0123"},
		{"authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"},
		{"https://x.example/v1?key=AbCdEfGh0123&alt=json", "AbCdEfGh0123"},
		{"access_token=AbCdEfGh0123", "AbCdEfGh0123"},
		{`{"client_secret": "AbCdEfGh0123"}`, "AbCdEfGh0123"},
		{"password: hunter2hunter2", "hunter2hunter2"},
		{"X-API-KEY=AbCdEfGh0123", "AbCdEfGh0123"},
	}
	for _, k := range keys {
		if got := RedactLabel(k.in); strings.Contains(got, k.secret) {
			t.Errorf("RedactLabel(%q) = %q, still holds %q", k.in, got, k.secret)
		}
	}
	plain := []string{"claude-3-5-sonnet-20241022", "gpt-4o-mini", "task-check", "disk-full", "rate_limit",
		"monkey=banana", "author: me", "anthropic", "L2", "server_error", "keyboard", "Asia/Tokyo", "overloaded_error"}
	for _, s := range plain {
		if got := RedactLabel(s); got != s {
			t.Errorf("RedactLabel(%q) = %q, want it unchanged: it holds no key", s, got)
		}
	}
}

// TestSecretsFromEnvironment: the values of the environment's secrets are
// scrubbed from labels exactly, also JSON-escaped and glued to other text,
// whatever they look like; values that are not secrets are not.
func TestSecretsFromEnvironment(t *testing.T) {
	t.Parallel()
	m := secretsMatcher([]string{
		"MY_SERVICE_TOKEN=Zq7RandomLooking0Value", // no known prefix
		"DEFAULT_KEY_NAME=anthropic",              // a word: not a secret
		"SSH_AUTH_SOCK=/tmp/ssh-abc123/agent.42",  // a path
		"PATH=/usr/bin:/bin",
		"HOME=/root",
	})
	if m == nil {
		t.Fatal("no matcher for an environment holding a token")
	}
	for _, in := range []string{"Zq7RandomLooking0Value", "model-Zq7RandomLooking0Value-x", `\u005aq7RandomLooking0Value`} {
		if got := m.Redact(in); strings.Contains(got, "RandomLooking0") {
			t.Errorf("Redact(%q) = %q, still holds the environment's token", in, got)
		}
	}
	for _, s := range []string{"anthropic", "/tmp/ssh-abc123/agent.42", "/usr/bin:/bin"} {
		if got := m.Redact(s); got != s {
			t.Errorf("Redact(%q) = %q, want it unchanged: not a secret", s, got)
		}
	}
	if m := secretsMatcher([]string{"PATH=/usr/bin", "TERM=xterm"}); m != nil {
		t.Error("a matcher for an environment without secrets")
	}
}

// TestMarkdownEscapesLinksAndBackslashes is a regression test: a label
// "[x](https://...)" became a link in a CI summary, and "a\|b" became "a\\|b",
// an escaped backslash then a cell separator for renderers that count
// backslashes; unknown type names in the inputs line were not escaped.
func TestMarkdownEscapesLinksAndBackslashes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"[click](https://evil.example)": `[click]\(https://evil.example)`,
		`a\|b`:                          `a\\\|b`,
		`a\`:                            `a\\`,
		"<img src=x>":                   "&lt;img src=x&gt;",
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "trace.jsonl"), []byte(`{"type":"<img src=x onerror=alert(1)>"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := AnalysisMarkdown(&buf, analyzeDirBy(t, dir, nil)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<img") {
		t.Errorf("markdown holds raw HTML from an unknown type name:\n%s", buf.String())
	}
}

// FuzzAnalysisLabelFormats: whatever a label holds (as the reader decodes
// it), JSON stays valid, the people's formats and OpenMetrics hold no
// control character, Markdown rows keep their cells, and OpenMetrics
// parses.
func FuzzAnalysisLabelFormats(f *testing.F) {
	for _, s := range append(append([]string{}, hostileLabels...), `a\|b`, "[x](y)", `\`, "\u2029", "é\xff") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, label string) {
		q, _ := json.Marshal(label)
		dir := t.TempDir()
		line := fmt.Sprintf(`{"type":"ProviderRequestFinished","runId":%s,"payload":{"provider":%s,"model":%s,"failureType":%s,"success":false,"retries":1}}`+"\n"+
			`{"type":"RetryAttempt","payload":{"failureType":%s}}`+"\n"+`{"type":"RunEscalated","payload":{"from":%s,"to":%s,"reason":%s}}`+"\n"+`{"type":%s}`+"\n",
			q, q, q, q, q, q, q, q, q)
		if err := os.WriteFile(filepath.Join(dir, "trace.jsonl"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		a := analyzeDirBy(t, dir, []string{"provider", "model", "failureType", "run"})
		var buf bytes.Buffer
		if err := AnalysisJSON(&buf, a); err != nil || !json.Valid(buf.Bytes()) {
			t.Fatalf("JSON: %v, valid %v:\n%s", err, json.Valid(buf.Bytes()), buf.String())
		}
		for name, render := range map[string]func(io.Writer, *analyze.Analysis) error{
			"table": AnalysisTable, "markdown": AnalysisMarkdown, "html": AnalysisHTML, "openmetrics": AnalysisOpenMetrics,
		} {
			buf.Reset()
			if err := render(&buf, a); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkNoControls(t, buf.String())
			switch name {
			case "openmetrics":
				if _, err := omParse(buf.String()); err != nil {
					t.Errorf("OpenMetrics: %v", err)
				}
			case "markdown":
				// Every row of a table has as many cell separators as its
				// header: a pipe after an even run of backslashes.
				cols := -1
				for _, l := range strings.Split(buf.String(), "\n") {
					if !strings.HasPrefix(l, "| ") {
						cols = -1
						continue
					}
					seps, bs := 0, 0
					for _, c := range l {
						if c == '|' && bs%2 == 0 {
							seps++
						}
						if c == '\\' {
							bs++
						} else {
							bs = 0
						}
					}
					if cols >= 0 && seps != cols {
						t.Errorf("markdown row with %d separators, want %d: %q", seps, cols, l)
					}
					cols = seps
				}
			}
		}
	})
}
