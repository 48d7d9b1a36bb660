package mock

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// fakeClock is the Env's clock in tests that check what it stamps.
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
	e := startEnvWith(t, EnvConfig{Toxi: startToxi(t), Now: clock.Now, OnAccept: func() { accepted <- struct{}{} },
		Scenario: &scenario.Scenario{Name: strings.ReplaceAll(t.Name(), "/", "_"), Provider: wire.ProviderAnthropic, Attempts: faults}})
	return e, accepted
}

const rawRequest = "POST /v1/messages HTTP/1.1\r\nHost: mock\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"

func rawPost() string {
	body := `{"model":"claude-haiku-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	return strings.Replace(strings.Replace(rawRequest, "%d", itoa(len(body)), 1), "%s", body, 1)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestArrivalIsFirstRequestByte: a client that opens its connection early
// and sends its request later arrives when it sends, not when it connected.
func TestArrivalIsFirstRequestByte(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	e, accepted := startClockedEnv(t, clock)
	t0 := clock.Now()
	c, err := net.Dial("tcp", strings.TrimPrefix(e.BaseURL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-accepted // the proxy dialed the mock, which stamped Connected at t0
	clock.Advance(2 * time.Second)
	if _, err := io.WriteString(c, rawPost()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	c.Close()
	a := waitAttempts(t, e, 1)[0]
	if !a.Connected.Equal(t0) || !a.Arrived.Equal(t0.Add(2*time.Second)) {
		t.Errorf("Connected %v, Arrived %v; want %v and %v", a.Connected, a.Arrived, t0, t0.Add(2*time.Second))
	}
}
