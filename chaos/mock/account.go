package mock

import (
	"math"
	"strconv"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// The provider account of a scenario's limits: (scenario.Account), shared
// by every client of the scenario, as the providers document theirs:
// "token bucket … continuously replenished up to your maximum" (Anthropic),
// a bucket per limit that holds a minute's worth and refills at that rate,
// in policy time, so that a time-scaled fleet sees a faster minute.
//
// Order at the mock, for each attempt with a request: the account first,
// then the scenario's attempts: fault or outage: draw. A request a bucket
// cannot take is answered 429 at once (nothing is taken from any bucket),
// with retry-after the whole seconds, rounded up, until it would fit; one
// that arrives while Concurrency answers are in flight is answered
// overloaded (529 overloaded_error for Anthropic, 503 for the others, no
// retry-after); either way it meets the account instead of its planned
// fault (the attempts: list stays numbered by arrival: the entry of a
// limited attempt is not met). An admitted request takes one request and
// its input tokens (its size, estimated as the providers suggest: a token
// per 4 bytes of body) at once; the output tokens of its answer (the
// usage's output_tokens) are charged when the answer is served (it ends
// with a 200), which may take the output bucket below zero: a debt later
// requests wait out. A request larger than a whole bucket is admitted
// when the bucket is full, into debt, so that it is never refused forever.

// bucket is one continuous-refill token bucket: it holds up to capacity
// and gains capacity tokens per minute of policy time, continuously; it
// starts full. Its tokens may fall below zero (output tokens charged after
// the answer, a request larger than the bucket): a debt.
type bucket struct {
	name     string
	capacity float64
	tokens   float64
	at       time.Duration // the policy time tokens was computed at
}

func newBucket(name string, perMinute int) *bucket {
	if perMinute <= 0 {
		return nil
	}
	return &bucket{name: name, capacity: float64(perMinute), tokens: float64(perMinute)}
}

// rate is tokens per nanosecond of policy time.
func (b *bucket) rate() float64 { return b.capacity / float64(time.Minute) }

// refill brings the bucket to policy time now.
func (b *bucket) refill(now time.Duration) {
	if now <= b.at {
		return
	}
	b.tokens = math.Min(b.capacity, b.tokens+float64(now-b.at)*b.rate())
	b.at = now
}

// need is what a request asking for n takes from b: n, at most a whole
// bucket (a larger request waits for a full bucket and leaves a debt).
func (b *bucket) need(n int) float64 { return math.Min(float64(n), b.capacity) }

// wait is how long, from the refilled now, until b holds n (0 when it
// does): rounded up to the nanosecond, so that at now+wait it holds n.
// A shortfall below tokenEpsilon is rounding, not a shortfall: without it
// a refill that lands a hair under n would refuse a request that waited.
func (b *bucket) wait(n int) time.Duration {
	short := b.need(n) - b.tokens
	if short <= tokenEpsilon {
		return 0
	}
	return time.Duration(math.Ceil(short / b.rate()))
}

// tokenEpsilon is the float rounding a bucket's count tolerates.
const tokenEpsilon = 1e-6

// report is b as an answer reports it, after refill.
func (b *bucket) report(requested int) wire.Bucket {
	rem := int(math.Floor(math.Max(0, b.tokens)))
	reset := time.Duration(math.Ceil((b.capacity - b.tokens) / b.rate()))
	return wire.Bucket{Name: b.name, Limit: int(b.capacity), Remaining: rem, Reset: reset, Requested: requested}
}

// account is the mock's provider account: the buckets of the limits it
// has (nil when unlimited), and the answers in flight. It is not safe for
// concurrent use: the Env calls it under e.mu.
type account struct {
	requests, input, output *bucket
	concurrency             int
	inFlight                int
}

func newAccount(a *scenario.Account) *account {
	if a.Empty() {
		return nil
	}
	return &account{
		requests:    newBucket(wire.BucketRequests, a.RequestsPerMinute),
		input:       newBucket(wire.BucketInputTokens, a.InputTokensPerMinute),
		output:      newBucket(wire.BucketOutputTokens, a.OutputTokensPerMinute),
		concurrency: a.Concurrency,
	}
}

// buckets lists the account's buckets, in the order the answers report
// them.
func (a *account) buckets() []*bucket {
	var bs []*bucket
	for _, b := range []*bucket{a.requests, a.input, a.output} {
		if b != nil {
			bs = append(bs, b)
		}
	}
	return bs
}

// admission is the account's decision on one request.
type admission struct {
	// limited names the bucket that refused the request (the one that
	// makes it wait longest), wire.Concurrency when too many answers are
	// in flight; "" when it was admitted.
	limited string
	// wait is how long until the request would fit (policy time); 0 when
	// admitted or refused for concurrency.
	wait time.Duration
	// state is what the answer reports in its rate-limit headers.
	state *wire.RateLimit
}

// asks is what a request of in input tokens asks of bucket b: one request,
// its input tokens, and of the output bucket one token (an answer is
// admitted while the output bucket is not spent; its tokens are charged
// when it is served).
func (a *account) asks(b *bucket, in int) int {
	switch b {
	case a.requests:
		return 1
	case a.input:
		return in
	}
	return 1
}

// admit decides on a request of in input tokens arriving at policy time
// now: the rate limits first, then the concurrency. An admitted request
// takes its request and input tokens, and counts as in flight until
// release.
func (a *account) admit(now time.Duration, in int) admission {
	var ad admission
	for _, b := range a.buckets() {
		b.refill(now)
		if w := b.wait(a.asks(b, in)); w > ad.wait {
			ad.limited, ad.wait = b.name, w
		}
	}
	switch {
	case ad.limited != "":
	case a.concurrency > 0 && a.inFlight >= a.concurrency:
		ad.limited = wire.Concurrency
	default:
		if a.requests != nil {
			a.requests.tokens -= a.requests.need(1)
		}
		if a.input != nil {
			a.input.tokens -= a.input.need(in)
		}
		a.inFlight++
	}
	ad.state = a.state(in, ad)
	return ad
}

// state is the account as an answer reports it.
func (a *account) state(in int, ad admission) *wire.RateLimit {
	rl := &wire.RateLimit{Limited: ad.limited, Wait: ad.wait}
	for _, b := range a.buckets() {
		rl.Buckets = append(rl.Buckets, b.report(a.asks(b, in)))
	}
	return rl
}

// serve charges the output tokens of an answer served at policy time now.
func (a *account) serve(now time.Duration, out int) {
	if a.output != nil {
		a.output.refill(now)
		a.output.tokens -= float64(out)
	}
}

// release ends an admitted answer's time in flight.
func (a *account) release() { a.inFlight = max(0, a.inFlight-1) }

// inputTokens estimates a request's input tokens from its body's size: a
// token per 4 bytes, rounded up, at least 1 (the providers' rule of thumb
// before their own tokenizers count).
func inputTokens(body []byte) int { return max(1, (len(body)+3)/4) }

// limitFault is the fault an attempt the account refused meets: a 429
// with the retry-after of its wait, or an overloaded answer (529 for
// Anthropic, 503 for the other formats) for concurrency. Its journal
// record (trace.Limited) rebuilds it (LimitFault).
func limitFault(provider string, ad admission) scenario.Fault {
	if ad.limited == wire.Concurrency {
		return scenario.Fault{Kind: fault.Status{Status: overloadedStatus(provider)}}
	}
	ra := strconv.Itoa(wire.RetryAfterSeconds(ad.wait))
	return scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra}}
}

// overloadedStatus is the status an account over its concurrency answers
// with in the format of provider.
func overloadedStatus(provider string) int {
	if provider == wire.ProviderAnthropic {
		return 529
	}
	return 503
}

// LimitFault is the fault an attempt met when the scenario's account
// refused it, from its journal record: what the checks compare the client
// with (verify.Met); ok false when the account did not refuse it.
func LimitFault(a ServerAttempt) (scenario.Fault, bool) {
	if a.Limited == nil {
		return scenario.Fault{}, false
	}
	if a.Limited.Limit == wire.Concurrency {
		return scenario.Fault{Kind: fault.Status{Status: a.Status}}, true
	}
	ra := a.Limited.RetryAfter
	return scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra}}, true
}

// journalLimited is the journal's record of an admission that refused.
func journalLimited(ad admission) *trace.Limited {
	if ad.limited == "" {
		return nil
	}
	l := &trace.Limited{Limit: ad.limited}
	if ad.limited != wire.Concurrency {
		l.RetryAfter = strconv.Itoa(wire.RetryAfterSeconds(ad.wait))
		l.WaitMs = ad.wait.Milliseconds()
	}
	return l
}

// accountAsk is what a request asks of the account: its input tokens, and
// the format that answers it (the overloaded status is the format's).
type accountAsk struct {
	in       int
	provider string
}

// admitted reports whether the account admitted the request (or there is
// no account): it then counts as in flight until it ends.
func (ad admission) admitted() bool { return ad.state != nil && ad.limited == "" }

// accountSince is the account's policy time at t: since the Env started.
func (e *Env) accountSince(t time.Time) time.Duration { return e.policyTime(e.accountT0, t) }

// admitLocked asks the account about a request that arrived then; the
// zero admission (admitted, no state) without an account or a request.
// e.mu is held.
func (e *Env) admitLocked(arrived time.Time, ask *accountAsk) admission {
	if e.account == nil || ask == nil {
		return admission{}
	}
	return e.account.admit(e.accountSince(arrived), ask.in)
}

// limitedLocked records the fault attempt n meets when the account refused
// it, in place of its planned one, and returns it. e.mu is held.
func (e *Env) limitedLocked(n int, arrived time.Time, ask *accountAsk, ad admission) scenario.Fault {
	if n == 1 {
		e.outageT0 = arrived // the outage's clock starts at attempt 1, refused or not
	}
	f := limitFault(ask.provider, ad)
	e.met = append(e.met, f)
	return f
}

// settleLocked ends an admitted attempt's time in flight and charges the
// output tokens of its answer when it was served (a 200). e.mu is held.
func (e *Env) settleLocked(st *attemptState) {
	if e.account == nil || !st.admitted {
		return
	}
	st.admitted = false
	e.account.release()
	if st.rec.Status == 200 {
		e.account.serve(e.accountSince(st.rec.Ended), st.out)
	}
}
