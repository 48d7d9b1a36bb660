package mock

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
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

func startEnv(t *testing.T, toxi *Toxiproxy, provider string, faults ...scenario.Fault) *testEnv {
	t.Helper()
	return startEnvWith(t, EnvConfig{Toxi: toxi,
		Scenario: &scenario.Scenario{Name: strings.ReplaceAll(t.Name(), "/", "_"), Provider: provider, Attempts: faults}})
}

// startEnvWith starts an Env from cfg (Scenario and Toxi set; Now and
// OnAccept as the test wants) with its journal in a temporary folder, its
// log kept for a failed test, and OnAttempt signalling ended.
func startEnvWith(t *testing.T, cfg EnvConfig) *testEnv {
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
	cfg.OnAttempt = func(ServerAttempt) {
		select {
		case ended <- struct{}{}:
		default:
		}
	}
	env, err := StartEnv(t.Context(), cfg)
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
func waitAttempts(t *testing.T, e *testEnv, n int) []ServerAttempt {
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

func TestEnvOK(t *testing.T) {
	toxi := startToxi(t)
	for _, tc := range []struct {
		name, provider, path, last string
	}{
		{"anthropic", wire.ProviderAnthropic, wire.PathAnthropic, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
		{"openai", wire.ProviderOpenAI, wire.PathOpenAI, "data: [DONE]\n\n"},
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
			as := waitAttempts(t, e, 1)
			a := as[0]
			if a.Status != 200 || a.ClosedBy != trace.ClosedByServer || a.Fault != scenario.FaultOK || a.Path != tc.path {
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
	e := startEnv(t, toxi, wire.ProviderAnthropic,
		scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra, Headers: map[string]string{"x-should-retry": "true"}}},
		scenario.Fault{Kind: fault.Status{Status: 529}})
	resp, body, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
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
	resp, body, err = post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 529 || !strings.Contains(string(body), `"type":"overloaded_error"`) {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
	// Past the end of the list: ok.
	resp, _, err = post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("third attempt: %v %v", resp, err)
	}
	as := waitAttempts(t, e, 3)
	got := []string{}
	for _, a := range as {
		got = append(got, a.Fault)
	}
	if diff := cmp.Diff([]string{scenario.FaultStatus, scenario.FaultStatus, scenario.FaultOK}, got); diff != "" {
		t.Errorf("faults mismatch (-want +got):\n%s", diff)
	}
}

// backends returns the Toxiproxy servers to test against: the embedded one,
// and a real toxiproxy-server when TOXIPROXY_URL is set.
func backends(t *testing.T) map[string]*Toxiproxy {
	t.Helper()
	m := map[string]*Toxiproxy{"embedded": startToxi(t)}
	if u := os.Getenv("TOXIPROXY_URL"); u != "" {
		toxi, err := StartToxiproxy(t.Context(), u)
		if err != nil {
			t.Fatalf("TOXIPROXY_URL=%s: %v", u, err)
		}
		t.Cleanup(func() { toxi.Close() })
		m["real"] = toxi
	}
	return m
}

func TestEnvSSEError(t *testing.T) {
	toxi := startToxi(t)
	e := startEnv(t, toxi, wire.ProviderAnthropic, scenario.Fault{Kind: fault.SSEError{AfterEvents: 3, Type: "overloaded_error"}})
	resp, body, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	events := strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n")
	var names []string
	for _, ev := range events {
		names = append(names, strings.TrimPrefix(strings.SplitN(ev, "\n", 2)[0], "event: "))
	}
	if diff := cmp.Diff([]string{"message_start", "content_block_start", "ping", "error"}, names); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	want := `event: error` + "\n" + `data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	if events[len(events)-1] != want {
		t.Errorf("error event = %q, want %q", events[len(events)-1], want)
	}
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
}

// TestEnvFaults drives every TCP-level fault through the proxy, each
// followed by an ok attempt that must be untouched by the previous
// attempt's toxics.
func TestEnvFaults(t *testing.T) {
	for bname, toxi := range backends(t) {
		t.Run(bname, func(t *testing.T) {
			t.Run("drop", func(t *testing.T) { testDrop(t, toxi) })
			t.Run("reset", func(t *testing.T) { testReset(t, toxi) })
			t.Run("hang", func(t *testing.T) { testHang(t, toxi) })
			t.Run("latency", func(t *testing.T) { testLatency(t, toxi) })
			t.Run("toxics", func(t *testing.T) { testRawToxic(t, toxi) })
		})
	}
}

func testDrop(t *testing.T, toxi *Toxiproxy) {
	e := startEnv(t, toxi, wire.ProviderAnthropic, scenario.Fault{Kind: fault.Drop{AfterBytes: 400}})
	resp, body, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if resp == nil || resp.StatusCode != 200 {
		t.Fatalf("drop: %v %v", resp, err)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("drop: read error = %v, want unexpected EOF", err)
	}
	if len(body) != 400 {
		t.Errorf("drop: client read %d body bytes, want 400", len(body))
	}
	// Regression: with Connection: close, Node's fetch read the cut as a
	// clean end of the stream.
	if resp.Close {
		t.Errorf("drop: response says Connection: close; want keep-alive so that every client sees the cut")
	}
	waitAttempts(t, e, 1)
	resp2, full, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil || resp2.StatusCode != 200 {
		t.Fatalf("after drop: %v %v", resp2, err)
	}
	id1, id2 := resp.Header.Get("request-id"), resp2.Header.Get("request-id")
	got := strings.ReplaceAll(string(body), strings.TrimPrefix(id1, "req_mock"), strings.TrimPrefix(id2, "req_mock"))
	if !strings.HasPrefix(string(full), got) {
		t.Errorf("dropped body is not a prefix of the full stream:\n%s", body)
	}
	as := waitAttempts(t, e, 2)
	if as[0].ClosedBy != trace.ClosedByProxy || as[0].Fault != scenario.FaultDrop {
		t.Errorf("attempt 1 = %+v", as[0])
	}
	if as[1].ClosedBy != trace.ClosedByServer || as[1].Fault != scenario.FaultOK {
		t.Errorf("attempt 2 = %+v", as[1])
	}
}

func testReset(t *testing.T, toxi *Toxiproxy) {
	e := startEnv(t, toxi, wire.ProviderOpenAI, scenario.Fault{Kind: fault.Reset{}})
	_, _, err := post(t, t.Context(), e.BaseURL(), wire.PathOpenAI)
	if err == nil {
		t.Fatal("reset: no error")
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("reset: error = %v, want ECONNRESET", err)
	}
	waitAttempts(t, e, 1)
	resp, _, err := post(t, t.Context(), e.BaseURL(), wire.PathOpenAI)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after reset: %v %v", resp, err)
	}
	as := waitAttempts(t, e, 2)
	if as[0].ClosedBy != trace.ClosedByProxy || as[0].Fault != scenario.FaultReset || as[0].Status != 0 {
		t.Errorf("attempt 1 = %+v", as[0])
	}
	if as[1].Fault != scenario.FaultOK || as[1].Status != 200 {
		t.Errorf("attempt 2 = %+v", as[1])
	}
	if strings.Contains(e.log.String(), "missed") {
		t.Errorf("reset fell back to the mock:\n%s", e.log.String())
	}
}

func testHang(t *testing.T, toxi *Toxiproxy) {
	e := startEnv(t, toxi, wire.ProviderAnthropic, scenario.Fault{Kind: fault.Hang{}})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, _, err := post(t, ctx, e.BaseURL(), wire.PathAnthropic)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hang: error = %v, want deadline exceeded", err)
	}
	as := waitAttempts(t, e, 1)
	a := as[0]
	if a.ClosedBy != trace.ClosedByClient || a.Fault != scenario.FaultHang || a.Path != wire.PathAnthropic || a.Model != "claude-haiku-4-5" {
		t.Errorf("attempt 1 = %+v", a)
	}
	if d := a.Ended.Sub(a.Arrived); d < 150*time.Millisecond {
		t.Errorf("hang ended after %v, before the client gave up", d)
	}
}

func testLatency(t *testing.T, toxi *Toxiproxy) {
	e := startEnv(t, toxi, wire.ProviderAnthropic, scenario.Fault{Kind: fault.Latency{D: scenario.Duration(120 * time.Millisecond)}})
	resp, _, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("latency: %v %v", resp, err)
	}
	a := waitAttempts(t, e, 1)[0]
	if d := a.Ended.Sub(a.Arrived); d < 120*time.Millisecond {
		t.Errorf("latency attempt took %v, want at least 120ms", d)
	}
}

func testRawToxic(t *testing.T, toxi *Toxiproxy) {
	e := startEnv(t, toxi, wire.ProviderAnthropic,
		scenario.Fault{Kind: fault.Toxics{{Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 150}}}})
	// The toxic is in place before attempt 1 connects, with toxicity 1.
	p, err := toxi.Client().Proxy(e.proxyName())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ActiveToxics) != 1 || p.ActiveToxics[0].Type != "latency" || p.ActiveToxics[0].Toxicity != 1 {
		t.Fatalf("toxics before attempt 1 = %+v", p.ActiveToxics)
	}
	resp, _, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("toxics: %v %v", resp, err)
	}
	a := waitAttempts(t, e, 1)[0]
	// Ended is when the proxy delivered the delayed bytes, not when the mock
	// wrote them.
	if d := a.Ended.Sub(a.Arrived); d < 150*time.Millisecond {
		t.Errorf("attempt with a 150ms latency toxic ended after %v", d)
	}
	p, err = toxi.Client().Proxy(e.proxyName())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ActiveToxics) != 0 {
		t.Errorf("toxics after attempt 1 = %+v, want none", p.ActiveToxics)
	}
}

func TestEnvJournal(t *testing.T) {
	toxi := startToxi(t)
	ra := "1"
	e := startEnv(t, toxi, wire.ProviderAnthropic, scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra}}, scenario.Fault{Kind: fault.Reset{}})
	// Like a client with a backoff, wait for the server to finish an attempt
	// before the next one.
	for i := 1; i <= 3; i++ {
		post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
		waitAttempts(t, e, i)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(e.journalPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"sk-", "secret", "Bearer", "x-api-key", "authorization"} {
		if strings.Contains(strings.ToLower(string(raw)), strings.ToLower(s)) {
			t.Errorf("journal contains %q:\n%s", s, raw)
		}
		if strings.Contains(strings.ToLower(e.log.String()), strings.ToLower(s)) {
			t.Errorf("log contains %q", s)
		}
	}
	type row struct {
		Type     string
		Attempt  int
		Fault    string
		Status   int
		ClosedBy string
	}
	var got []row
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var ev trace.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if ev.V != 1 || ev.RunID != "r-test" || ev.TS.IsZero() {
			t.Errorf("event header %+v", ev)
		}
		switch ev.Type {
		case trace.TypeMockRequest:
			var p trace.MockRequest
			if err := ev.Decode(&p); err != nil || p.ArrivedAt.IsZero() {
				t.Errorf("MockRequest %s: %v", ev.Payload, err)
			}
			got = append(got, row{ev.Type, p.Attempt, p.Fault, p.Status, p.ClosedBy})
		case trace.TypeMockResponse:
			var p trace.MockResponse
			if err := ev.Decode(&p); err != nil || p.FinishedAt.IsZero() {
				t.Errorf("MockResponse %s: %v", ev.Payload, err)
			}
			got = append(got, row{ev.Type, p.Attempt, p.Fault, p.Status, p.ClosedBy})
		default:
			t.Errorf("unexpected type %q", ev.Type)
		}
	}
	want := []row{
		{trace.TypeMockRequest, 1, scenario.FaultStatus, 429, ""},
		{trace.TypeMockResponse, 1, scenario.FaultStatus, 429, trace.ClosedByServer},
		{trace.TypeMockRequest, 2, scenario.FaultReset, 0, ""},
		{trace.TypeMockResponse, 2, scenario.FaultReset, 0, trace.ClosedByProxy},
		{trace.TypeMockRequest, 3, scenario.FaultOK, 200, ""},
		{trace.TypeMockResponse, 3, scenario.FaultOK, 200, trace.ClosedByServer},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("journal mismatch (-want +got):\n%s", diff)
	}
}

func TestCloseRemovesProxy(t *testing.T) {
	for bname, toxi := range backends(t) {
		t.Run(bname, func(t *testing.T) {
			e := startEnv(t, toxi, wire.ProviderAnthropic, scenario.Fault{Kind: fault.Reset{}})
			name := e.proxyName()
			ps, err := toxi.Client().Proxies()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := ps[name]; !ok {
				t.Fatalf("proxy %s not listed: %v", name, ps)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if err := e.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			ps, err = toxi.Client().Proxies()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := ps[name]; ok {
				t.Errorf("proxy %s still listed after Close", name)
			}
			if _, err := net.Dial("tcp", strings.TrimPrefix(e.BaseURL(), "http://")); err == nil {
				t.Errorf("proxy port still accepts connections")
			}
		})
	}
}

func TestToxiproxyCloseRemovesProxies(t *testing.T) {
	toxi := startToxi(t)
	// A cancelled context must not stop the cleanup.
	ctx, cancel := context.WithCancel(t.Context())
	sc := &scenario.Scenario{Name: "leak"}
	env, err := StartEnv(ctx, EnvConfig{Scenario: sc, Toxi: toxi})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	cancel()
	c := toxi.Client()
	if err := toxi.Close(); err != nil {
		t.Fatal(err)
	}
	if toxi.Embedded() {
		return // the server is gone with its proxies
	}
	ps, _ := c.Proxies()
	if _, ok := ps[env.proxyName()]; ok {
		t.Errorf("proxy left behind")
	}
}

func TestStartToxiproxyUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = StartToxiproxy(t.Context(), "http://"+addr)
	var te *ToxiproxyError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want *ToxiproxyError", err)
	}
	if !strings.Contains(err.Error(), addr) || !strings.Contains(te.Hint(), "toxiproxy-server") {
		t.Errorf("error %q / hint %q", err, te.Hint())
	}
}

// TestGapResidual measures how far the server's inter-arrival gap
// Arrived(k+1) − Ended(k) is from the client's own wait (from the moment its
// call returned to the moment it started the next one), for each fault kind.
// It asserts nothing about wall-clock time; run it with RETRYLAB_MEASURE=1 -v
// to print the residuals.
func TestGapResidual(t *testing.T) {
	if os.Getenv("RETRYLAB_MEASURE") == "" {
		t.Skip("set RETRYLAB_MEASURE=1 to measure")
	}
	type path struct {
		toxi *Toxiproxy
		mode ProxyMode
	}
	paths := map[string]path{}
	for bname, toxi := range backends(t) {
		paths[bname] = path{toxi, ProxyAlways}
		if bname == "embedded" {
			paths["direct"] = path{toxi, ProxyAuto} // the kinds that need no proxy
		}
	}
	for bname, p := range paths {
		for _, tc := range []struct {
			name string
			f    scenario.Fault
		}{
			{"status", scenario.Fault{Kind: fault.Status{Status: 529}}},
			{"ok", scenario.Fault{}},
			{"sseError", scenario.Fault{Kind: fault.SSEError{AfterEvents: 5}}},
			{"drop", scenario.Fault{Kind: fault.Drop{AfterBytes: 400}}},
			{"reset", scenario.Fault{Kind: fault.Reset{}}},
			{"latencyToxic", scenario.Fault{Kind: fault.Toxics{{Type: "latency", Attributes: map[string]any{"latency": 50}}}}},
		} {
			if p.mode == ProxyAuto && fault.UsesProxy(tc.f.Kind) {
				continue
			}
			t.Run(bname+"/"+tc.name, func(t *testing.T) {
				const rounds = 20
				faults := make([]scenario.Fault, rounds)
				for i := range faults {
					faults[i] = tc.f
				}
				e := startEnvWith(t, EnvConfig{Toxi: p.toxi, Proxy: p.mode,
					Scenario: &scenario.Scenario{Name: strings.ReplaceAll(t.Name(), "/", "_"), Provider: wire.ProviderAnthropic, Attempts: faults}})
				wait := 50 * time.Millisecond
				var clientEnd []time.Time
				var clientStart []time.Time
				for i := 0; i < rounds; i++ {
					clientStart = append(clientStart, time.Now())
					post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
					clientEnd = append(clientEnd, time.Now())
					time.Sleep(wait) // the client's backoff
				}
				as := waitAttempts(t, e, rounds)
				var worst, sum time.Duration
				for k := 1; k < rounds; k++ {
					server := as[k].Arrived.Sub(as[k-1].Ended)
					client := clientStart[k].Sub(clientEnd[k-1])
					r := server - client
					sum += r
					if r.Abs() > worst.Abs() {
						worst = r
					}
				}
				t.Logf("%s/%s (path %s): server gap − client wait: mean %v, worst %v", bname, tc.name, e.Path(), sum/(rounds-1), worst)
			})
		}
	}
}

func TestEnvNonStreaming(t *testing.T) {
	toxi := startToxi(t)
	e := startEnv(t, toxi, wire.ProviderAnthropic)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.BaseURL()+wire.PathAnthropic,
		strings.NewReader(`{"model":"claude-haiku-4-5","max_tokens":64,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		Type       string `json:"type"`
		StopReason string `json:"stop_reason"`
		Model      string `json:"model"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	want := struct{ Type, StopReason, Model string }{"message", "end_turn", "claude-haiku-4-5"}
	if diff := cmp.Diff(want, struct{ Type, StopReason, Model string }{m.Type, m.StopReason, m.Model}); diff != "" {
		t.Errorf("message mismatch (-want +got):\n%s", diff)
	}
}

// TestEnvKeepAliveClient: a client that keeps connections alive (Node's
// fetch under the official SDKs does) still meets one attempt per connection
// and gets every response whole, although the heads say keep-alive.
func TestEnvKeepAliveClient(t *testing.T) {
	toxi := startToxi(t)
	e := startEnv(t, toxi, wire.ProviderAnthropic)
	c := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(c.CloseIdleConnections)
	const n = 5
	for i := range n {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.BaseURL()+wire.PathAnthropic,
			strings.NewReader(`{"model":"claude-haiku-4-5","stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !strings.HasSuffix(string(body), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") {
			t.Fatalf("request %d: %v, body ends %q", i+1, err, tail(body))
		}
		// no wait: the next request may pick the idle connection at once
	}
	var got []string
	for _, a := range waitAttempts(t, e, n) {
		got = append(got, fmt.Sprintf("%d %s %s", a.Status, a.Fault, a.ClosedBy))
	}
	want := slices.Repeat([]string{fmt.Sprintf("200 %s %s", scenario.FaultOK, trace.ClosedByServer)}, n)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attempts mismatch (-want +got):\n%s", diff)
	}
}

// TestEnvNonAttempts: a GET, a wrong path and a connection that sends
// nothing are not attempts and consume no fault (side_test.go: the side
// requests the mock answers with 200).
func TestEnvNonAttempts(t *testing.T) {
	toxi := startToxi(t)
	e := startEnv(t, toxi, wire.ProviderAnthropic, scenario.Fault{Kind: fault.Status{Status: 529}})
	get := func(method, path string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, e.BaseURL()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		errType      string
	}{
		{http.MethodGet, "/v1/nothing", 404, "not_found_error"},
		{http.MethodGet, wire.PathAnthropic, 405, "invalid_request_error"},
		{http.MethodPost, "/v1/complete", 404, "not_found_error"},
	} {
		status, body := get(tc.method, tc.path)
		var v struct {
			Type  string `json:"type"`
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Errorf("%s %s: body %q: %v", tc.method, tc.path, body, err)
		}
		if status != tc.status || v.Type != "error" || v.Error.Type != tc.errType {
			t.Errorf("%s %s = %d %+v, want %d %s", tc.method, tc.path, status, v, tc.status, tc.errType)
		}
	}
	c, err := net.Dial("tcp", strings.TrimPrefix(e.BaseURL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	resp, _, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil || resp.StatusCode != 529 {
		t.Fatalf("first POST: %v %v (want 529: the fault was not consumed)", resp, err)
	}
	resp, _, err = post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("second POST: %v %v", resp, err)
	}
	as := waitAttempts(t, e, 2)
	var got []string
	for _, a := range as {
		got = append(got, fmt.Sprintf("%d %s %d %s", a.N, a.Fault, a.Status, a.Path))
	}
	want := []string{"1 status 529 /v1/messages", "2 ok 200 /v1/messages"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
}

// TestEnvDurationRounding: the journal's durationMs and the log line round
// the attempt's duration the same way (it used to truncate in one).
func TestEnvDurationRounding(t *testing.T) {
	toxi := startToxi(t)
	var mu sync.Mutex
	clock := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { // 0.9 ms per reading: never a whole millisecond
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(900 * time.Microsecond)
		return clock
	}
	path := filepath.Join(t.TempDir(), "server.jsonl")
	j, err := trace.Create(path, "r-test")
	if err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	ended := make(chan ServerAttempt, 1)
	sc := &scenario.Scenario{Name: "rounding", Provider: wire.ProviderAnthropic, Attempts: []scenario.Fault{{Kind: fault.Status{Status: 529}}}}
	env, err := StartEnv(t.Context(), EnvConfig{Scenario: sc, Toxi: toxi, Journal: j, RunID: "r-test", Log: log, Now: now,
		OnAttempt: func(a ServerAttempt) { ended <- a }})
	if err != nil {
		t.Fatal(err)
	}
	post(t, t.Context(), env.BaseURL(), wire.PathAnthropic)
	a := <-ended
	env.Close()
	j.Close()
	want := a.Ended.Sub(a.Arrived).Round(time.Millisecond)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got int64 = -1
	sc2 := bufio.NewScanner(bytes.NewReader(raw))
	for sc2.Scan() {
		var ev trace.Event
		if json.Unmarshal(sc2.Bytes(), &ev) == nil && ev.Type == trace.TypeMockResponse {
			var p trace.MockResponse
			if err := ev.Decode(&p); err != nil {
				t.Fatal(err)
			}
			got = p.DurationMs
		}
	}
	if got != want.Milliseconds() {
		t.Errorf("journal durationMs = %d, want %d (the duration %v rounded)", got, want.Milliseconds(), a.Ended.Sub(a.Arrived))
	}
	if s := fmt.Sprintf(", %s, closed by", want); !strings.Contains(log.String(), s) {
		t.Errorf("log lacks %q:\n%s", s, log.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestEnvJournalError: a journal that cannot be written is logged and kept,
// not ignored.
func TestEnvJournalError(t *testing.T) {
	toxi := startToxi(t)
	log := &syncBuffer{}
	ended := make(chan ServerAttempt, 1)
	sc := &scenario.Scenario{Name: "journal-error", Provider: wire.ProviderAnthropic}
	env, err := StartEnv(t.Context(), EnvConfig{Scenario: sc, Toxi: toxi, Journal: trace.NewWriter(failingWriter{}, "r"),
		RunID: "r", Log: log, OnAttempt: func(a ServerAttempt) { ended <- a }})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if resp, _, err := post(t, t.Context(), env.BaseURL(), wire.PathAnthropic); err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST: %v %v", resp, err)
	}
	<-ended
	if err := env.JournalErr(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("JournalErr = %v, want disk full", err)
	}
	if !strings.Contains(log.String(), "journal: writing MockRequest: disk full") {
		t.Errorf("log lacks the journal error:\n%s", log.String())
	}
}

// TestCloseRecordsEveryEnd is the regression test of a gap of 2562047h:
// a client that retried at once finished while the mock was still
// switching the proxy to the next attempt (a slow proxy API on a loaded
// machine), and the runner read the attempts before Close, with the
// previous attempt's end still zero. Close must wait for every attempt's
// end to be recorded, and that end is when the peer went, not the close.
func TestCloseRecordsEveryEnd(t *testing.T) {
	toxi := startToxi(t)
	e := startEnvWith(t, EnvConfig{Toxi: toxi, Proxy: ProxyAlways, // the switch happens on the proxy path only
		Scenario: &scenario.Scenario{Name: t.Name(), Attempts: []scenario.Fault{{Kind: fault.Status{Status: 529}}}}})
	e.toxMu.Lock() // the proxy API is "slow": switchTo blocks
	resp, _, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil {
		e.toxMu.Unlock()
		t.Fatal(err)
	}
	if resp.StatusCode != 529 {
		t.Errorf("status = %d, want 529", resp.StatusCode)
	}
	if as := e.Attempts(); len(as) != 1 || !as[0].Ended.IsZero() {
		t.Errorf("before the switch: attempts = %+v, want one with no end yet", as)
	}
	closed := make(chan time.Time)
	go func() {
		e.Close()
		closed <- time.Now()
	}()
	e.toxMu.Unlock()
	at := <-closed
	as := e.Attempts()
	if len(as) != 1 || as[0].Ended.IsZero() || as[0].Ended.After(at) || as[0].Ended.Before(as[0].Arrived) {
		t.Fatalf("after Close: attempts = %+v (closed at %v), want its end recorded", as, at)
	}
}
