package ticket

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/trace"
)

// board is a ticket board writing its events to a buffer.
func board(t *testing.T, tickets ...Ticket) (*Board, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	b := &Board{Trace: trace.NewWriter(&buf, "tickets")}
	for _, tk := range tickets {
		if err := b.Add(tk); err != nil {
			t.Fatal(err)
		}
	}
	return b, &buf
}

// failUntilOnHold claims and fails ticket id with errMsg, each time as soon
// as Ready lets it be claimed, until it is on hold; it returns the delays
// (retry_after − the failure's time) and the times it failed.
func failUntilOnHold(t *testing.T, b *Board, id, errMsg string, now time.Time) (delays []time.Duration, end time.Time) {
	t.Helper()
	for i := 0; i < 10; i++ {
		ready := b.Ready(now, 0)
		if len(ready) != 1 || ready[0].ID != id {
			t.Fatalf("Ready(%v) = %+v, want %s", now, ready, id)
		}
		if _, err := b.Claim(id, now); err != nil {
			t.Fatal(err)
		}
		tk, _, err := b.Fail(id, errMsg, now)
		if err != nil {
			t.Fatal(err)
		}
		if tk.State == OnHold {
			return delays, now
		}
		delays = append(delays, tk.RetryAfter.Sub(now))
		// Not claimable a moment before its retry_after...
		if early := b.Ready(tk.RetryAfter.Add(-time.Millisecond), 0); len(early) != 0 {
			t.Fatalf("ticket ready %v before its retry_after", time.Millisecond)
		}
		if _, err := b.Claim(id, tk.RetryAfter.Add(-time.Millisecond)); err == nil {
			t.Fatal("claimed before its retry_after")
		}
		now = tk.RetryAfter
	}
	t.Fatal("never went on hold")
	return nil, now
}

// TestSeed002TimeoutRetriedWithBackoff: "Simulate API timeout → verify
// retry with backoff".
func TestSeed002TimeoutRetriedWithBackoff(t *testing.T) {
	t.Parallel()
	b, _ := board(t, Ticket{ID: "T-1", CreatedAt: t0})
	b.Claim("T-1", t0)
	tk, d, err := b.Fail("T-1", "request timed out after 60s", t0)
	if err != nil {
		t.Fatal(err)
	}
	if d.Category != CategoryTransient || tk.State != Ready || tk.RetryCount != 1 || !tk.RetryAfter.Equal(t0.Add(time.Second)) {
		t.Errorf("after a timeout: %+v, decision %+v; want ready, retry_count 1, retry_after +1s", tk, d)
	}
}

// TestSeed002SyntaxErrorOneRetryThenOnHold: "Simulate syntax error →
// verify single retry then on_hold".
func TestSeed002SyntaxErrorOneRetryThenOnHold(t *testing.T) {
	t.Parallel()
	b, _ := board(t, Ticket{ID: "T-2", CreatedAt: t0})
	delays, _ := failUntilOnHold(t, b, "T-2", "SyntaxError: Unexpected token '}'", t0)
	if diff := cmp.Diff([]time.Duration{0}, delays); diff != "" {
		t.Errorf("delays mismatch (-want +got):\n%s", diff)
	}
	tk, _ := b.Get("T-2")
	if tk.State != OnHold || tk.HoldReason != "Max retries exceeded: code_error" || tk.RetryCount != 1 {
		t.Errorf("ticket = %+v", tk)
	}
}

// TestSeed002TransientThreeRetriesThenOnHold: "Simulate transient error →
// verify 3 retries then on_hold", waiting 1s, 2s, 4s.
func TestSeed002TransientThreeRetriesThenOnHold(t *testing.T) {
	t.Parallel()
	b, _ := board(t, Ticket{ID: "T-3", CreatedAt: t0})
	delays, _ := failUntilOnHold(t, b, "T-3", "503 Service Unavailable", t0)
	if diff := cmp.Diff(secs(1, 2, 4), delays); diff != "" {
		t.Errorf("delays mismatch (-want +got):\n%s", diff)
	}
	if tk, _ := b.Get("T-3"); tk.State != OnHold || tk.HoldReason != "Max retries exceeded: transient" || tk.RetryCount != 3 {
		t.Errorf("ticket = %+v", tk)
	}
}

// TestSeed002RateLimitE2EHumanReleases is the seed's E2E test: a ticket
// that fails with a rate limit retries with exponential backoff, goes on
// hold after its retries, a person releases it, and it is claimed and done.
// Every transition is a TicketTransition with the seed's activity fields.
func TestSeed002RateLimitE2EHumanReleases(t *testing.T) {
	t.Parallel()
	b, buf := board(t, Ticket{ID: "T-4", CreatedAt: t0})
	delays, end := failUntilOnHold(t, b, "T-4", "429 Too Many Requests: rate limit exceeded", t0)
	if diff := cmp.Diff(secs(1, 2, 4), delays); diff != "" {
		t.Errorf("delays mismatch (-want +got):\n%s", diff)
	}
	if len(b.Ready(end.Add(time.Hour), 0)) != 0 {
		t.Error("a ticket on hold is ready")
	}
	if _, err := b.Release("T-4", ""); err == nil {
		t.Error("released without a person")
	}
	tk, err := b.Release("T-4", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if tk.State != Ready || tk.RetryCount != 0 || tk.HoldReason != "" || !tk.RetryAfter.IsZero() {
		t.Errorf("released ticket = %+v", tk)
	}
	if _, err := b.Claim("T-4", end); err != nil {
		t.Fatal(err)
	}
	if tk, err := b.Succeed("T-4"); err != nil || tk.State != NeedsReview {
		t.Errorf("Succeed = %+v, %v", tk, err)
	}

	evs := decodeEvents(t, buf.Bytes())
	var path []string
	for _, e := range eventsOf[trace.TicketTransition](t, evs, trace.TypeTicketTransition) {
		path = append(path, e.Event+":"+e.From+">"+e.To+"@"+e.Actor)
	}
	want := []string{
		"claim:ready>in_progress@system", "retry:in_progress>ready@system",
		"claim:ready>in_progress@system", "retry:in_progress>ready@system",
		"claim:ready>in_progress@system", "retry:in_progress>ready@system",
		"claim:ready>in_progress@system", "hold:in_progress>on_hold@system",
		"release:on_hold>ready@alice", "claim:ready>in_progress@system", "succeed:in_progress>needs_review@system",
	}
	if diff := cmp.Diff(want, path); diff != "" {
		t.Errorf("transitions mismatch (-want +got):\n%s", diff)
	}
	tr := eventsOf[trace.TicketTransition](t, evs, trace.TypeTicketTransition)
	yes, no := true, false
	two := 2
	wantRetry := trace.TicketTransition{TicketID: "T-4", From: "in_progress", To: "ready", Event: "retry", Actor: "system",
		ErrorCategory: "transient", CurrentAttempt: 1, MaxRetries: 3, ShouldRetry: &yes, NextDelayMs: 1000, RetryCount: 1,
		RetryAfter: t0.Add(time.Second), AttemptsRemaining: &two, Error: "429 Too Many Requests: rate limit exceeded"}
	if diff := cmp.Diff(wantRetry, tr[1]); diff != "" {
		t.Errorf("first retry mismatch (-want +got):\n%s", diff)
	}
	if h := tr[7]; h.ShouldRetry == nil || *h.ShouldRetry != no || h.CurrentAttempt != 4 || h.HoldReason != "Max retries exceeded: transient" || h.AttemptsRemaining != nil {
		t.Errorf("hold = %+v", h)
	}
	// Each failure also wrote the seed's retry_decision activity.
	if got := len(eventsOf[trace.RetryDecision](t, evs, trace.TypeRetryDecision)); got != 4 {
		t.Errorf("%d RetryDecision events, want 4", got)
	}
}

// TestTicketTransitionsRejected: the state machine has no other edges.
func TestTicketTransitionsRejected(t *testing.T) {
	t.Parallel()
	b, buf := board(t, Ticket{ID: "R", CreatedAt: t0}, Ticket{ID: "P", State: InProgress})
	tests := []struct {
		name string
		do   func() error
	}{
		{"succeed a ready ticket", func() error { _, err := b.Succeed("R"); return err }},
		{"fail a ready ticket", func() error { _, _, err := b.Fail("R", "x", t0); return err }},
		{"release a ready ticket", func() error { _, err := b.Release("R", "bob"); return err }},
		{"claim a ticket in progress", func() error { _, err := b.Claim("P", t0); return err }},
		{"release a ticket in progress", func() error { _, err := b.Release("P", "bob"); return err }},
		{"claim an unknown ticket", func() error { _, err := b.Claim("nope", t0); return err }},
		{"add a ticket twice", func() error { return b.Add(Ticket{ID: "R"}) }},
	}
	for _, tt := range tests {
		var te *Error
		if err := tt.do(); !errors.As(err, &te) {
			t.Errorf("%s: err = %v, want an *Error", tt.name, err)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("rejected transitions wrote events: %s", buf)
	}
}

// TestReadyOrder: seed 002's getReadyTickets: ready, past retry_after,
// priority first, then the oldest, up to the limit.
func TestReadyOrder(t *testing.T) {
	t.Parallel()
	b, _ := board(t,
		Ticket{ID: "low-old", Priority: 1, CreatedAt: t0},
		Ticket{ID: "high-new", Priority: 5, CreatedAt: t0.Add(time.Hour)},
		Ticket{ID: "high-old", Priority: 5, CreatedAt: t0},
		Ticket{ID: "waiting", Priority: 9, CreatedAt: t0, RetryAfter: t0.Add(time.Minute)},
		Ticket{ID: "held", Priority: 9, State: OnHold},
	)
	var got []string
	for _, tk := range b.Ready(t0, 0) {
		got = append(got, tk.ID)
	}
	if diff := cmp.Diff([]string{"high-old", "high-new", "low-old"}, got); diff != "" {
		t.Errorf("Ready mismatch (-want +got):\n%s", diff)
	}
	if r := b.Ready(t0.Add(time.Minute), 2); len(r) != 2 || r[0].ID != "waiting" {
		t.Errorf("Ready at retry_after, limit 2 = %+v", r)
	}
}
