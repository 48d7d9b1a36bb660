package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/retrylab/retrylab/retry/errreport"
	"github.com/retrylab/retrylab/trace"
)

var _ error = (*ExhaustedError)(nil)

// ErrExhausted is matched (errors.Is) by every *ExhaustedError.
var ErrExhausted = errors.New("retries exhausted")

// Why retrying stopped: ExhaustedError.Reason. ErrIrreversible's text and
// "rollback failed: ..." are reasons too.
const (
	ReasonNonRetryable      = "non-retryable"
	ReasonAttemptsExhausted = "attempts exhausted"
	ReasonRetryAfterCeiling = "retry-after above ceiling"
	ReasonMaxElapsed        = "max elapsed"
	ReasonBudgetExhausted   = "retry budget exhausted"
	// ReasonThrottled: client-side adaptive throttling (Throttle)
	// rejected the retry locally; it was not sent.
	ReasonThrottled = "throttled locally"
	// ReasonTopOfLadder: the failure would have escalated, but the model is
	// the last of the ladder (seed 004's "Already at most capable model").
	ReasonTopOfLadder = "already at the most capable model"
	// ReasonEscalationDeclined: a switch of model or provider was the way
	// on, and Confirm refused it or the escalation cost cap stopped it.
	ReasonEscalationDeclined = "escalation declined"
)

// ExhaustedError is what Retrier.Do returns when it gives up: the failure was
// not retryable, attempts ran out, or a limit (budget, elapsed time, operation
// safety, the escalation guard) stopped it. errors.Is(err, ErrExhausted) is
// true; Unwrap gives Last.
type ExhaustedError struct {
	Attempts       int   // attempts made, across every target
	Last           error // the last attempt's error
	Classification Classification
	// Reason says why retrying stopped: one of the Reason constants, or
	// ErrIrreversible's text, or "rollback failed: ...".
	Reason string
	// Report is seed 001's ErrorReport of the failure: root cause, step
	// context, recovery actions, retry history. Render it for people with
	// Report.Render.
	Report *errreport.Report
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("giving up after %d attempt(s) (%s, %s): %v", e.Attempts, e.Classification.Type, e.Reason, e.Last)
}

// Is reports ErrExhausted, and ErrIrreversible when that stopped the retries.
func (e *ExhaustedError) Is(target error) bool {
	return target == ErrExhausted || (target == ErrIrreversible && e.Reason == ErrIrreversible.Error())
}

func (e *ExhaustedError) Unwrap() error { return e.Last }

// Attempt identifies one attempt of a logical request, and carries the
// failures before it, so that the request can be rebuilt from them (seed 004
// US-002, retry with error context; seed 001's cache_error, retried without
// the cache parameters).
type Attempt struct {
	Number   int // 1-based across the logical request, fallbacks and ladder included
	Provider string
	Model    string
	// Previous is the failure of the attempt before this one; nil on the
	// first attempt.
	Previous *Failure
	// History holds every earlier failure of the request, oldest first
	// (Previous is its last); the caller's copy.
	History []Failure
}

// Fallbacks is Plandex's fallback chain (seed 001). Empty fields are unset.
type Fallbacks struct {
	LargeContext  string // model for context_too_long
	Error         string // model for other persistent or non-retryable failures
	Provider      string // a different provider, when no model-level fallback applies
	ProviderModel string // the model to use on Provider ("" keeps the model)
}

func (f Fallbacks) empty() bool { return f == Fallbacks{} }

// Retrier runs one logical request under a Policy. Its fields are read-only
// once Do runs; a Retrier may serve many goroutines if Rand is nil or is
// not shared (a *rand.Rand is not safe for concurrent use). Use it through
// a pointer: it keeps the run's escalation spending.
type Retrier struct {
	Policy   *Policy // nil: one attempt, no retries
	Provider string
	Model    string
	// Ladder is the model escalation ladder, e.g. haiku → sonnet → opus.
	// nil: the policy's (Policy.Escalation.Ladder).
	Ladder    []string
	Fallbacks Fallbacks
	Trace     *trace.Writer // nil-safe
	Log       io.Writer     // seed 000 R4 lines; nil discards
	Rand      *rand.Rand    // nil: seeded from time
	Now       func() time.Time
	// TimeScale multiplies every wait as slept; waits are recorded in policy
	// time. The per-attempt timeout is not scaled: it races the network,
	// which runs in real time. 0 or 1: real time.
	TimeScale float64
	// Budget is the retry budget the Retrier shares with others (nil: its
	// policy's budget, if it has one, its own).
	Budget *Budget
	// Throttle is the client-side adaptive throttling the Retrier shares
	// with others (nil: its policy's adaptiveThrottling, if it has one,
	// its own). It gates retries: a retry it rejects is not sent, and the
	// request gives up (ReasonThrottled).
	Throttle *Throttle
	Prices   PriceTable // nil: DefaultPrices
	// OutputTokens is the expected output of a request, for cost estimates
	// (0: 1000).
	OutputTokens int
	Operation    Safety
	// OnSleep, if set, is called after each wait Do slept, with what the
	// timer was set for and when it started and ended (by Now), and with a
	// wait of 0 for a retry at once or a switch of model: a harness that
	// checks the waits a server saw uses it to tell the client's own
	// lateness from a wrong wait.
	OnSleep func(Sleep)
	// OnAttempt, if set, is called once for every attempt that ended, after
	// Run has decided what comes next and before it logs, switches, waits or
	// gives up: a structured account of what the log lines say, for a live
	// display or a harness.
	OnAttempt func(AttemptOutcome)

	// Rollback, if set, is called for a SafeAfterRollback operation before
	// each retry (and before a switch to a fallback), with the attempt that
	// failed; an error stops the retries ("rollback failed: ...").
	Rollback func(ctx context.Context, failed Attempt) error
	// Validate, if set, checks the output of every attempt that succeeded
	// (Run's output; "" under Do): an error turns the attempt into a
	// logical_failure (*LogicalError), retried as the policy says.
	Validate func(output string) error
	// ErrorContext says that the caller rebuilds each retry's request from
	// the failure before it (Attempt.Previous, Attempt.Prompt): every
	// RetryAttempt followed by a retry is marked errorContext: true.
	ErrorContext bool
	// Confirm, if set, is offered every switch of model or provider before
	// it happens, with its cost estimate; an error refuses the switch (an
	// EscalationDeclined event, and the request goes on without it).
	Confirm func(ctx context.Context, offer EscalationOffer) error
	// Registry, if set, keeps every Report of a request given up on.
	Registry *errreport.ErrorRegistry

	spend costLedger // escalation spending of every request of this Retrier

	// own is the Budget and Throttle the Retrier makes itself, once, from
	// its policy's budget and adaptiveThrottling when it has none of its
	// own (limiters).
	own struct {
		once     sync.Once
		budget   *Budget
		throttle *Throttle
	}
}

// noteSleep reports a wait to OnSleep: planned, from start to end(). A
// retry at once and a switch of model are waits of 0.
func (r *Retrier) noteSleep(attempt int, planned time.Duration, start time.Time, end func() time.Time) {
	if r.OnSleep != nil {
		r.OnSleep(Sleep{Attempt: attempt, Planned: planned, Start: start, End: end()})
	}
}

// AttemptOutcome is one ended attempt as OnAttempt reports it.
type AttemptOutcome struct {
	Attempt  int // 1-based over the whole request
	OnTarget int // 1-based on the current provider and model
	Provider string
	Model    string
	// Classification is the failure's; zero when Next is NextDone.
	Classification Classification
	Next           Next
	// Delay (policy time) and DelaySource (trace.DelayRetryAfter,
	// DelayBackoff, ...) of a NextRetry.
	Delay       time.Duration
	DelaySource string
	// SwitchTo is the model (provider/model across providers) of a
	// NextSwitch; Reason says why it switches or gives up.
	SwitchTo string
	Reason   string
}

// Next is what Run does after an attempt.
type Next string

// What comes after an attempt.
const (
	NextDone   Next = "done"    // it succeeded
	NextRetry  Next = "retry"   // a wait, then the same target again
	NextSwitch Next = "switch"  // another model or provider, at once
	NextGiveUp Next = "give_up" // no more attempts
)

// Sleep is one wait of Retrier.Do as it was slept.
type Sleep struct {
	Attempt int           // the attempt (1-based, over the whole request) that failed before it
	Planned time.Duration // what the timer was set for: the delay × TimeScale
	Start   time.Time     // when the timer was set
	End     time.Time     // when Do woke up (or was canceled)
}

type target struct{ provider, model string }

type switchTo struct {
	to           target
	reason       string
	afterRetries *int
	limit        int // attempts allowed on the new target (0: the policy's)
	key          string
}

// pickSwitch decides whether to move to a fallback (Plandex) or the next
// model of the ladder instead of retrying on the current target.
func (r *Retrier) pickSwitch(p *Policy, c Classification, retryable, retry bool, onTarget int, cur target, used map[string]bool) *switchTo {
	ladder := r.ladder()
	if p.Fallback.Enabled {
		if fb, fromLadder := r.fallbacks(ladder, cur, used); !fb.empty() {
			return fallbackSwitch(p, fb, fromLadder, c, retryable, retry, onTarget, cur, used)
		}
	}
	return ladderSwitch(p, nextOn(ladder, cur.model), c, retryable, retry, onTarget, cur)
}

// fallbacks returns the fallback chain: the configured one, or, without
// one, the ladder's next model (not used yet) as the fallback for every
// failure (fromLadder). A scenario file (DESIGN.md) names models only
// through client.escalation, and seed 001's walkthrough 3 falls back from
// gpt-4 to claude-3-haiku with nothing else configured.
func (r *Retrier) fallbacks(ladder []string, cur target, used map[string]bool) (fb Fallbacks, fromLadder bool) {
	if !r.Fallbacks.empty() {
		return r.Fallbacks, false
	}
	if next := nextOn(ladder, cur.model); next != "" && !used["ladder:"+next] {
		return Fallbacks{LargeContext: next, Error: next}, true
	}
	return Fallbacks{}, true
}

// fallbackSwitch decides a fallback (seed 001): once the failure is not
// retried (or not retryable), or after MaxRetriesWithoutFallback retries,
// the large-context model for context_too_long, the error model for other
// failures, else the other provider; each at most once.
func fallbackSwitch(p *Policy, f Fallbacks, fromLadder bool, c Classification, retryable, retry bool, onTarget int, cur target, used map[string]bool) *switchTo {
	trigger := !retryable || !retry
	if retryable && p.Fallback.MaxRetriesWithoutFallback > 0 && onTarget >= p.Fallback.MaxRetriesWithoutFallback {
		trigger = true
	}
	if !trigger {
		return nil
	}
	limit := p.Fallback.AdditionalAttempts
	if limit <= 0 {
		limit = 1
	}
	large, errKey := "large", "error"
	if fromLadder {
		// Fallbacks taken from the ladder may each be used once.
		large, errKey = "ladder:"+f.LargeContext, "ladder:"+f.Error
	}
	switch {
	case c.Type == ContextTooLong && f.LargeContext != "" && !used[large] && f.LargeContext != cur.model:
		return &switchTo{to: target{cur.provider, f.LargeContext}, reason: trace.ReasonContextLimit, limit: limit, key: large}
	case c.Type != ContextTooLong && f.Error != "" && !used[errKey] && f.Error != cur.model:
		return &switchTo{to: target{cur.provider, f.Error}, reason: trace.ReasonErrorFallback, limit: limit, key: errKey}
	case f.Provider != "" && !used["provider"] && f.Provider != cur.provider:
		m := f.ProviderModel
		if m == "" {
			m = cur.model
		}
		return &switchTo{to: target{f.Provider, m}, reason: trace.ReasonProviderFallback, limit: limit, key: "provider"}
	}
	return nil
}

// ladderSwitch decides an escalation up the model ladder (seed 003/004):
// at once for context_too_long when the policy says so, else once the
// failure is not retried or after Escalation.AfterRetries retries.
func ladderSwitch(p *Policy, next string, c Classification, retryable, retry bool, onTarget int, cur target) *switchTo {
	if next == "" {
		return nil
	}
	if c.Type == ContextTooLong && p.Escalation.OnContextLimit {
		return &switchTo{to: target{cur.provider, next}, reason: trace.ReasonContextLimit, key: "ladder:" + next}
	}
	if !retryable {
		return nil
	}
	after := onTarget - 1
	if !retry || (p.Escalation.AfterRetries > 0 && after >= p.Escalation.AfterRetries) {
		return &switchTo{to: target{cur.provider, next}, reason: trace.ReasonAutoAfterRetries, afterRetries: &after, key: "ladder:" + next}
	}
	return nil
}

// ladder is the Retrier's model ladder, else the policy's.
func (r *Retrier) ladder() []string {
	if len(r.Ladder) > 0 || r.Policy == nil {
		return r.Ladder
	}
	return r.Policy.Escalation.Ladder
}

// nextOn is the model after model on ladder, or "".
func nextOn(ladder []string, model string) string {
	for i, m := range ladder {
		if m == model && i+1 < len(ladder) {
			return ladder[i+1]
		}
	}
	return ""
}

func (r *Retrier) prices() PriceTable {
	if r.Prices != nil {
		return r.Prices
	}
	return DefaultPrices
}

// seconds formats d in seconds: "2", "0.5", "13.2" (millisecond precision).
func seconds(d time.Duration) string {
	s := strconv.FormatFloat(float64(d.Milliseconds())/1000, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
