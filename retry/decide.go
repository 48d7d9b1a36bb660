package retry

import (
	"net/http"
	"time"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// FirstDecision is what a policy does after one failed attempt, as Retrier.Do
// decides it: whether it tries again, in a loop of its own (Resend) or
// its backoff loop, and the range of waits before it (jitter included).
type FirstDecision struct {
	Retry bool
	// Resend: sent again by one of the policy's Resend loops; Resends is
	// how many times that loop sends it again in all (MaxAttempts − 1).
	Resend  bool
	Resends int
	// Source is where the wait comes from: "backoff", "retry-after" or,
	// for a re-send at once, "none" (trace.DelaySource values).
	Source string
	Lo, Hi time.Duration
	// Reason says why not, when Retry is false (Reason* constants).
	Reason string
}

// DecideFirst is what p does after the first attempt of a request fails
// with c: the code Retrier.Do runs (loop.plan: a Resend loop first, then
// the failure's status, type, stream position, x-should-retry as the
// policy obeys it, Retry-After as the policy reads it and its ceiling,
// the attempt limit), without drawing a jitter. c carries the headers as
// a client met them (RetryAfterRaw, RetryAfterMsRaw, ShouldRetry); now is
// when the response arrived (an HTTP-date's reference). A harness that
// asks whether a policy retries one fault asks this, not Retries, which
// does not know the policy's resends or its Retry-After ceiling.
func (p *Policy) DecideFirst(c Classification, now time.Time) FirstDecision {
	c.RetryAfter, c.HasRetryAfter = p.readRetryAfter(c, now)
	l := (&Retrier{Policy: p, Now: func() time.Time { return now }}).newLoop()
	l.n, l.onTarget, l.tried = 1, 1, 1
	d := decision{c: c}
	l.plan(&d)
	out := FirstDecision{Retry: d.retry, Resend: d.resend, Source: d.source}
	if !d.retry {
		out.Source, out.Reason = "", d.reason
		return out
	}
	if d.resend {
		i, _ := p.ResendFor(c, nil)
		out.Resends = max(p.Resends[i].Strategy.MaxAttempts, 1) - 1
		out.Lo, out.Hi = p.ResendEnvelope(i, 1)
		out.Source = trace.DelayNone
		if out.Hi > 0 {
			out.Source = trace.DelayBackoff
		}
		return out
	}
	// The source is the rule's, not the draw's (a floor may let either win).
	out.Source = trace.DelayBackoff
	if _, use, _ := p.retryAfterWait(d.s, c.RetryAfter, c.HasRetryAfter, c.RetryAfterRaw); use {
		out.Source = trace.DelayRetryAfter
	}
	out.Lo, out.Hi, _ = p.waitEnvelope(d.s, 0, c.RetryAfter, c.HasRetryAfter, c.RetryAfterRaw)
	return out
}

// DecideFirstHeaders is DecideFirst for the failure pe with response
// headers h as a client met them (retry-after, retry-after-ms,
// x-should-retry): how a harness asks about a fault it serves.
func (p *Policy) DecideFirstHeaders(pe provider.Error, h http.Header, now time.Time) FirstDecision {
	if h != nil {
		pe.Header = h
		pe.RetryAfter, pe.RetryAfterRaw, pe.HasRetryAfter = provider.ParseRetryAfter(h, now)
	}
	return p.DecideFirst(Classify(&pe), now)
}
