package retry

import (
	"sync"
	"time"
)

// Throttle is client-side adaptive throttling as the Google SRE book
// describes it ("Handling Overload"): a client keeps, over a sliding window
// of the last minutes, the requests it attempted and the requests the
// backend accepted, and rejects a new request locally, without sending it,
// with probability
//
//	max(0, (requests − K·accepts) / (requests + 1))
//
// With K = 2 a client sends about twice what the backend accepts: while
// the backend accepts everything nothing is rejected; when it rejects
// everything the client sends less and less, which lets an overloaded
// backend recover. Locally rejected requests count as requests, so the
// rejection grows while the backend stays down. It sits beside Budget
// (gRPC's retry throttling): both gate retries.
//
// Accepts are attempts the provider did not refuse for load: every answer
// but a rate limit, an overload or an unavailable provider (429, 529, 503).
// Many Retriers may share one Throttle (it is safe for concurrent use); a
// nil *Throttle allows everything and records nothing.
type Throttle struct {
	mu    sync.Mutex
	k     float64
	slot  time.Duration
	now   func() time.Time
	slots []throttleSlot // a ring: slot i holds the counts of its span of time
}

// throttleSlot is the counts of one span of the window: the span's number
// (time since the epoch ÷ slot), requests and accepts.
type throttleSlot struct {
	span              int64
	requests, accepts int
}

// throttleSlots is how many spans the window is cut into: the window
// slides by a sixtieth of itself, and a Throttle's memory is fixed.
const throttleSlots = 60

// DefaultThrottleK and DefaultThrottleWindow are the SRE book's: K = 2 over
// the last two minutes.
const (
	DefaultThrottleK      = 2
	DefaultThrottleWindow = 2 * time.Minute
)

// NewThrottle returns an empty Throttle: K (≥ 1; the SRE book's 2), the
// window the counts slide over (at least throttleSlots nanoseconds), and
// the clock (nil: time.Now).
func NewThrottle(k float64, window time.Duration, now func() time.Time) *Throttle {
	if now == nil {
		now = time.Now
	}
	slot := max(window/throttleSlots, 1)
	return &Throttle{k: k, slot: slot, now: now, slots: make([]throttleSlot, throttleSlots)}
}

// at returns the slot of the current span, emptied when it last held an
// older span. t.mu is held.
func (t *Throttle) at() *throttleSlot {
	span := t.now().UnixNano() / int64(t.slot)
	s := &t.slots[int(uint64(span)%throttleSlots)]
	if s.span != span {
		*s = throttleSlot{span: span}
	}
	return s
}

// counts sums the requests and accepts of the window. t.mu is held.
func (t *Throttle) counts() (requests, accepts int) {
	span := t.now().UnixNano() / int64(t.slot)
	for _, s := range t.slots {
		if s.span > span-throttleSlots && s.span <= span {
			requests += s.requests
			accepts += s.accepts
		}
	}
	return requests, accepts
}

// Probability is the chance that a request is rejected now:
// max(0, (requests − K·accepts) / (requests + 1)) over the window.
func (t *Throttle) Probability() float64 {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.probability()
}

func (t *Throttle) probability() float64 {
	req, acc := t.counts()
	return max(0, (float64(req)-t.k*float64(acc))/float64(req+1))
}

// Allow decides whether a request may be sent now: draw gives a uniform
// number in [0, 1) (drawn only when the probability is above 0, so that a
// healthy throttle consumes no randomness). A rejected request is counted
// as a request; an allowed one is counted when Record reports how it went.
func (t *Throttle) Allow(draw func() float64) bool {
	if t == nil {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.probability(); p > 0 && draw() < p {
		t.at().requests++
		return false
	}
	return true
}

// Record counts a request that was sent, and whether the backend
// accepted it.
func (t *Throttle) Record(accepted bool) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.at()
	s.requests++
	if accepted {
		s.accepts++
	}
}

// Counts returns the requests and accepts of the window.
func (t *Throttle) Counts() (requests, accepts int) {
	if t == nil {
		return 0, 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts()
}

// refusedForLoad reports whether a failure of type ft is the provider
// refusing a request for load: not an accept, for a Throttle.
func refusedForLoad(ft FailureType) bool {
	switch ft {
	case RateLimit, Overloaded, ProviderUnavailable:
		return true
	}
	return false
}

// limiters returns the Budget and Throttle r uses: its own fields when set,
// else the ones it made once from its policy's budget and
// adaptiveThrottling (a window in policy time, so a time-scaled client's
// window is as much shorter as its waits), else nil.
func (r *Retrier) limiters() (*Budget, *Throttle) {
	r.own.once.Do(func() {
		p := r.Policy
		if p == nil {
			return
		}
		if b := p.Budget; b.MaxTokens > 0 && r.Budget == nil {
			r.own.budget = NewBudget(b.MaxTokens, b.TokenRatio)
		}
		if th := p.Throttling; th.K > 0 && r.Throttle == nil {
			scale := r.TimeScale
			if scale <= 0 {
				scale = 1
			}
			r.own.throttle = NewThrottle(th.K, time.Duration(float64(th.Window)*scale), r.Now)
		}
	})
	b, t := r.Budget, r.Throttle
	if b == nil {
		b = r.own.budget
	}
	if t == nil {
		t = r.own.throttle
	}
	return b, t
}
