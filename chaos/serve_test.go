package chaos

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"
)

// lineWriter hands each stdout line to a channel so the test can learn the
// base URLs as soon as Serve prints them.
type lineWriter struct {
	buf   syncBuffer
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	sc := bufio.NewScanner(strings.NewReader(string(p)))
	for sc.Scan() {
		select {
		case w.lines <- sc.Text():
		default:
		}
	}
	return len(p), nil
}

func TestServe(t *testing.T) {
	toxi := startToxi(t)
	ra := "1"
	sc := &Scenario{Name: "serve", Attempts: []Fault{{Status: 429, RetryAfter: &ra}}}
	ctx, cancel := context.WithCancel(t.Context())
	stdout := &lineWriter{lines: make(chan string, 16)}
	stderr := &syncBuffer{}
	type result struct {
		v   ServeVerdict
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := Serve(ctx, sc, toxi, t.TempDir()+"/server.jsonl", stdout, stderr)
		done <- result{v, err}
	}()
	var anthropic, openai string
	for anthropic == "" || openai == "" {
		l := <-stdout.lines
		if v, ok := strings.CutPrefix(l, "ANTHROPIC_BASE_URL="); ok {
			anthropic = v
		}
		if v, ok := strings.CutPrefix(l, "OPENAI_BASE_URL="); ok {
			openai = v
		}
	}
	if openai != anthropic+"/v1" {
		t.Errorf("OPENAI_BASE_URL = %q, want %q", openai, anthropic+"/v1")
	}
	resp, _, err := post(t, t.Context(), anthropic, PathAnthropic)
	if err != nil || resp.StatusCode != 429 {
		t.Fatalf("first attempt: %v %v", resp, err)
	}
	resp, _, err = post(t, t.Context(), openai, "/chat/completions")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("second attempt: %v %v", resp, err)
	}
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancellation")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.v.Attempts) != 2 || len(r.v.Gaps) != 1 || r.v.Attempts[0].Status != 429 || r.v.Attempts[1].Path != PathOpenAI {
		t.Errorf("verdict = %+v", r.v)
	}
	out := stdout.buf.String()
	for _, s := range []string{"server saw 2 attempt(s)", "attempt 1: status", "wait before attempt 2"} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	if ps, _ := toxi.Client().Proxies(); len(ps) != 0 {
		t.Errorf("proxies left after Serve: %v", ps)
	}
}

// TestResetRaceFallback: a client that retries at once after a reset may
// connect before the proxy's toxics are switched. Whatever it meets, no
// attempt may hang and the attempt after it must be served.
func TestResetRaceFallback(t *testing.T) {
	toxi := startToxi(t)
	e := startEnv(t, toxi, ProviderAnthropic, Fault{Reset: &struct{}{}}, Fault{Reset: &struct{}{}})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for i := 0; i < 2; i++ {
		if _, _, err := post(t, ctx, e.BaseURL(), PathAnthropic); err == nil {
			t.Errorf("attempt %d: no error", i+1)
		}
	}
	waitAttempts(t, e.Env, 2)
	resp, _, err := post(t, ctx, e.BaseURL(), PathAnthropic)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("attempt 3: %v %v", resp, err)
	}
}
