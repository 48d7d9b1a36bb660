package example

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

func TestTeapotKind(t *testing.T) {
	sc, err := scenario.ParseScenario("teapot.yaml", []byte("attempts:\n  - teapot: {cups: 4}\n  - status: 529\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Attempts[0].Name(); got != "teapot" {
		t.Fatalf("kind %q, want teapot", got)
	}
	if _, err := scenario.ParseScenario("bad.yaml", []byte("attempts:\n  - teapot: {cups: 40}\n")); err == nil ||
		!strings.Contains(err.Error(), "bad.yaml:2:13: attempts[0].teapot.cups: 40 cups overflow the pot") {
		t.Errorf("a bad teapot: %v", err)
	}
	if _, err := scenario.ParseScenario("two.yaml", []byte("attempts:\n  - {teapot: {}, hang: {}}\n")); err == nil ||
		!strings.Contains(err.Error(), "one attempt has 2 fault kinds (hang, teapot)") {
		t.Errorf("two kinds: %v", err)
	}

	toxi, err := mock.StartToxiproxy(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	j, err := trace.Create(filepath.Join(t.TempDir(), "server.jsonl"), "r-teapot")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	done := make(chan mock.ServerAttempt, 1)
	env, err := mock.StartEnv(t.Context(), mock.EnvConfig{Scenario: sc, Toxi: toxi, Journal: j, RunID: "r-teapot",
		Log: io.Discard, OnAttempt: func(a mock.ServerAttempt) { done <- a }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	body := `{"model":"claude-haiku-4-5","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(env.BaseURL()+wire.PathAnthropic, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 418 || !strings.Contains(string(b), "I'm a teapot of 4 cups") {
		t.Errorf("got %d %s", resp.StatusCode, b)
	}
	select {
	case a := <-done:
		if a.Fault != "teapot" || a.Status != 418 {
			t.Errorf("journaled %+v", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the attempt never ended")
	}
}
