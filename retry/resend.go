package retry

import (
	"slices"
	"time"
)

// Resend is a loop of its own that some clients run beside their backoff
// loop: a failure it matches is sent again on its own count and schedule,
// outside the policy's attempts. Claude Code re-sends a 400 at once with
// an adjusted body (up to 5 times) and an error event inside the stream at
// once without streaming; Gemini CLI re-sends a stream that ended in an
// error after 1s, 2s, 4s. A failure matches when its HTTP status is in
// Statuses (an error before the stream), or when it came after the stream
// began (Streamed) and its type is in Types (every type when Types is
// empty).
//
// Strategy says how often and how long: MaxAttempts counts the first
// failure too (6: five re-sends), and the n-th re-send waits the backoff
// of retry index n−1 (kind none: at once). Retry and RespectRetryAfter
// are not read. Once its re-sends are spent, a matching failure is
// handled as the policy says otherwise.
//
// A re-send does not count as an attempt of the backoff loop. Restart
// makes the backoff loop count from 1 again after it (Claude Code's
// non-streaming re-send runs a retry loop of its own; Gemini CLI's stream
// loop calls its HTTP loop anew).
//
// NoStream says the re-send asks for no stream (Claude Code). Then a stream
// error later in the same request is a reply the client did not ask for,
// and one before the stream's first event is one such a client may treat
// otherwise (Claude Code retries it streaming, on a count of its own): a
// harness whose mock streams such a fault cannot tell what the client does
// next, and says so rather than judge it.
type Resend struct {
	Statuses []int
	Streamed bool
	Types    []FailureType
	Strategy Strategy
	Restart  bool
	NoStream bool
	// InRequest backs off by the attempt's number within its request
	// (every attempt on the target counted, re-sends too) instead of the
	// loop's own count (Claude Code's cut stream: 529, 529, cut waits 2s,
	// cut × 3 waits 0.5s, 1s, 2s).
	InRequest bool
}

// ResendRule returns the loop of p that matches failure c, whatever its
// count.
func (p *Policy) ResendRule(c Classification) (Resend, bool) {
	for _, rs := range p.Resends {
		if rs.matches(c) {
			return rs, true
		}
	}
	return Resend{}, false
}

// matches reports whether failure c is one that rs re-sends.
func (rs Resend) matches(c Classification) bool {
	if c.Streamed {
		return rs.Streamed && (len(rs.Types) == 0 || slices.Contains(rs.Types, c.Type))
	}
	return c.Status != 0 && slices.Contains(rs.Statuses, c.Status)
}

// ResendFor returns the index in p.Resends of the loop that re-sends
// failure c, given how many re-sends each loop has made so far for the
// current request on the current target (used[i], used may be short);
// ok is false when no loop matches c or the one that does has spent its
// re-sends. A disabled policy re-sends nothing, nor is a cancellation.
func (p *Policy) ResendFor(c Classification, used []int) (i int, ok bool) {
	if !p.Enabled || c.Type == Canceled {
		return 0, false
	}
	for i, rs := range p.Resends {
		if !rs.matches(c) {
			continue
		}
		n := 0
		if i < len(used) {
			n = used[i]
		}
		return i, n+1 < max(rs.Strategy.MaxAttempts, 1)
	}
	return 0, false
}

// ResendEnvelope is the range of waits before the n-th re-send (1-based)
// of p.Resends[i], jitter included.
func (p *Policy) ResendEnvelope(i, n int) (lo, hi time.Duration) {
	s := p.capped(p.Resends[i].Strategy)
	d := p.nominal(s, n-1)
	return p.jitterBounds(s, d, n-1)
}

// ResendCounter counts the re-sends of one request on one target, for a
// harness or a loop that follows a client's failures one by one.
type ResendCounter struct {
	p    *Policy
	used []int
}

// NewResendCounter returns a counter of p's re-sends, all unused.
func (p *Policy) NewResendCounter() *ResendCounter {
	return &ResendCounter{p: p, used: make([]int, len(p.Resends))}
}

// Take reports whether failure c, the attempt-th attempt of its request
// on the current target (re-sends counted), is re-sent (ok), counting it:
// with the retry index its wait backs off by (0-based: the loop's own
// count, or attempt−1 for an InRequest loop), and whether the backoff loop
// counts from 1 again after it.
func (rc *ResendCounter) Take(c Classification, attempt int) (k int, restart, ok bool) {
	i, ok := rc.p.ResendFor(c, rc.used)
	if !ok {
		return 0, false, false
	}
	rc.used[i]++
	k = rc.used[i] - 1
	if rc.p.Resends[i].InRequest {
		k = max(attempt-1, 0)
	}
	return k, rc.p.Resends[i].Restart, true
}

// Wait is the range of waits of the loop that matches c at retry index k
// (as Take reported it).
func (rc *ResendCounter) Wait(c Classification, k int) (lo, hi time.Duration) {
	for i, rs := range rc.p.Resends {
		if rs.matches(c) {
			return rc.p.ResendEnvelope(i, k+1)
		}
	}
	return 0, 0
}

// Reset forgets the re-sends made: a new request, or a new target.
func (rc *ResendCounter) Reset() { clear(rc.used) }
