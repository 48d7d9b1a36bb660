package mock

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
)

// TestRetryAfterDateStampedAtArrival: a retryAfterDate fault's HTTP date
// is the attempt's arrival plus the duration, rounded up to the second,
// however long after the scenario was built the attempt comes (a date
// written at build time went stale in a queued scenario: `chaos probe
// --parallel 2`). The date is journaled with the response.
func TestRetryAfterDateStampedAtArrival(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 22, 10, 0, 0, 400_000_000, time.UTC)}
	e, accepted := startClockedEnv(t, clock, scenario.Fault{Kind: fault.Status{Status: 429, RetryAfterDate: scenario.Duration(6 * time.Second)}})
	// The scenario waits its turn and its client starts: 40s pass.
	clock.Advance(40 * time.Second)
	c, err := net.Dial("tcp", strings.TrimPrefix(e.BaseURL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-accepted
	select {
	case <-e.FirstRequest():
		t.Error("FirstRequest closed by a connection that sent nothing yet")
	default:
	}
	if _, err := io.WriteString(c, rawPost()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	c.Close()
	// Arrived 10:00:40.4; plus 6s is 10:00:46.4, rounded up: 10:00:47.
	want := "Sun, 22 Nov 2026 10:00:47 GMT"
	if got := resp.Header.Get("Retry-After"); resp.StatusCode != 429 || got != want {
		t.Errorf("status %d, Retry-After %q; want 429, %q", resp.StatusCode, got, want)
	}
	select {
	case <-e.FirstRequest():
	default:
		t.Error("FirstRequest not closed after the first request")
	}
	if a := waitAttempts(t, e, 1)[0]; a.RetryAfter != want {
		t.Errorf("ServerAttempt.RetryAfter = %q, want %q", a.RetryAfter, want)
	}
}

func TestRetryAfterDateRounding(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		arrived time.Time
		want    string
	}{
		{"on a whole second: as it is", at, "Sun, 22 Nov 2026 10:00:06 GMT"},
		{"1ns past: the next second", at.Add(time.Nanosecond), "Sun, 22 Nov 2026 10:00:07 GMT"},
		{"in another zone: GMT", at.In(time.FixedZone("X", 3600)).Add(999 * time.Millisecond), "Sun, 22 Nov 2026 10:00:07 GMT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fault.RetryAfterDate(tt.arrived, 6*time.Second); got != tt.want {
				t.Errorf("retryAfterDate() = %q, want %q", got, tt.want)
			}
		})
	}
}
