package retry

import (
	"math/rand/v2"
	"time"
)

// Replay follows a client's failures one by one through the state of
// Retrier.Run's loop (the same plan and count): which failures a Resend
// loop takes, and the number each attempt has in the backoff loop's
// count, which a re-send does not advance and a Restart loop starts
// again. A harness that checks a client's waits against its policy
// numbers them by Replay, so that it and the retry core agree by
// construction on a mix of faults (529, 400 re-sent, 529: the second
// 529 is the loop's 2nd attempt, not the 3rd).
type Replay struct{ l *loop }

// ReplayStep is what the loop makes of one attempt.
type ReplayStep struct {
	// Attempt is the attempt's number in the backoff loop's count on its
	// target (1-based): the retry index of the wait after it is
	// Attempt−1.
	Attempt int
	// Resend: one of the policy's Resend loops sends the failure again;
	// Lo, Hi is then the range of its wait (jitter included) and Restart
	// says the backoff loop counts from 1 after it.
	Resend, Restart bool
	Lo, Hi          time.Duration
	// Retry: the policy tries again after this failure (on the same
	// target; a switch is not modelled).
	Retry bool
}

// NewReplay starts a replay of one request of p's.
func (p *Policy) NewReplay() *Replay {
	seed := uint64(1)
	r := &Retrier{Policy: p, Rand: rand.New(rand.NewPCG(seed, seed)), Now: func() time.Time { return time.Time{} }}
	return &Replay{l: r.newLoop()}
}

// Succeed counts an attempt that succeeded and returns its step.
func (rp *Replay) Succeed() ReplayStep {
	rp.count()
	return ReplayStep{Attempt: rp.l.onTarget}
}

// Fail counts an attempt that failed with c (classified, with the
// Retry-After the policy reads) and returns what the loop does next.
func (rp *Replay) Fail(c Classification) ReplayStep {
	l := rp.l
	rp.count()
	d := decision{c: c}
	l.plan(&d)
	st := ReplayStep{Attempt: l.onTarget, Retry: d.retry, Resend: d.resend, Restart: d.restart}
	if d.resend {
		st.Lo, st.Hi = l.p.jitterBounds(d.s, l.p.nominal(d.s, d.resendK), d.resendK)
	}
	if d.retry {
		l.afterResend(d)
	}
	return st
}

// Restart starts the backoff loop's count again on the current target,
// as a client does whose next step the policy does not model.
func (rp *Replay) Restart() { rp.l.onTarget, rp.l.prev = 0, 0 }

// Switch moves to another target: the counts on the target, re-sends
// included, start again; the request's own count goes on.
func (rp *Replay) Switch() {
	l := rp.l
	l.onTarget, l.limit, l.prev, l.tried = 0, 0, 0, 0
	if l.resends != nil {
		l.resends.Reset()
	}
}

func (rp *Replay) count() {
	rp.l.n++
	rp.l.onTarget++
	rp.l.tried++
}
