package chaos

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
)

// TestGapFromAbandonedErrorBody reproduces Node's fetch (undici) under an
// SDK's retry: it reads the head of a large error response, abandons the
// body, opens a fresh connection at once, waits its backoff and sends the
// retry on that connection. The gap must be the backoff, not ~0.
func TestGapFromAbandonedErrorBody(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	big := strings.Repeat("Overloaded. ", 6000) // a ~70 KB error body
	e, accepted := startClockedEnv(t, clock, scenario.Fault{Kind: fault.Status{Status: 529, Message: big}})
	addr := strings.TrimPrefix(e.BaseURL(), "http://")

	c1, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	<-accepted
	if _, err := io.WriteString(c1, rawPost()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c1)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 529 {
		t.Fatalf("status %d, want 529", resp.StatusCode)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	// The fresh connection opens while the first is still half read.
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	<-accepted
	c1.Close()
	ended := waitAttempts(t, e, 1)[0].Ended
	clock.Advance(2 * time.Second) // the backoff
	if _, err := io.WriteString(c2, rawPost()); err != nil {
		t.Fatal(err)
	}
	resp, err = http.ReadResponse(bufio.NewReader(c2), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	c2.Close()
	as := waitAttempts(t, e, 2)
	sc := &scenario.Scenario{Attempts: []scenario.Fault{{Kind: fault.Status{Status: 529}}}}
	ob, _ := verify.Observe(sc, as, "", 1)
	if len(ob.ServerWaits) != 1 || ob.ServerWaits[0].Gap != 2*time.Second {
		t.Fatalf("server waits %+v, want one of 2s (attempt 1 ended %v, attempt 2 connected %v, arrived %v)",
			ob.ServerWaits, ended, as[1].Connected, as[1].Arrived)
	}
	if !as[1].Connected.Before(as[1].Arrived) {
		t.Errorf("attempt 2 connected %v, arrived %v: the connection was opened before the backoff", as[1].Connected, as[1].Arrived)
	}
}
