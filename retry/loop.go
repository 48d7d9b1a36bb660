package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// Do runs call until it succeeds, the policy says stop, or ctx ends. It
// writes one RetryAttempt per failed attempt, one ProviderRequestFinished at
// the end, a RunEscalated per switch of model or provider (an
// EscalationDeclined per switch that did not happen), an ErrorReport when it
// gives up, and seed 000's log lines. Each attempt runs under
// context.WithTimeout(Policy.AttemptTimeout); an attempt that hits that
// deadline fails as timeout, while a canceled or expired ctx fails as
// canceled and is never retried. Waits end early when ctx ends. Do returns
// nil, an *ExhaustedError (with its Report), or (on cancellation) an error
// wrapping ctx.Err().
func (r *Retrier) Do(ctx context.Context, call func(ctx context.Context, a Attempt) error) error {
	_, err := r.Run(ctx, func(ctx context.Context, a Attempt) (string, error) { return "", call(ctx, a) })
	return err
}

// Run is Do for a call that returns output (a model's text): Validate checks
// the output of each attempt that succeeded, and the accepted output is
// RetryContext.Output. The RetryContext is never nil; it records every
// attempt, whatever the outcome.
func (r *Retrier) Run(ctx context.Context, call func(ctx context.Context, a Attempt) (string, error)) (*RetryContext, error) {
	l := r.newLoop()
	l.labels = LabelsFrom(ctx)
	for {
		out, deadline, err := l.attempt(ctx, call)
		if err == nil {
			l.notify(decision{}, NextDone)
			l.finish(true, nil, nil)
			l.rc.Succeeded, l.rc.Output = true, out
			return l.rc, nil
		}
		d := l.decide(ctx, err, deadline)
		l.record(d, err)
		l.notify(d, d.next())
		if !d.retry {
			return l.rc, l.giveUp(ctx, err, d)
		}
		if d.sw != nil {
			l.switchTarget(d)
			continue
		}
		l.logRetry(d)
		if werr := l.wait(ctx, d, err); werr != nil {
			return l.rc, werr
		}
		l.afterResend(d)
	}
}

// next is what Run does after the attempt d decided on.
func (d decision) next() Next {
	switch {
	case !d.retry:
		return NextGiveUp
	case d.sw != nil:
		return NextSwitch
	}
	return NextRetry
}

// notify reports the attempt that just ended to OnAttempt.
func (l *loop) notify(d decision, next Next) {
	if l.r.OnAttempt == nil {
		return
	}
	o := AttemptOutcome{Attempt: l.n, OnTarget: l.onTarget, Provider: l.cur.provider, Model: l.cur.model, Next: next}
	if next != NextDone {
		o.Classification = d.c
	}
	switch next {
	case NextRetry:
		o.Delay, o.DelaySource = d.delay, d.source
	case NextSwitch:
		o.SwitchTo, o.Reason = d.sw.to.model, d.sw.reason
		if d.sw.to.provider != l.cur.provider {
			o.SwitchTo = d.sw.to.provider + "/" + d.sw.to.model
		}
	case NextGiveUp:
		o.Reason = d.reason
	}
	l.r.OnAttempt(o)
}

// loop is the state of one Run.
type loop struct {
	labels Labels // the request's (WithLabels)
	r      *Retrier
	p      *Policy
	now    func() time.Time
	rng    *rand.Rand
	log    io.Writer
	scale  float64

	start         time.Time
	slept, waited time.Duration // real time asleep; policy time waited
	cur           target
	used          map[string]bool
	n, onTarget   int
	limit         int // attempts allowed on the current target (0: the policy's)
	prev          time.Duration
	resends       *ResendCounter // the re-sends on the current target
	tried         int            // attempts on the current target, re-sends included
	failures      []Failure
	rc            *RetryContext
	budget        *Budget   // Retrier.limiters
	throttle      *Throttle // Retrier.limiters
}

func (r *Retrier) newLoop() *loop {
	l := &loop{r: r, p: r.Policy, now: r.Now, rng: r.Rand, log: r.Log, scale: r.TimeScale, used: map[string]bool{}, rc: &RetryContext{}}
	if l.p == nil {
		l.p = &Policy{Name: "none", Default: Strategy{MaxAttempts: 1}}
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.rng == nil {
		seed := uint64(time.Now().UnixNano())
		l.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	}
	if l.log == nil {
		l.log = io.Discard
	}
	if l.scale <= 0 {
		l.scale = 1
	}
	l.start = l.now()
	l.budget, l.throttle = r.limiters()
	l.cur = target{r.Provider, r.Model}
	if ladder := r.ladder(); l.cur.model == "" && len(ladder) > 0 {
		l.cur.model = ladder[0]
	}
	return l
}

// elapsed is the policy time since the request began.
func (l *loop) elapsed() time.Duration { return l.now().Sub(l.start) - l.slept + l.waited }

// attempt makes one attempt under the per-attempt timeout and validates its
// output. deadline reports that the attempt's own timeout ended it.
func (l *loop) attempt(ctx context.Context, call func(context.Context, Attempt) (string, error)) (out string, deadline bool, err error) {
	l.n++
	l.onTarget++
	l.tried++
	l.rc.Attempts = l.n
	actx, cancel := ctx, context.CancelFunc(func() {})
	if l.p.AttemptTimeout > 0 {
		actx, cancel = context.WithTimeout(ctx, l.p.AttemptTimeout)
	}
	out, err = call(actx, l.attemptInfo())
	deadline = errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	if err != nil {
		l.budget.OnFailure()
		// The throttle counts the attempt when decide has classified it.
		return out, deadline, err
	}
	// The provider answered: a success for the budget and an accept for
	// the throttle, whatever Validate says.
	l.budget.OnSuccess()
	l.throttle.Record(true)
	if l.r.Validate != nil {
		if verr := l.r.Validate(out); verr != nil {
			return out, false, &LogicalError{Err: verr, Output: out}
		}
	}
	return out, false, nil
}

// attemptInfo is the Attempt the call is given: its number and target, and
// the failures before it.
func (l *loop) attemptInfo() Attempt {
	a := Attempt{Number: l.n, Provider: l.cur.provider, Model: l.cur.model}
	if len(l.failures) > 0 {
		a.History = slices.Clone(l.failures)
		a.Previous = &a.History[len(a.History)-1]
	}
	return a
}

// decision is what to do after a failed attempt.
type decision struct {
	c           Classification
	s           Strategy
	maxAttempts int
	retryable   bool // the policy retries this failure at all
	retry       bool
	reason      string // why not, when retry is false
	delay       time.Duration
	source      string
	sw          *switchTo
	cost        *float64 // the switch's cost estimate, when priced
	// resend: a re-send of one of the policy's Resend loops; restart: the
	// backoff loop counts from 1 after it.
	resend, restart bool
	resendK         int // the re-send's retry index (ResendCounter.Take)
}

func (l *loop) decide(ctx context.Context, err error, attemptDeadline bool) decision {
	d := decision{c: l.classify(ctx, err, attemptDeadline)}
	if d.c.Type != Canceled {
		l.throttle.Record(!refusedForLoad(d.c.Type))
	}
	l.plan(&d)
	l.chooseSwitch(ctx, &d)
	l.limits(ctx, &d)
	if !d.retry {
		d.delay, d.source = 0, trace.DelayNone
	}
	return d
}

// classify classifies err; cancellation and the attempt's own deadline win.
func (l *loop) classify(ctx context.Context, err error, attemptDeadline bool) Classification {
	c := Classify(err)
	switch {
	case ctx.Err() != nil:
		c.Type, c.Class = Canceled, NonRetryable
	case attemptDeadline:
		c.Type, c.Class = Timeout, Retryable
	}
	// From here on the Retry-After is the one the policy reads.
	c.RetryAfter, c.HasRetryAfter = l.p.readRetryAfter(c, l.now())
	return c
}

// plan applies the strategy: whether the failure is retried, the wait, and
// whether attempts remain on the current target and in all.
func (l *loop) plan(d *decision) {
	p := l.p
	if l.planResend(d) {
		return
	}
	d.s = p.Strategy(d.c.Type)
	d.maxAttempts = d.s.MaxAttempts
	if l.limit > 0 {
		d.maxAttempts = l.limit
	}
	d.maxAttempts = max(d.maxAttempts, 1)
	d.retryable = p.retries(d.c, d.s)
	if !d.retryable {
		d.maxAttempts = 1 // the policy never retries this failure
	}
	d.retry, d.reason, d.source = d.retryable, ReasonNonRetryable, trace.DelayNone
	if d.retry {
		ra, use, refuse := p.retryAfterWait(d.s, d.c.RetryAfter, d.c.HasRetryAfter, d.c.RetryAfterRaw)
		switch {
		case refuse:
			d.retry, d.retryable, d.reason = false, false, ReasonRetryAfterCeiling
		case use:
			d.delay, d.source = l.retryAfterDelay(d.s, ra)
		default:
			d.delay, d.source = jitter(d.s, p.nominal(d.s, l.onTarget-1), l.prev, l.rng), trace.DelayBackoff
		}
	}
	if d.retry && (l.onTarget >= d.maxAttempts || (p.MaxAttempts > 0 && l.n >= p.MaxAttempts)) {
		d.retry, d.reason = false, ReasonAttemptsExhausted
	}
}

// planResend plans a re-send of one of the policy's Resend loops, when
// one takes the failure: its own count and wait, outside the backoff
// loop's attempts (Policy.MaxAttempts, the global cap, still holds).
func (l *loop) planResend(d *decision) bool {
	if l.resends == nil {
		l.resends = l.p.NewResendCounter()
	}
	k, restart, ok := l.resends.Take(d.c, l.tried)
	if !ok {
		return false
	}
	rs, _ := l.p.ResendRule(d.c)
	d.s = l.p.capped(rs.Strategy)
	d.maxAttempts = max(d.s.MaxAttempts, 1)
	d.retry, d.retryable, d.resend, d.restart, d.resendK = true, true, true, restart, k
	d.delay, d.source = jitter(d.s, l.p.nominal(d.s, k), 0, l.rng), trace.DelayBackoff
	if d.delay == 0 {
		d.source = trace.DelayNone // sent again at once, as a switch is
	}
	if l.p.MaxAttempts > 0 && l.n >= l.p.MaxAttempts {
		d.retry, d.reason = false, ReasonAttemptsExhausted
	}
	return true
}

// afterResend takes a re-send out of the backoff loop's count, or, for a
// loop that restarts it, starts that count again.
func (l *loop) afterResend(d decision) {
	switch {
	case !d.resend:
	case d.restart:
		l.onTarget, l.prev = 0, 0
	default:
		l.onTarget--
	}
}

// retryAfterDelay is the wait for a usable Retry-After value ra: ra with
// the policy's Retry-After jitter, or, when the backoff is its floor, the
// longer of that and the backoff (then the source is the one that won).
func (l *loop) retryAfterDelay(s Strategy, ra time.Duration) (time.Duration, string) {
	cfg := l.p.RetryAfter
	if cfg.NominalFloor && !cfg.Floor {
		if b := l.p.nominal(s, l.onTarget-1); b > ra {
			ra = b
		}
	}
	if cfg.Jitter > 0 {
		ra = cfg.jittered(ra, l.rng.Float64())
	}
	if !cfg.Floor {
		return ra, trace.DelayRetryAfter
	}
	if b := jitter(s, l.p.nominal(s, l.onTarget-1), l.prev, l.rng); b > ra {
		return b, trace.DelayBackoff
	}
	return ra, trace.DelayRetryAfter
}

// chooseSwitch moves to a fallback or up the ladder when the policy says
// so, the operation allows it and the escalation guard lets it.
func (l *loop) chooseSwitch(ctx context.Context, d *decision) {
	p := l.p
	blocked := l.r.Operation == Irreversible && !p.AllowIrreversible
	capped := p.MaxAttempts > 0 && l.n >= p.MaxAttempts
	if d.c.Type != Canceled && p.Enabled && !blocked && !capped {
		d.sw = l.r.pickSwitch(p, d.c, d.retryable, d.retry, l.onTarget, l.cur, l.used)
	}
	// The guard (which may ask a person) is consulted only for a switch the
	// retry budget lets happen.
	if d.sw != nil && !l.budget.AllowRetry() {
		d.sw, d.retry, d.reason = nil, false, ReasonBudgetExhausted
	} else if d.sw != nil {
		if why, detail := l.guard(ctx, d); why != "" {
			l.decline(d.sw.to, d.sw.reason, why, detail, d.cost)
			d.sw, d.cost = nil, nil
			if !d.retry {
				d.reason = ReasonEscalationDeclined
			}
		} else {
			d.retry, d.delay, d.source = true, 0, trace.DelayNone
		}
	} else if d.sw == nil && !d.retry && !capped && l.atTop(d) {
		d.reason = ReasonTopOfLadder
		l.decline(target{}, "", trace.DeclinedTopOfLadder, ReasonTopOfLadder, nil)
	}
	if blocked && d.retry {
		d.retry, d.reason = false, ErrIrreversible.Error()
	}
}

// limits applies the elapsed-time limit, the retry budget and the rollback
// of a conditional operation.
func (l *loop) limits(ctx context.Context, d *decision) {
	p := l.p
	if d.retry && d.sw == nil && p.MaxElapsed > 0 && l.elapsed()+d.delay > p.MaxElapsed {
		d.retry, d.reason = false, ReasonMaxElapsed
	}
	if d.retry && !l.budget.AllowRetry() {
		d.retry, d.reason, d.sw = false, ReasonBudgetExhausted, nil
	}
	// Adaptive throttling gates a retry on the same target, the backend
	// that refused; a switch goes elsewhere.
	if d.retry && d.sw == nil && !l.throttle.Allow(l.rng.Float64) {
		d.retry, d.reason = false, ReasonThrottled
	}
	if d.retry && l.r.Operation == SafeAfterRollback && l.r.Rollback != nil {
		if err := l.r.Rollback(ctx, l.attemptInfo()); err != nil {
			if d.sw != nil && d.cost != nil {
				l.r.spend.refund(*d.cost) // the switch booked by the guard will not happen
			}
			d.retry, d.reason, d.sw = false, "rollback failed: "+provider.Redact(err.Error()), nil
		}
	}
}

// record writes the failed attempt's RetryAttempt and keeps it in the
// request's history.
func (l *loop) record(d decision, err error) {
	c := d.c
	ev := trace.RetryAttempt{Provider: l.cur.provider, Model: l.cur.model, Attempt: l.n, MaxAttempts: d.maxAttempts,
		FailureType: string(c.Type), Status: c.Status, ErrorMessage: c.Message, WillRetry: d.retry,
		DelayMs: d.delay.Milliseconds(), DelaySource: d.source, RequestID: c.RequestID,
		ErrorContext: d.retry && l.r.ErrorContext, PromptPattern: l.labels.PromptPattern, Tags: l.labels.Tags}
	if c.HasRetryAfter {
		ms := c.RetryAfter.Milliseconds()
		ev.RetryAfterMs = &ms
	}
	l.r.Trace.Emit(trace.TypeRetryAttempt, ev)
	rec := AttemptRecord{Number: l.n, Time: l.now(), Provider: l.cur.provider, Model: l.cur.model, Type: c.Type,
		Status: c.Status, Message: c.Message, Delay: d.delay, DelaySource: d.source, ErrorContext: ev.ErrorContext}
	if d.sw != nil {
		rec.SwitchedTo = switchName(l.cur, d.sw.to)
	}
	l.rc.Failures = append(l.rc.Failures, rec)
	l.failures = append(l.failures, Failure{Attempt: l.n, Provider: l.cur.provider, Model: l.cur.model, Err: err,
		Classification: c, Output: failedOutput(err)})
}

// finish writes the request's ProviderRequestFinished.
func (l *loop) finish(success bool, err error, c *Classification) {
	l.rc.Duration = l.elapsed()
	ev := trace.ProviderRequestFinished{Provider: l.cur.provider, Model: l.cur.model,
		DurationMs: l.rc.Duration.Milliseconds(), Success: success, Retries: l.n - 1,
		PromptPattern: l.labels.PromptPattern, Tags: l.labels.Tags}
	if err != nil {
		ev.Error = provider.Redact(err.Error())
		ev.FailureType = string(c.Type)
		ev.RequestID = c.RequestID
	}
	l.r.Trace.Emit(trace.TypeProviderRequestFinished, ev)
}

// giveUp ends the request: the canceled error, or an *ExhaustedError with
// its Report (written to the trace and the registry).
func (l *loop) giveUp(ctx context.Context, err error, d decision) error {
	l.finish(false, err, &d.c)
	if d.c.Type == Canceled && ctx.Err() != nil {
		return fmt.Errorf("request canceled after %d attempt(s): %w (last error: %v)", l.n, ctx.Err(), err)
	}
	ex := &ExhaustedError{Attempts: l.n, Last: err, Classification: d.c, Reason: d.reason}
	ex.Report = l.report(ctx, ex)
	l.r.Trace.Emit(trace.TypeErrorReport, ex.Report.Event())
	if l.r.Registry != nil {
		if rerr := l.r.Registry.Add(ex.Report); rerr != nil {
			fmt.Fprintf(l.log, "[retry] error registry: %v\n", rerr)
		}
	}
	return ex
}

// switchTarget moves to the fallback or next model chosen by d, at once.
func (l *loop) switchTarget(d decision) {
	sw := d.sw
	esc := trace.RunEscalated{From: l.cur.model, To: sw.to.model, Reason: sw.reason, AfterRetries: sw.afterRetries, CostEstimate: d.cost}
	if sw.to.provider != l.cur.provider {
		esc.From, esc.To = l.cur.provider+"/"+l.cur.model, sw.to.provider+"/"+sw.to.model
	}
	l.r.Trace.Emit(trace.TypeRunEscalated, esc)
	fmt.Fprintf(l.log, "[retry] Switching from %s to %s (%s)\n", esc.From, esc.To, sw.reason)
	l.used[sw.key] = true
	l.cur, l.onTarget, l.limit, l.prev, l.tried = sw.to, 0, sw.limit, 0, 0
	if l.resends != nil {
		l.resends.Reset()
	}
	l.r.noteSleep(l.n, 0, l.now(), l.now)
}

// logRetry writes seed 000's lines for a retry on the same target: R4's
// "[retry] Using retry-after: Ns" and "[retry] Attempt n/N: status —
// waiting Ns", the latter followed by the error message (R3: shown on every
// attempt), and the line before a retry of a stream.
func (l *loop) logRetry(d decision) {
	if d.source == trace.DelayRetryAfter {
		fmt.Fprintf(l.log, "[retry] Using retry-after: %ss\n", seconds(d.delay))
	}
	status := string(d.c.Type)
	if d.c.Status != 0 {
		status = strconv.Itoa(d.c.Status)
	}
	line := fmt.Sprintf("[retry] Attempt %d/%d: %s — waiting %ss", l.onTarget, d.maxAttempts-1, status, seconds(d.delay))
	if msg := oneLine(d.c.Message, maxLogMessage); msg != "" {
		line += " — " + msg
	}
	fmt.Fprintln(l.log, line)
	if d.c.Streamed {
		fmt.Fprintln(l.log, "[retry] Retrying from beginning of response...")
	}
}

// maxLogMessage bounds the error message on a log line, in runes.
const maxLogMessage = 300

// oneLine is s on one line (runs of white space as one space), cut to n
// runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

// wait sleeps d.delay (scaled), or returns the canceled error when ctx ends.
func (l *loop) wait(ctx context.Context, d decision, err error) error {
	if d.delay <= 0 {
		l.r.noteSleep(l.n, 0, l.now(), l.now)
		l.prev = d.delay
		return nil
	}
	sleep := time.Duration(float64(d.delay) * l.scale)
	t := time.NewTimer(sleep)
	t0 := l.now()
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		part := l.now().Sub(t0)
		l.slept += part
		l.waited += time.Duration(float64(part) / l.scale)
		c := d.c
		c.Type, c.Class = Canceled, NonRetryable
		l.finish(false, err, &c)
		return fmt.Errorf("request canceled after %d attempt(s): %w (last error: %v)", l.n, ctx.Err(), err)
	}
	t1 := l.now()
	l.slept += t1.Sub(t0)
	l.waited += d.delay
	l.r.noteSleep(l.n, sleep, t0, func() time.Time { return t1 })
	l.prev = d.delay
	return nil
}
