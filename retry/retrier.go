package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

var _ error = (*ExhaustedError)(nil)

// ErrExhausted is matched (errors.Is) by every *ExhaustedError.
var ErrExhausted = errors.New("retries exhausted")

// ExhaustedError is what Retrier.Do returns when it gives up: the failure was
// not retryable, attempts ran out, or a limit (budget, elapsed time, operation
// safety) stopped it. errors.Is(err, ErrExhausted) is true; Unwrap gives Last.
type ExhaustedError struct {
	Attempts       int   // attempts made, across every target
	Last           error // the last attempt's error
	Classification Classification
	// Reason says why retrying stopped: "non-retryable", "attempts exhausted",
	// "retry-after above ceiling", "max elapsed", "retry budget exhausted" or
	// ErrIrreversible's text.
	Reason string
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("giving up after %d attempt(s) (%s, %s): %v", e.Attempts, e.Classification.Type, e.Reason, e.Last)
}

// Is reports ErrExhausted, and ErrIrreversible when that stopped the retries.
func (e *ExhaustedError) Is(target error) bool {
	return target == ErrExhausted || (target == ErrIrreversible && e.Reason == ErrIrreversible.Error())
}

func (e *ExhaustedError) Unwrap() error { return e.Last }

// Attempt identifies one attempt of a logical request.
type Attempt struct {
	Number   int // 1-based across the logical request, fallbacks and ladder included
	Provider string
	Model    string
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
// not shared (a *rand.Rand is not safe for concurrent use).
type Retrier struct {
	Policy   *Policy // nil: one attempt, no retries
	Provider string
	Model    string
	// Ladder is the model escalation ladder, e.g. haiku → sonnet → opus.
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
	Budget    *Budget
	Prices    PriceTable // nil: DefaultPrices
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
}

// noteSleep reports a wait to OnSleep: planned, from start to end(). A
// retry at once and a switch of model are waits of 0.
func (r *Retrier) noteSleep(attempt int, planned time.Duration, start time.Time, end func() time.Time) {
	if r.OnSleep != nil {
		r.OnSleep(Sleep{Attempt: attempt, Planned: planned, Start: start, End: end()})
	}
}

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

// Do runs call until it succeeds, the policy says stop, or ctx ends. It
// writes one RetryAttempt per failed attempt, one ProviderRequestFinished at
// the end, a RunEscalated per switch of model or provider, and seed 000's log
// lines. Each attempt runs under context.WithTimeout(Policy.AttemptTimeout);
// an attempt that hits that deadline fails as timeout, while a canceled or
// expired ctx fails as canceled and is never retried. Waits end early when
// ctx ends. Do returns nil, an *ExhaustedError, or (on cancellation) an
// error wrapping ctx.Err().
func (r *Retrier) Do(ctx context.Context, call func(ctx context.Context, a Attempt) error) error {
	p := r.Policy
	if p == nil {
		p = &Policy{Name: "none", Default: Strategy{MaxAttempts: 1}}
	}
	now := r.Now
	if now == nil {
		now = time.Now
	}
	rng := r.Rand
	if rng == nil {
		seed := uint64(time.Now().UnixNano())
		rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	}
	log := r.Log
	if log == nil {
		log = io.Discard
	}
	scale := r.TimeScale
	if scale <= 0 {
		scale = 1
	}

	start := now()
	var slept, waited time.Duration // real time asleep; policy time waited
	cur := target{r.Provider, r.Model}
	if cur.model == "" && len(r.Ladder) > 0 {
		cur.model = r.Ladder[0]
	}
	used := map[string]bool{}
	n, onTarget, limit := 0, 0, 0
	var prev time.Duration

	finish := func(success bool, err error, c *Classification) {
		d := now().Sub(start) - slept + waited
		ev := trace.ProviderRequestFinished{Provider: cur.provider, Model: cur.model,
			DurationMs: d.Milliseconds(), Success: success, Retries: n - 1}
		if err != nil {
			ev.Error = provider.Redact(err.Error())
			ev.FailureType = string(c.Type)
			ev.RequestID = c.RequestID
		}
		r.Trace.Emit(trace.TypeProviderRequestFinished, ev)
	}

	for {
		n++
		onTarget++
		actx, cancel := ctx, context.CancelFunc(func() {})
		if p.AttemptTimeout > 0 {
			actx, cancel = context.WithTimeout(ctx, p.AttemptTimeout)
		}
		err := call(actx, Attempt{Number: n, Provider: cur.provider, Model: cur.model})
		attemptDeadline := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err == nil {
			r.Budget.OnSuccess()
			finish(true, nil, nil)
			return nil
		}
		r.Budget.OnFailure()

		c := Classify(err)
		switch {
		case ctx.Err() != nil:
			c.Type, c.Class = Canceled, NonRetryable
		case attemptDeadline:
			c.Type, c.Class = Timeout, Retryable
		}
		// From here on the Retry-After is the one the policy reads.
		c.RetryAfter, c.HasRetryAfter = p.readRetryAfter(c, now())
		s := p.Strategy(c.Type)
		maxAttempts := s.MaxAttempts
		if limit > 0 {
			maxAttempts = limit
		}
		if maxAttempts < 1 {
			maxAttempts = 1
		}

		retryable := p.retries(c, s)
		if !retryable {
			maxAttempts = 1 // the policy never retries this failure
		}
		retry := retryable
		reason := "non-retryable"
		var delay time.Duration
		source := trace.DelayNone
		if retry {
			ra, use, refuse := p.retryAfterWait(s, c.RetryAfter, c.HasRetryAfter, c.RetryAfterRaw)
			switch {
			case refuse:
				retry, retryable, reason = false, false, "retry-after above ceiling"
			case use:
				delay, source = ra, trace.DelayRetryAfter
			default:
				delay, source = jitter(s, p.nominal(s, onTarget-1), prev, rng), trace.DelayBackoff
			}
		}
		if retry && onTarget >= maxAttempts {
			retry, reason = false, "attempts exhausted"
		}

		var sw *switchTo
		blocked := r.Operation == Irreversible && !p.AllowIrreversible
		if c.Type != Canceled && p.Enabled && !blocked {
			sw = r.pickSwitch(p, c, retryable, retry, onTarget, cur, used)
		}
		if sw != nil {
			retry, delay, source = true, 0, trace.DelayNone
		}
		if blocked && retry {
			retry, reason = false, ErrIrreversible.Error()
		}
		if retry && sw == nil && p.MaxElapsed > 0 && now().Sub(start)-slept+waited+delay > p.MaxElapsed {
			retry, reason = false, "max elapsed"
		}
		if retry && !r.Budget.AllowRetry() {
			retry, reason, sw = false, "retry budget exhausted", nil
		}
		if !retry {
			delay, source = 0, trace.DelayNone
		}

		ev := trace.RetryAttempt{Provider: cur.provider, Model: cur.model, Attempt: n, MaxAttempts: maxAttempts,
			FailureType: string(c.Type), Status: c.Status, ErrorMessage: c.Message, WillRetry: retry,
			DelayMs: delay.Milliseconds(), DelaySource: source, RequestID: c.RequestID}
		if c.HasRetryAfter {
			ms := c.RetryAfter.Milliseconds()
			ev.RetryAfterMs = &ms
		}
		r.Trace.Emit(trace.TypeRetryAttempt, ev)

		if !retry {
			finish(false, err, &c)
			if c.Type == Canceled && ctx.Err() != nil {
				return fmt.Errorf("request canceled after %d attempt(s): %w (last error: %v)", n, ctx.Err(), err)
			}
			return &ExhaustedError{Attempts: n, Last: err, Classification: c, Reason: reason}
		}

		if sw != nil {
			esc := trace.RunEscalated{From: cur.model, To: sw.to.model, Reason: sw.reason, AfterRetries: sw.afterRetries}
			if sw.to.provider != cur.provider {
				esc.From, esc.To = cur.provider+"/"+cur.model, sw.to.provider+"/"+sw.to.model
			}
			if cost, ok := r.prices().Estimate(cur.model, sw.to.model, r.OutputTokens); ok {
				esc.CostEstimate = &cost
			}
			r.Trace.Emit(trace.TypeRunEscalated, esc)
			fmt.Fprintf(log, "[retry] Switching from %s to %s (%s)\n", esc.From, esc.To, sw.reason)
			used[sw.key] = true
			cur, onTarget, limit, prev = sw.to, 0, sw.limit, 0
			r.noteSleep(n, 0, now(), now)
			continue
		}

		if source == trace.DelayRetryAfter {
			fmt.Fprintf(log, "[retry] Using retry-after: %ss\n", seconds(delay))
		}
		status := string(c.Type)
		if c.Status != 0 {
			status = strconv.Itoa(c.Status)
		}
		fmt.Fprintf(log, "[retry] Attempt %d/%d: %s — waiting %ss\n", onTarget, maxAttempts-1, status, seconds(delay))
		if c.Streamed {
			fmt.Fprintln(log, "[retry] Retrying from beginning of response...")
		}

		if delay > 0 {
			sleep := time.Duration(float64(delay) * scale)
			t := time.NewTimer(sleep)
			t0 := now()
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				part := now().Sub(t0)
				slept += part
				waited += time.Duration(float64(part) / scale)
				c.Type, c.Class = Canceled, NonRetryable
				finish(false, err, &c)
				return fmt.Errorf("request canceled after %d attempt(s): %w (last error: %v)", n, ctx.Err(), err)
			}
			t1 := now()
			slept += t1.Sub(t0)
			waited += delay
			r.noteSleep(n, sleep, t0, func() time.Time { return t1 })
		} else {
			r.noteSleep(n, 0, now(), now)
		}
		prev = delay
	}
}

// pickSwitch decides whether to move to a fallback (Plandex) or the next
// model of the ladder instead of retrying on the current target.
func (r *Retrier) pickSwitch(p *Policy, c Classification, retryable, retry bool, onTarget int, cur target, used map[string]bool) *switchTo {
	fb := r.Fallbacks
	if p.Fallback.Enabled && fb.empty() {
		// Without a configured chain, the ladder's next model is the
		// fallback: a scenario file (DESIGN.md) names models only through
		// client.escalation, and seed 001's walkthrough 3 falls back from
		// gpt-4 to claude-3-haiku with nothing else configured.
		if next := r.nextOnLadder(cur.model); next != "" && !used["ladder:"+next] {
			fb = Fallbacks{LargeContext: next, Error: next}
		}
	}
	if p.Fallback.Enabled && !fb.empty() {
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
		f := fb
		large, errKey := "large", "error"
		if r.Fallbacks.empty() {
			// Fallbacks taken from the ladder may each be used once.
			large, errKey = "ladder:"+f.LargeContext, "ladder:"+f.Error
		}
		if c.Type == ContextTooLong && f.LargeContext != "" && !used[large] && f.LargeContext != cur.model {
			return &switchTo{to: target{cur.provider, f.LargeContext}, reason: trace.ReasonContextLimit, limit: limit, key: large}
		}
		if c.Type != ContextTooLong && f.Error != "" && !used[errKey] && f.Error != cur.model {
			return &switchTo{to: target{cur.provider, f.Error}, reason: trace.ReasonErrorFallback, limit: limit, key: errKey}
		}
		if f.Provider != "" && !used["provider"] && f.Provider != cur.provider {
			m := f.ProviderModel
			if m == "" {
				m = cur.model
			}
			return &switchTo{to: target{f.Provider, m}, reason: trace.ReasonProviderFallback, limit: limit, key: "provider"}
		}
		return nil
	}
	next := r.nextOnLadder(cur.model)
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

// nextOnLadder is the model after model on the ladder, or "".
func (r *Retrier) nextOnLadder(model string) string {
	for i, m := range r.Ladder {
		if m == model && i+1 < len(r.Ladder) {
			return r.Ladder[i+1]
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
