package ticket_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry/ticket"
)

func ExampleDecide() {
	d := ticket.Decide(ticket.ClassifyError("429 rate limit exceeded"), 1)
	fmt.Println(d.Category, d.ShouldRetry, d.NextDelay, d.AttemptsRemaining)
	// Output:
	// transient true 2s 1
}

// Seed 002: a ticket that keeps failing with a rate limit is retried after
// 1s, 2s and 4s, then put on hold until a person releases it.
func ExampleBoard() {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	board := &ticket.Board{}
	board.Add(ticket.Ticket{ID: "T-1", CreatedAt: now})
	for {
		ready := board.Ready(now, 1)
		if len(ready) == 0 {
			break
		}
		board.Claim("T-1", now)
		t, d, _ := board.Fail("T-1", "429 rate limit exceeded", now)
		fmt.Println(strings.TrimSpace(fmt.Sprint(t.State, " ", t.RetryCount, " ", d.NextDelay, " ", t.HoldReason)))
		now = t.RetryAfter
	}
	t, _ := board.Release("T-1", "alice")
	fmt.Println(t.State, t.RetryCount)
	// Output:
	// ready 1 1s
	// ready 2 2s
	// ready 3 4s
	// on_hold 3 0s Max retries exceeded: transient
	// ready 0
}
