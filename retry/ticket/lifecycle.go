package ticket

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// State is a ticket's state in seed 002's state machine.
type State string

// Ticket states.
const (
	Ready       State = "ready"
	InProgress  State = "in_progress"
	NeedsReview State = "needs_review"
	OnHold      State = "on_hold"
)

// SystemActor is the actor of the transitions the system makes; Release is
// made by a person, named in the trace.
const SystemActor = "system"

// Ticket is one unit of agent work (seed 002's tickets row).
type Ticket struct {
	ID         string
	State      State
	Priority   int       // higher first
	CreatedAt  time.Time // older first among equal priorities
	RetryCount int
	RetryAfter time.Time // not picked up before it; zero: at once
	HoldReason string
	Error      string // the last failure's message
}

// Board is seed 002's ticket lifecycle, in memory:
//
//	ready ──Claim──▶ in_progress ──Succeed──▶ needs_review
//	  ▲                  │
//	  │                  └──Fail──▶ ready (retry_after set, retry_count+1)
//	  │                         or on_hold (hold_reason), as Decide says
//	  └──────Release (a person)─── on_hold
//
// Ready(now) lists the tickets an agent may claim: ready, and past their
// retry_after. Each transition writes a TicketTransition event (with seed
// 002's activity fields on a failure), and Fail writes the RetryDecision of
// the seed's activity log too. A Board is safe for concurrent use; its
// zero value is empty and ready (Trace nil: no events).
type Board struct {
	Trace *trace.Writer
	mu    sync.Mutex
	byID  map[string]*Ticket
}

// Error is a transition the state machine does not have, or an
// unknown ticket.
type Error struct {
	ID    string
	State State  // "" for an unknown ticket
	Event string // trace.Ticket*
	Msg   string
}

func (e *Error) Error() string { return "ticket " + e.ID + ": " + e.Msg }

// Add puts t on the board; a zero State is ready. A ticket id already there
// is an error.
func (b *Board) Add(t Ticket) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byID == nil {
		b.byID = map[string]*Ticket{}
	}
	if _, dup := b.byID[t.ID]; dup {
		return &Error{ID: t.ID, Msg: "already added"}
	}
	if t.State == "" {
		t.State = Ready
	}
	b.byID[t.ID] = &t
	return nil
}

// Get returns a copy of the ticket id.
func (b *Board) Get(id string) (Ticket, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.byID[id]
	if !ok {
		return Ticket{}, false
	}
	return *t, true
}

// Ready returns up to limit tickets an agent may claim at now (seed 002's
// getReadyTickets): state ready and retry_after unset or not after now,
// highest priority first, then oldest. limit ≤ 0: all of them.
func (b *Board) Ready(now time.Time, limit int) []Ticket {
	b.mu.Lock()
	var out []Ticket
	for _, t := range b.byID {
		if t.State == Ready && !t.RetryAfter.After(now) {
			out = append(out, *t)
		}
	}
	b.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Priority != out[j].Priority {
			return out[i].Priority > out[j].Priority
		}
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// take returns the ticket id if it is in state from, else an *Error.
// b.mu is held.
func (b *Board) take(id string, from State, event string) (*Ticket, error) {
	t, ok := b.byID[id]
	if !ok {
		return nil, &Error{ID: id, Event: event, Msg: "no such ticket"}
	}
	if t.State != from {
		return nil, &Error{ID: id, State: t.State, Event: event,
			Msg: fmt.Sprintf("cannot %s a ticket that is %s (only one that is %s)", event, t.State, from)}
	}
	return t, nil
}

// Claim moves a ready ticket to in_progress at now; a ticket whose
// retry_after is still ahead cannot be claimed yet.
func (b *Board) Claim(id string, now time.Time) (Ticket, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.take(id, Ready, trace.TicketClaim)
	if err != nil {
		return Ticket{}, err
	}
	if t.RetryAfter.After(now) {
		return Ticket{}, &Error{ID: id, State: t.State, Event: trace.TicketClaim,
			Msg: "not before its retry_after " + t.RetryAfter.UTC().Format(time.RFC3339)}
	}
	t.State = InProgress
	b.emit(t, Ready, trace.TicketClaim, SystemActor, trace.TicketTransition{})
	return *t, nil
}

// Succeed moves an in_progress ticket to needs_review.
func (b *Board) Succeed(id string) (Ticket, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.take(id, InProgress, trace.TicketSucceed)
	if err != nil {
		return Ticket{}, err
	}
	t.State, t.Error = NeedsReview, ""
	b.emit(t, InProgress, trace.TicketSucceed, SystemActor, trace.TicketTransition{})
	return *t, nil
}

// Fail is seed 002's retryOrFailTicket for an in_progress ticket that failed
// with errMsg at now: ClassifyError and Decide give the decision; a
// retry puts the ticket back to ready with retry_after = now + the delay and
// retry_count + 1, else it goes on_hold with hold_reason "Max retries
// exceeded: <category>". The RetryDecision and the TicketTransition are
// written to Trace.
func (b *Board) Fail(id, errMsg string, now time.Time) (Ticket, Decision, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.take(id, InProgress, "fail")
	if err != nil {
		return Ticket{}, Decision{}, err
	}
	d := Decide(ClassifyError(errMsg), t.RetryCount)
	EmitDecision(b.Trace, t.ID, t.RetryCount, d)
	retry := d.ShouldRetry
	ev := trace.TicketTransition{ErrorCategory: d.Category, CurrentAttempt: t.RetryCount + 1, MaxRetries: d.MaxRetries,
		ShouldRetry: &retry, NextDelayMs: d.NextDelay.Milliseconds(), Error: provider.Redact(truncate(errMsg, 500))}
	t.Error = errMsg
	event := trace.TicketHold
	if d.ShouldRetry {
		t.State, t.RetryCount, t.RetryAfter = Ready, t.RetryCount+1, now.Add(d.NextDelay)
		left := d.AttemptsRemaining
		ev.RetryAfter, ev.AttemptsRemaining, event = t.RetryAfter, &left, trace.TicketRetry
	} else {
		t.State, t.HoldReason = OnHold, "Max retries exceeded: "+d.Category
		ev.HoldReason = t.HoldReason
	}
	b.emit(t, InProgress, event, SystemActor, ev)
	return *t, d, nil
}

// Release hands an on_hold ticket back to the agents (seed 002: "human can
// release from on_hold"): ready at once, retry_count 0, hold_reason and
// retry_after cleared. person names who did it, for the trace; it is
// required.
func (b *Board) Release(id, person string) (Ticket, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	person = strings.TrimSpace(person)
	if person == "" || person == SystemActor {
		return Ticket{}, &Error{ID: id, Event: trace.TicketRelease, Msg: "release needs the person who releases it"}
	}
	t, err := b.take(id, OnHold, trace.TicketRelease)
	if err != nil {
		return Ticket{}, err
	}
	t.State, t.RetryCount, t.RetryAfter, t.HoldReason = Ready, 0, time.Time{}, ""
	b.emit(t, OnHold, trace.TicketRelease, person, trace.TicketTransition{})
	return *t, nil
}

// emit writes t's transition from from, filling in the ticket's own fields.
func (b *Board) emit(t *Ticket, from State, event, actor string, ev trace.TicketTransition) {
	ev.TicketID, ev.From, ev.To, ev.Event, ev.Actor, ev.RetryCount = t.ID, string(from), string(t.State), event, actor, t.RetryCount
	b.Trace.Emit(trace.TypeTicketTransition, ev)
}

// truncate cuts s to n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "\n[... truncated]"
}
