package mock

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// postReuse sends one streaming request through c (a keep-alive pool) and
// says whether it went out on a reused connection.
func postReuse(t *testing.T, c *http.Client, url string) (status int, reused bool, err error) {
	t.Helper()
	body := `{"model":"claude-haiku-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+wire.PathAnthropic, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
	}))
	resp, err := c.Do(req)
	if err != nil {
		return 0, reused, err
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		return resp.StatusCode, reused, err
	}
	return resp.StatusCode, reused, nil
}

// TestEnvKeepAlive: a complete answer keeps its connection, as the
// providers do, so a pooling client sends its next attempt on it; every
// request is still one attempt, journaled. A fault that must end the
// connection (drop, reset, hang …) still ends it, and so does an answer
// whose next attempt needs toxics on the proxy before it connects (reset).
func TestEnvKeepAlive(t *testing.T) {
	toxi := startToxi(t)
	for _, tc := range []struct {
		name   string
		faults []scenario.Fault
		status []int
		reused []bool // of attempts 2…
	}{
		{"ok ok ok", nil, []int{200, 200, 200}, []bool{true, true}},
		{"529 then ok", []scenario.Fault{{Kind: fault.Status{Status: 529}}}, []int{529, 200, 200}, []bool{true, true}},
		{"sseError ends its connection", []scenario.Fault{{Kind: fault.SSEError{AfterEvents: 2, Type: "overloaded_error"}}}, []int{200, 200, 200}, []bool{false, true}},
		{"before a reset, a fresh connection", []scenario.Fault{{}, {Kind: fault.Reset{}}}, []int{200, 0, 200}, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, toxi, wire.ProviderAnthropic, tc.faults...)
			c := &http.Client{Transport: &http.Transport{}}
			defer c.CloseIdleConnections()
			for i, want := range tc.status {
				status, reused, err := postReuse(t, c, e.BaseURL())
				if want == 0 {
					if err == nil {
						t.Errorf("attempt %d: status %d, want a failed connection", i+1, status)
					}
				} else if err != nil || status != want {
					t.Fatalf("attempt %d: status %d, %v; want %d", i+1, status, err, want)
				}
				if i > 0 && reused != tc.reused[i-1] {
					t.Errorf("attempt %d: reused %v, want %v", i+1, reused, tc.reused[i-1])
				}
				waitAttempts(t, e, i+1)
			}
			as := e.Attempts()
			if len(as) != len(tc.status) {
				t.Fatalf("%d attempts, want %d: %+v", len(as), len(tc.status), as)
			}
			for i, a := range as {
				if a.Ended.IsZero() || a.Ended.Before(a.Arrived) || a.Status != tc.status[i] {
					t.Errorf("attempt %d: %+v", i+1, a)
				}
			}
			if n := strings.Count(readJournal(t, e.journalPath), `"MockResponse"`); n != len(tc.status) {
				t.Errorf("journal has %d MockResponse events, want %d", n, len(tc.status))
			}
		})
	}
}

// TestCloseIdle: a pooling client's request on the connection kept from
// the attempt before meets a closed socket (EOF, no response byte), is
// journaled as attempt 2 with no status, closed by the server; the retry
// on a fresh connection gets its answer.
func TestCloseIdle(t *testing.T) {
	toxi := startToxi(t)
	e := startEnv(t, toxi, wire.ProviderAnthropic, scenario.Fault{}, scenario.Fault{Kind: fault.CloseIdle{}})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	if status, _, err := postReuse(t, c, e.BaseURL()); err != nil || status != 200 {
		t.Fatalf("attempt 1: %d %v", status, err)
	}
	waitAttempts(t, e, 1)
	_, reused, err := postReuse(t, c, e.BaseURL())
	if !reused || err == nil || !errors.Is(err, io.EOF) {
		t.Fatalf("attempt 2: reused %v, error %v; want EOF on the pooled connection", reused, err)
	}
	status, reused, err := postReuse(t, c, e.BaseURL())
	if err != nil || status != 200 || reused {
		t.Fatalf("attempt 3: %d reused %v %v; want 200 on a fresh connection", status, reused, err)
	}
	as := waitAttempts(t, e, 3)
	if a := as[1]; a.Fault != "closeIdle" || a.Status != 0 || a.Bytes != 0 || a.ClosedBy != trace.ClosedByServer || a.Path != wire.PathAnthropic {
		t.Errorf("attempt 2 = %+v", a)
	}
	if len(as) != 3 {
		t.Errorf("%d attempts, want 3", len(as))
	}
}

func readJournal(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
