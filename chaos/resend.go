package chaos

import (
	"time"

	"github.com/retrylab/retrylab/retry"
)

// resendMark is the wait before a re-send of one of a policy's loops of
// its own (retry.Resend): Claude Code re-sends a 400 at once, Gemini CLI
// an error frame after 1s, 2s, 4s. ok is false for an attempt that is not
// re-sent so.
type resendMark struct {
	lo, hi time.Duration
	ok     bool
}

// addResends marks the failed attempts that the scenario's policy re-sends
// in a loop of its own (Observed.Resends) and numbers every attempt as the
// policy's backoff loop counts it (Observed.LoopAttempts): a re-send is
// not one of its attempts, and some start its count again. Both restart
// with each logical request and each switch of model. A policy without
// such loops leaves both nil: the attempts are numbered within their
// request (attemptOnTarget).
func (ob *Observed) addResends(pol *retry.Policy, attempts []ServerAttempt, inferred []inference) {
	if pol == nil || len(pol.Resends) == 0 {
		return
	}
	rc := pol.NewResendCounter()
	ob.Resends = make([]resendMark, len(attempts))
	ob.LoopAttempts = make([]int, len(attempts))
	n := 0
	for k, a := range attempts {
		if k > 0 && (k-1 < len(ob.RequestEnds) && ob.RequestEnds[k-1] || ob.switchedAt(k+1)) {
			rc.Reset()
			n = 0
		}
		n++
		ob.LoopAttempts[k] = n
		if succeeded(a) {
			continue
		}
		c := inferred[k].c
		i, restart, ok := rc.Take(c)
		if !ok {
			continue
		}
		lo, hi := rc.Wait(c, i)
		ob.Resends[k] = resendMark{lo: lo, hi: hi, ok: true}
		if restart {
			n = 0
		} else {
			n--
		}
	}
}

// resentAt is the re-send after server attempt k (1-based), when its
// policy re-sends that failure in a loop of its own.
func (ob Observed) resentAt(k int) (resendMark, bool) {
	if k < 1 || k > len(ob.Resends) {
		return resendMark{}, false
	}
	m := ob.Resends[k-1]
	return m, m.ok
}
