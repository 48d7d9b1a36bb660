package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/trace"
)

// startToxi starts an embedded Toxiproxy for one test.
func startToxi(t *testing.T) *Toxiproxy {
	t.Helper()
	toxi, err := StartToxiproxy(t.Context(), "")
	if err != nil {
		t.Fatalf("StartToxiproxy: %v", err)
	}
	t.Cleanup(func() { toxi.Close() })
	return toxi
}

// testEnv is an Env with its journal in a buffer.
type testEnv struct {
	*Env
	journalPath string
	log         *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startEnv(t *testing.T, toxi *Toxiproxy, provider string, faults ...Fault) *testEnv {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.jsonl")
	j, err := trace.Create(path, "r-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	log := &syncBuffer{}
	sc := &Scenario{Name: strings.ReplaceAll(t.Name(), "/", "_"), Provider: provider, Attempts: faults}
	env, err := StartEnv(t.Context(), EnvConfig{Scenario: sc, Toxi: toxi, Journal: j, RunID: "r-test", Log: log})
	if err != nil {
		t.Fatalf("StartEnv: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("env log:\n%s", log.String())
		}
	})
	return &testEnv{Env: env, journalPath: path, log: log}
}

// post sends one streaming request through the proxy with a fresh connection
// and a secret API key, and returns the response and the body it could read.
func post(t *testing.T, ctx context.Context, url, path string) (*http.Response, []byte, error) {
	t.Helper()
	body := `{"model":"claude-haiku-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", "sk-ant-secret-KEY-1234567890")
	req.Header.Set("Authorization", "Bearer sk-proj-secret-0987654321")
	req.Header.Set("content-type", "application/json")
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// waitAttempts waits until the env has seen n finished attempts.
func waitAttempts(t *testing.T, e *Env, n int) []ServerAttempt {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		as := e.Attempts()
		done := 0
		for _, a := range as {
			if !a.Ended.IsZero() {
				done++
			}
		}
		if done >= n {
			return as
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d finished attempts; have %+v", n, as)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, not waiting for readiness
	}
}

func TestEnvOK(t *testing.T) {
	toxi := startToxi(t)
	for _, tc := range []struct {
		name, provider, path, last string
	}{
		{"anthropic", ProviderAnthropic, PathAnthropic, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
		{"openai", ProviderOpenAI, PathOpenAI, "data: [DONE]\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, toxi, tc.provider)
			resp, body, err := post(t, t.Context(), e.BaseURL(), tc.path)
			if err != nil {
				t.Fatalf("post: %v", err)
			}
			if resp.StatusCode != 200 || !strings.HasSuffix(string(body), tc.last) {
				t.Fatalf("got %d, body ends %q", resp.StatusCode, tail(body))
			}
			as := waitAttempts(t, e.Env, 1)
			a := as[0]
			if a.Status != 200 || a.ClosedBy != trace.ClosedByServer || a.Fault != FaultOK || a.Path != tc.path {
				t.Errorf("attempt = %+v", a)
			}
		})
	}
}

func tail(b []byte) string {
	if len(b) > 80 {
		return string(b[len(b)-80:])
	}
	return string(b)
}

func TestEnvStatus429RetryAfter(t *testing.T) {
	toxi := startToxi(t)
	ra := "2.5"
	e := startEnv(t, toxi, ProviderAnthropic,
		Fault{Status: 429, RetryAfter: &ra, Headers: map[string]string{"x-should-retry": "true"}},
		Fault{Status: 529})
	resp, body, err := post(t, t.Context(), e.BaseURL(), PathAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 429 || resp.Header.Get("retry-after") != "2.5" || resp.Header.Get("x-should-retry") != "true" {
		t.Errorf("got %d headers %v", resp.StatusCode, resp.Header)
	}
	if resp.Header.Get("anthropic-ratelimit-requests-remaining") != "0" {
		t.Errorf("ratelimit remaining = %q", resp.Header.Get("anthropic-ratelimit-requests-remaining"))
	}
	var eb struct {
		Type  string `json:"type"`
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Type != "rate_limit_error" || eb.RequestID != resp.Header.Get("request-id") {
		t.Errorf("body %s (%v)", body, err)
	}
	resp, body, err = post(t, t.Context(), e.BaseURL(), PathAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 529 || !strings.Contains(string(body), `"type":"overloaded_error"`) {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
	// Past the end of the list: ok.
	resp, _, err = post(t, t.Context(), e.BaseURL(), PathAnthropic)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("third attempt: %v %v", resp, err)
	}
	as := waitAttempts(t, e.Env, 3)
	got := []string{}
	for _, a := range as {
		got = append(got, a.Fault)
	}
	if diff := cmp.Diff([]string{FaultStatus, FaultStatus, FaultOK}, got); diff != "" {
		t.Errorf("faults mismatch (-want +got):\n%s", diff)
	}
}

var _ = errors.Is
var _ = syscall.ECONNRESET
var _ = os.ReadFile
var _ = bufio.NewReader
var _ = net.Dial
