package chaos

// Test helpers shared by the runner's tests: an embedded Toxiproxy, an Env
// with its journal in a temporary folder, and a clock the test moves (the
// same helpers as package mock's own tests, which cannot be imported).

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// startToxi starts an embedded mock.Toxiproxy for one test.
func startToxi(t *testing.T) *mock.Toxiproxy {
	t.Helper()
	toxi, err := mock.StartToxiproxy(t.Context(), "")
	if err != nil {
		t.Fatalf("mock.StartToxiproxy: %v", err)
	}
	t.Cleanup(func() { toxi.Close() })
	return toxi
}

// testEnv is an mock.Env with its journal in a buffer.
type testEnv struct {
	*mock.Env
	journalPath string
	log         *syncBuffer
	ended       chan struct{} // signalled (without blocking) when an attempt ends
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

func startEnv(t *testing.T, toxi *mock.Toxiproxy, provider string, faults ...scenario.Fault) *testEnv {
	t.Helper()
	return startEnvWith(t, mock.EnvConfig{Toxi: toxi,
		Scenario: &scenario.Scenario{Name: strings.ReplaceAll(t.Name(), "/", "_"), Provider: provider, Attempts: faults}})
}

// startEnvWith starts an mock.Env from cfg (Scenario and Toxi set; Now and
// OnAccept as the test wants) with its journal in a temporary folder, its
// log kept for a failed test, and OnAttempt signalling ended.
func startEnvWith(t *testing.T, cfg mock.EnvConfig) *testEnv {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.jsonl")
	j, err := trace.Create(path, "r-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	log := &syncBuffer{}
	ended := make(chan struct{}, 1)
	cfg.Journal, cfg.RunID, cfg.Log = j, "r-test", log
	cfg.OnAttempt = func(mock.ServerAttempt) {
		select {
		case ended <- struct{}{}:
		default:
		}
	}
	env, err := mock.StartEnv(t.Context(), cfg)
	if err != nil {
		t.Fatalf("mock.StartEnv: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("env log:\n%s", log.String())
		}
	})
	return &testEnv{Env: env, journalPath: path, log: log, ended: ended}
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

// waitAttempts waits until the env has seen n finished attempts: it checks
// after every OnAttempt signal (attempts are recorded before the callback),
// with a generous bound for a broken env.
func waitAttempts(t *testing.T, e *testEnv, n int) []mock.ServerAttempt {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
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
		select {
		case <-e.ended:
		case <-timeout.C:
			t.Fatalf("waited for %d finished attempts; have %+v", n, as)
		}
	}
}

// fakeClock is the mock.Env's clock in tests that check what it stamps.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// startClockedEnv is startEnv with a fake clock and a signal per accepted
// connection.
func startClockedEnv(t *testing.T, clock *fakeClock, faults ...scenario.Fault) (*testEnv, <-chan struct{}) {
	t.Helper()
	accepted := make(chan struct{}, 16)
	e := startEnvWith(t, mock.EnvConfig{Toxi: startToxi(t), Now: clock.Now, OnAccept: func() { accepted <- struct{}{} },
		Scenario: &scenario.Scenario{Name: strings.ReplaceAll(t.Name(), "/", "_"), Provider: wire.ProviderAnthropic, Attempts: faults}})
	return e, accepted
}

const rawRequest = "POST /v1/messages HTTP/1.1\r\nHost: mock\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"

func rawPost() string {
	body := `{"model":"claude-haiku-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	return strings.Replace(strings.Replace(rawRequest, "%d", itoa(len(body)), 1), "%s", body, 1)
}

func itoa(n int) string { return strconv.Itoa(n) }

// checkNamed returns the check called name, failing the test if there is
// none.
func checkNamed(t *testing.T, cs []verify.Check, name string) verify.Check {
	t.Helper()
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s check in %+v", name, cs)
	return verify.Check{}
}

// skipWhereTheSuiteRuns skips a test that only runs honest scenarios of
// scenarios/ with real clients when RETRYLAB_CI_SUITE=1: .ci/run sets it
// for go test because .ci/chaos.sh runs the whole of scenarios/ twice
// after it (embedded Toxiproxy, then a toxiproxy-server) with
// --fail-on-skip, stricter than these tests (an inconclusive scenario fails
// the suite). Their traps (the wrong sets) still run here: the suite has
// none.
func skipWhereTheSuiteRuns(t *testing.T) {
	t.Helper()
	if os.Getenv("RETRYLAB_CI_SUITE") == "1" {
		t.Skip("RETRYLAB_CI_SUITE=1: these scenarios run in .ci/chaos.sh's suite (twice, --fail-on-skip)")
	}
}
