package chaos

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/internal/wire"
)

// servedRun is a Serve running in a test: the variables it printed, and
// stop, which cancels it and returns its verdict and what it printed.
type servedRun struct {
	vars map[string]string
	stop func() (v ServeVerdict, stdout, stderr string)
}

// startServe runs Serve for sc with its journal at journal until stop is
// called, once it has printed its variables.
func startServe(t *testing.T, sc *scenario.Scenario, journal string) servedRun {
	t.Helper()
	toxi := startToxi(t)
	ctx, cancel := context.WithCancel(t.Context())
	stdout := &lineWriter{lines: make(chan string, 64)}
	stderr := &syncBuffer{}
	type result struct {
		v   ServeVerdict
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := Serve(ctx, sc, toxi, journal, stdout, stderr)
		done <- result{v, err}
	}()
	vars := map[string]string{}
	for vars["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"] == "" || vars["GOOGLE_GEMINI_BASE_URL"] == "" {
		select {
		case l := <-stdout.lines:
			k, v, _ := strings.Cut(l, "=")
			vars[k] = v
		case <-time.After(10 * time.Second):
			cancel()
			t.Fatalf("Serve printed no variables; stderr:\n%s", stderr.String())
		}
	}
	return servedRun{vars: vars, stop: func() (ServeVerdict, string, string) {
		t.Helper()
		cancel()
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatal(r.err)
			}
			return r.v, stdout.buf.String(), stderr.String()
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return after cancellation")
			return ServeVerdict{}, "", ""
		}
	}}
}

// send sends one request with a fresh connection and returns its status
// (0 when it failed).
func send(t *testing.T, method, url string, header http.Header, body string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Logf("%s %s: %v", method, url, err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeRedactsKeysInPaths: a key in a request's path (an attempt's or
// a side request's, plain or percent-encoded) or its query reaches
// neither the journal nor serve's stdout or stderr, whatever its shape:
// every shape provider.Redact knows, and a key the client sent in a
// header (learnt) and repeated in the path. The model field was redacted;
// the path was kept as it came (hostile report finding 10).
func TestServeRedactsKeysInPaths(t *testing.T) {
	const learnt = "learnt-secret-0123456789abcdef"
	tests := []struct {
		name   string
		method string
		path   string // after the base URL
		header http.Header
		keys   []string // must appear nowhere
	}{
		{"sk-proj in a Gemini model path", "POST", "/v1beta/models/sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA1:generateContent", nil,
			[]string{"sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA1"}},
		{"sk-ant in a streamed Gemini path", "POST", "/v1beta/models/sk-ant-api03-BBBBBBBBBBBBBBBBBBBB:streamGenerateContent?alt=sse", nil,
			[]string{"sk-ant-api03-BBBBBBBBBBBBBBBBBBBB"}},
		{"plain sk- key", "POST", "/v1beta/models/sk-CCCCCCCCCCCCCCCCCCCCCCCC:generateContent", nil,
			[]string{"sk-CCCCCCCCCCCCCCCCCCCCCCCC"}},
		{"Google API key", "POST", "/v1beta/models/AIzaSyDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD:generateContent", nil,
			[]string{"AIzaSyDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD", "SyDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD"}},
		{"percent-encoded key", "POST", "/v1beta/models/sk%2Dproj%2DEEEEEEEEEEEEEEEEEEEE:generateContent", nil,
			[]string{"sk-proj-EEEEEEEEEEEEEEEEEEEE", "EEEEEEEEEEEEEEEEEEEE"}},
		{"key as a segment of a longer path", "POST", "/v1beta/models/sk-FFFFFFFFFFFFFFFFFFFF/x:generateContent", nil,
			[]string{"FFFFFFFFFFFFFFFFFFFF"}},
		{"learnt key repeated in the path", "POST", "/v1beta/models/" + learnt + ":generateContent",
			http.Header{"X-Goog-Api-Key": {learnt}}, []string{learnt}},
		// The learnt key later in a side request's path: only the [mock]
		// line on stderr shows that one.
		{"learnt key in a later side request's path", "POST", "/v1/" + learnt + "/messages", nil, []string{learnt}},
		{"side request (model get)", "GET", "/v1beta/models/sk-proj-GGGGGGGGGGGGGGGGGGGG", nil,
			[]string{"sk-proj-GGGGGGGGGGGGGGGGGGGG"}},
		{"side request to an unknown path", "POST", "/v1/other/AIzaSyHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH", nil,
			[]string{"AIzaSyHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH"}},
		{"?key= query", "POST", "/v1beta/models/m:generateContent?key=AIzaSyIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII", nil,
			[]string{"AIzaSyIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII"}},
		{"key-shaped value of an unnamed query parameter", "POST", "/v1/messages?x=sk-proj-JJJJJJJJJJJJJJJJJJJJ", nil,
			[]string{"sk-proj-JJJJJJJJJJJJJJJJJJJJ"}},
		{"?access_token= query", "POST", "/v1/chat/completions?access_token=tok-KKKKKKKKKKKKKKKKKKKK", nil,
			[]string{"tok-KKKKKKKKKKKKKKKKKKKK"}},
	}
	dir := t.TempDir()
	journal := filepath.Join(dir, "server.jsonl")
	s := startServe(t, &scenario.Scenario{Name: "keys", Provider: wire.ProviderGemini, Model: "m"}, journal)
	base := s.vars["GOOGLE_GEMINI_BASE_URL"]
	attempts := 0
	for _, tc := range tests {
		h := tc.header
		if h == nil {
			h = http.Header{}
		}
		if send(t, tc.method, base+tc.path, h, `{"model":"m","contents":[{"role":"user","parts":[{"text":"hi"}]}]}`) == 0 {
			t.Errorf("%s: no answer", tc.name)
		}
	}
	v, stdout, stderr := s.stop()
	for _, a := range v.Attempts {
		if a.Path != "" {
			attempts++
		}
	}
	if attempts < 8 {
		t.Errorf("serve saw %d attempts with a path, want at least 8 (the Gemini, messages and chat paths)", attempts)
	}
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"path":"/v1beta/models/sk-***:generateContent"`) {
		t.Errorf("journal has no redacted path:\n%s", b)
	}
	for _, tc := range tests {
		for _, k := range tc.keys {
			for what, text := range map[string]string{"journal": string(b), "stdout": stdout, "stderr": stderr} {
				if strings.Contains(text, k) {
					t.Errorf("%s: %s holds %q:\n%s", tc.name, what, k, text)
				}
			}
		}
	}
}

// TestRedactKeysInPathsRunFolder: chaos run's run files (server.jsonl,
// mock.log, result.json, ...) hold no key a client put in a path.
func TestRedactKeysInPathsRunFolder(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	keys := []string{"sk-proj-LLLLLLLLLLLLLLLLLLLLLLLL", "AIzaSyMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM", "sk-ant-api03-NNNNNNNNNNNNNNNNNNNN"}
	sc := parse(t, "pathkeys", `
provider: gemini
model: m
client:
  command:
    - sh
    - -c
    - |
      for k in `+strings.Join(keys, " ")+`; do
        curl -sS -o /dev/null -H 'Content-Type: application/json' -d '{}' "$GOOGLE_GEMINI_BASE_URL/v1beta/models/$k:generateContent?key=$k"
        curl -sS -o /dev/null "$GOOGLE_GEMINI_BASE_URL/v1beta/models/$k"
      done
expect: {attempts: 3}
`)
	r := &Runner{Toxi: runnerToxi(t), Out: t.TempDir(), Seed: 1}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	if res := sum.Scenarios[0]; res.Verdict != VerdictPass {
		t.Fatalf("verdict %s: %+v", res.Verdict, res.Checks)
	}
	b, err := os.ReadFile(filepath.Join(sum.RunDir, "pathkeys", "server.jsonl"))
	if err != nil || !strings.Contains(string(b), "/v1beta/models/sk-***:generateContent") {
		t.Errorf("server.jsonl has no redacted path (%v):\n%s", err, b)
	}
	assertNoKey(t, sum.RunDir, keys...)
}

// hostile is text a request may carry that must never reach a terminal
// raw: ESC sequences (OSC title, clear screen, CSI), BEL, newlines,
// carriage return, tab, DEL, a C1 CSI, bidirectional overrides and
// isolates, zero-width characters, the line and paragraph separators, and
// invalid UTF-8.
var hostile = []string{"\x1b]0;PWNED\x07", "\x1b[2J", "a\nFAKE PASS line", "a\rPASS", "\t", "\x7f", "\u009b31m",
	"\u202eevil\u202c", "\u2066iso\u2069", "zero\u200bwidth\ufeff", "\u2028", "\u2029", "bad\xffutf8"}

// unsafeRune reports the first rune of s that a terminal would act on or
// hide, other than the newlines that end lines, or -1.
func unsafeRune(s string) rune {
	for _, r := range strings.ToValidUTF8(s, "\x00") {
		if r != '\n' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)) {
			return r
		}
	}
	return -1
}

// TestServeVerdictPrintable: whatever a request put in a path, a model or
// a check's text, the verdict's lines carry no control or invisible
// character and no line of their own (finding 11).
func TestServeVerdictPrintable(t *testing.T) {
	for _, h := range hostile {
		t.Run(strings.ToValidUTF8(h, "?"), func(t *testing.T) {
			v := ServeVerdict{
				Attempts: []mock.ServerAttempt{{N: 1, Fault: "status", Status: 529, Path: "/v1beta/models/" + h + ":generateContent", Model: h},
					{N: 2, Fault: "ok", Status: 200, Path: h}},
				Gaps:    []time.Duration{time.Second},
				Checks:  []verify.Check{{Name: "escalations", State: verify.StateFail, Want: "m → " + h, Got: h, Where: h, Hint: h}},
				Skipped: []string{h},
			}
			var b strings.Builder
			if err := v.Write(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if r := unsafeRune(out); r != -1 {
				t.Errorf("verdict holds %U:\n%q", r, out)
			}
			// server saw, 2 attempts, a wait, a check and its hint, a skip.
			if n := strings.Count(out, "\n"); n != 7 {
				t.Errorf("verdict has %d lines, want 7:\n%s", n, out)
			}
		})
	}
}

// TestServePrintableEndToEnd: requests whose paths and models carry
// escapes, percent-encoded or JSON-escaped, reach neither serve's stdout
// nor its [mock] lines on stderr raw.
func TestServePrintableEndToEnd(t *testing.T) {
	s := startServe(t, &scenario.Scenario{Name: "esc", Provider: wire.ProviderAnthropic, Model: "m",
		Attempts: []scenario.Fault{{Kind: fault.Status{Status: 529}}}}, filepath.Join(t.TempDir(), "server.jsonl"))
	base := s.vars["ANTHROPIC_BASE_URL"]
	h := http.Header{}
	send(t, "POST", base+"/v1beta/models/x%1B%5D0%3BPWNED%07%1B%5B2J%E2%80%AE%0AFAKE:generateContent", h, `{}`)
	send(t, "POST", base+"/v1/messages", h, `{"model":"m\u001b[31m\u202e\u2028\n","stream":true,"messages":[]}`)
	send(t, "GET", base+"/v1/models/a%1B%5B2J%E2%80%AEb%0D%0AX", h, ``)
	send(t, "POST", base+"/v1/chat/completions", h, `{"model":"ok\u0007\u009b","stream":true,"messages":[]}`)
	v, stdout, stderr := s.stop()
	if len(v.Attempts) < 3 {
		t.Errorf("serve saw %d attempts, want 3", len(v.Attempts))
	}
	for what, text := range map[string]string{"stdout": stdout, "stderr": stderr} {
		if r := unsafeRune(text); r != -1 {
			t.Errorf("%s holds %U:\n%q", what, r, text)
		}
		if strings.Contains(text, "\nFAKE") || strings.Contains(text, "\nX") {
			t.Errorf("%s has a line a request made:\n%s", what, text)
		}
	}
}

// TestRedactPrintable: printable replaces what a terminal would act on or
// hide, and keeps the rest as it is.
func TestRedactPrintable(t *testing.T) {
	for _, h := range hostile {
		if r := unsafeRune(mock.Printable(h)); r != -1 {
			t.Errorf("printable(%q) = %q holds %U", h, mock.Printable(h), r)
		}
	}
	for _, ok := range []string{"/v1beta/models/gemini-2.5-flash:generateContent", "modèle-日本語", "a → b", "emoji 🙂"} {
		if got := mock.Printable(ok); got != ok {
			t.Errorf("printable(%q) = %q, want it unchanged", ok, got)
		}
	}
}
