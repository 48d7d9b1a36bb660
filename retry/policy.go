package retry

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"time"
)

// Kind is how the nominal wait grows from one retry to the next.
type Kind string

// Backoff kinds. With k the retry index (0 for the first retry) plus
// Policy.ExponentStart:
//
//	exponential  initialDelay × multiplier^k
//	linear       initialDelay × (k+1)
//	constant     initialDelay
//	none         0 (retry at once)
//
// The nominal wait is then capped at maxDelay (when > 0), and jitter applied.
const (
	Exponential Kind = "exponential"
	Linear      Kind = "linear"
	Constant    Kind = "constant"
	NoBackoff   Kind = "none"
)

// Jitter is how a nominal wait d is randomised. Randomness always comes from
// the *rand.Rand passed in, so jitter is a pure function of it.
type Jitter string

// Jitter kinds.
const (
	NoJitter           Jitter = "none"         // d
	FullJitter         Jitter = "full"         // uniform [0, d]
	EqualJitter        Jitter = "equal"        // d/2 + uniform [0, d/2]
	DecorrelatedJitter Jitter = "decorrelated" // uniform [initialDelay, 3 × previous wait], capped at maxDelay
	ProportionalJitter Jitter = "proportional" // d + d × f × uniform [-1, 1], f = jitterFraction; not below 0
	SDKJitter          Jitter = "sdk"          // d × (1 − 0.25 × uniform [0, 1)), the official SDKs'
	AdditiveJitter     Jitter = "additive"     // d × (1 + f × uniform [0, 1)), f = jitterFraction (Claude Code: 0.25)
)

// Strategy is how one failure type is retried.
type Strategy struct {
	// Retry says whether the failure type is retried at all.
	Retry bool
	// MaxAttempts is the total number of attempts (the first one included)
	// on one target while failures of this type occur.
	MaxAttempts  int
	InitialDelay time.Duration
	MaxDelay     time.Duration // 0: no cap
	Multiplier   float64
	Kind         Kind
	Jitter       Jitter
	// JitterFraction is f of proportional jitter (0.1 = ±10%).
	JitterFraction float64
	// RespectRetryAfter uses the provider's Retry-After (as Policy.RetryAfter
	// says) instead of the backoff when the error carries one.
	RespectRetryAfter bool
	// LimitUnknown and WaitsUnknown mark what a policy learnt by experiment
	// could not tell (`chaos probe` stopped before the client gave up, or
	// before its backoff was fitted; YAML `maxRetries: unknown`,
	// `initialDelay: unknown`). Envelope then allows a retry after any
	// attempt (LimitUnknown) and any wait, 0 to UnknownWait
	// (WaitsUnknown): what is not known is not checked. A Retrier still
	// runs MaxAttempts attempts with InitialDelay.
	LimitUnknown bool
	WaitsUnknown bool
}

// UnknownWait is the top of Envelope's band for a strategy whose waits
// are not known (Strategy.WaitsUnknown): longer than any scenario runs.
const UnknownWait = 24 * time.Hour

// LimitKnown reports whether the number of attempts of ft is known: a
// client that stops retrying it where the policy would retry once more is
// then off its policy (chaos's delays: policy says so); with an unknown
// limit (Strategy.LimitUnknown) it may stop anywhere.
func (p *Policy) LimitKnown(ft FailureType) bool { return !p.Strategy(ft).LimitUnknown }

// RetryAfter says how a provider's Retry-After is read and used. The zero
// value reads retry-after-ms, then retry-after (seconds or an HTTP-date),
// as provider.ParseRetryAfter does, and uses any value.
type RetryAfter struct {
	// Header says which headers are read: "" reads retry-after-ms first,
	// then retry-after; HeaderRetryAfter reads retry-after only (seed 000's
	// forgeflare, which knows no retry-after-ms).
	Header string
	// Padding adds a fraction of the value (Plandex: 0.1 = +10%).
	Padding float64
	// Cap limits the value used (forgeflare: 60s). 0: no cap.
	Cap time.Duration
	// Ceiling makes the error non-retryable when the value (before padding)
	// is above it (Plandex: 10s). 0: no ceiling.
	Ceiling time.Duration
	// MaxUsable falls back to the backoff when the value is above it (the
	// Python SDKs: 60s). 0: no limit. See Zero for a value of 0.
	MaxUsable time.Duration
	// IntegerOnly uses only a header of whole seconds; an HTTP-date or a
	// fraction falls back to the backoff (forgeflare).
	IntegerOnly bool
	// Message reads the wait an error message asks for in words ("Please
	// try again in 1.5s": provider.ParseTryAgain) when no header gave one,
	// from an HTTP error body or an in-stream error such as a Responses
	// stream's response.failed rate_limit_exceeded (Codex CLI). The
	// official SDKs read headers only.
	Message bool
	// ZeroMsDefers lets a retry-after-ms of 0 yield to retry-after: when
	// retry-after is present and readable its value is used, else the 0 (the
	// Node SDKs: `if (retryAfterHeader && !timeoutMillis)`).
	ZeroMsDefers bool
	// Zero says what a value of 0 means: ZeroImmediate retries at once,
	// ZeroBackoff waits the backoff. "": the backoff when MaxUsable > 0,
	// else at once.
	Zero string
	// Jitter adds up to this fraction of the value, uniformly at random
	// (Claude Code: 0.25, value × (1 + 0.25 × uniform [0, 1))). 0: none.
	Jitter float64
	// RequiredFor lists failure types retried only when the error carries
	// a Retry-After (LangChain.js: a 429 without one is thrown at once).
	RequiredFor []FailureType
	// Floor waits at least the backoff: max(the Retry-After value, the
	// backoff with its jitter) (Claude Code). false: the value replaces
	// the backoff.
	Floor bool
	// NominalFloor waits max(the value, the backoff before its jitter),
	// then adds Jitter to that (Gemini CLI: max(backoff, retryDelay) ×
	// (1 + 0.2 × uniform [0, 1))). Floor wins when both are set.
	NominalFloor bool
	// IntegerPart reads retry-after as JavaScript's parseInt does: its
	// leading whole number of seconds ("2.5" is 2s, "5s" is 5s) and no
	// HTTP-date (no value: the backoff). Claude Code reads it so.
	IntegerPart bool
	// NoDate reads no HTTP-date: a retry-after that is not a number is no
	// value (Gemini CLI reads a RetryInfo retryDelay, "8s" or "1.5s",
	// which has no date form; the mock writes a numeric retry-after as
	// one, and a date not at all).
	NoDate bool
	// Negative says what a negative value (an HTTP-date in the past, a
	// negative number) means: NegativeZero reads it as 0 (then Zero
	// decides), NegativeBackoff waits the backoff. "": as
	// provider.ParseRetryAfter reads it, a date in the past is 0 and a
	// negative number is no value (the next header is read).
	Negative string
}

// RetryAfter.Zero and RetryAfter.Negative rules.
const (
	ZeroImmediate   = "immediate"
	ZeroBackoff     = "backoff"
	NegativeZero    = "zero"
	NegativeBackoff = "backoff"
)

// needs reports whether a failure of type ft is not retried because it
// carries no Retry-After (has false) and RequiredFor names ft.
func (cfg RetryAfter) needs(ft FailureType, has bool) bool {
	return !has && slices.Contains(cfg.RequiredFor, ft)
}

// jittered is ra with RetryAfter.Jitter applied for u in [0, 1).
func (cfg RetryAfter) jittered(ra time.Duration, u float64) time.Duration {
	return ra + time.Duration(float64(ra)*cfg.Jitter*u)
}

// zeroBackoff reports whether a value of 0 waits the backoff.
func (cfg RetryAfter) zeroBackoff() bool {
	return cfg.Zero == ZeroBackoff || (cfg.Zero == "" && cfg.MaxUsable > 0)
}

// Escalation configures the model ladder of a Retrier.
type Escalation struct {
	// AfterRetries escalates to the next model of the ladder once this many
	// retries on the current model have failed with a retryable failure.
	// 0 escalates only when the current model's retries are exhausted.
	AfterRetries int
	// OnContextLimit escalates a context_too_long failure (which is never
	// retried on the same model) when the ladder has a next model.
	OnContextLimit bool
	// Ladder is the policy's default model ladder, used when the Retrier
	// names none (escalation-epic: seed 004's MODEL_LADDER).
	Ladder []string
	// MaxCost caps what escalation may add to a run, in US dollars: the sum
	// of the cost estimates of its switches (seed 004's risk "cost
	// explosion from escalation"). A switch that would go above it, or
	// whose cost cannot be estimated, does not happen. 0: no cap.
	MaxCost float64
}

// Fallback configures Plandex's fallback chain (seed 001).
type Fallback struct {
	Enabled bool
	// MaxRetriesWithoutFallback: a retryable failure that persists through
	// this many failed attempts switches to a fallback (Plandex: 3).
	MaxRetriesWithoutFallback int
	// AdditionalAttempts on the fallback target after the switch, with the
	// counter reset (Plandex's MAX_ADDITIONAL_RETRIES_WITH_FALLBACK: 1).
	AdditionalAttempts int
}

// Policy is a complete retry policy: per failure type strategies, Retry-After
// handling, limits, escalation and fallback. Build one with preset.Get,
// policyfile.Parse or policyfile.DecodeNode; a Policy is read-only once built
// and may be shared by goroutines.
type Policy struct {
	Name    string
	Enabled bool // false: never retry, never escalate
	// MaxElapsed stops retrying when the next wait would end after this much
	// policy time since the first attempt began. 0: no limit.
	MaxElapsed time.Duration
	// AttemptTimeout bounds each attempt; an attempt that hits it fails as
	// timeout. 0: none.
	AttemptTimeout time.Duration
	// ClientTimeoutFinal never retries an attempt that the provider
	// client's own per-attempt timeout cut (provider.Config.Timeout, a
	// scenario's client.timeout), while network timeouts and AttemptTimeout
	// stay retryable: openai-go returns the error of its request timeout
	// (option.WithRequestTimeout) without retrying, and retries the timeouts
	// of its HTTP client.
	ClientTimeoutFinal bool
	// ExponentStart is added to the retry index k of the backoff formula
	// (0: the first wait is initialDelay).
	ExponentStart int
	// MaxAttempts and MaxDelay are global caps (seed 001's
	// PLANDEX_MAX_RETRY_ATTEMPTS and PLANDEX_MAX_RETRY_DELAY_MS): they only
	// lower, never raise, what each failure type's strategy says. MaxAttempts
	// caps the attempts of a logical request in all, fallbacks and ladder
	// included; MaxDelay caps every wait, a Retry-After included. 0: no cap.
	MaxAttempts  int
	MaxDelay     time.Duration
	Default      Strategy
	FailureTypes map[FailureType]Strategy
	// RetryableErrors, when not nil, is seed 004's RetryPolicy.retryableErrors:
	// a failure is also retried when the list names its seed 004 ErrorType
	// (see epicClass) or its retrylab failure type. StatusRetry still
	// overrides it.
	RetryableErrors []string
	// StatusRetry overrides Strategy.Retry for HTTP errors with these statuses.
	StatusRetry map[int]bool
	// StreamErrors retries stream-level failures (after the response began);
	// the official SDKs never do.
	StreamErrors bool
	// StreamTransient retries every stream-level failure but stream_parse,
	// whatever its type: forgeflare's StreamTransient, which covers SSE
	// error events of unknown type (authentication_error, not_found_error,
	// ...) as well as overloads and drops. Set by the forgeflare preset
	// (YAML: streamTransient).
	StreamTransient bool
	// HonorShouldRetry obeys the x-should-retry response header.
	HonorShouldRetry bool
	// ShouldRetryIgnored lists HTTP statuses whose x-should-retry a
	// policy that honours the header ignores (Claude Code retries a 503
	// that says x-should-retry: false, and obeys it on 429, 500 and 529).
	ShouldRetryIgnored []int
	// Resends are loops of their own beside the backoff loop (Resend).
	Resends           []Resend
	RetryAfter        RetryAfter
	Escalation        Escalation
	Fallback          Fallback
	AllowIrreversible bool // retry irreversible operations (PLANDEX_RETRY_IRREVERSIBLE)
	// Budget, when MaxTokens is set, gives a Retrier that has no Budget of
	// its own one (gRPC's retry throttling; YAML: budget).
	Budget BudgetConfig
	// Throttling, when K is set, gives a Retrier that has no Throttle of
	// its own one (the SRE book's client-side adaptive throttling; YAML:
	// adaptiveThrottling).
	Throttling ThrottleConfig
}

// BudgetConfig is a policy's retry budget: NewBudget's maxTokens and
// tokenRatio (gRPC's defaults 10 and 0.1). MaxTokens 0: none.
type BudgetConfig struct {
	MaxTokens  float64
	TokenRatio float64
}

// ThrottleConfig is a policy's client-side adaptive throttling: NewThrottle's
// K and window, in policy time (the SRE book's 2 and 2 minutes). K 0: none.
type ThrottleConfig struct {
	K      float64
	Window time.Duration
}

// Strategy returns the strategy for ft: its own, or the policy's default,
// with the global caps (MaxAttempts, MaxDelay) applied.
func (p *Policy) Strategy(ft FailureType) Strategy { return p.capped(p.rawStrategy(ft)) }

// rawStrategy is ft's strategy as configured, before the global caps.
func (p *Policy) rawStrategy(ft FailureType) Strategy {
	if s, ok := p.FailureTypes[ft]; ok {
		return s
	}
	return p.Default
}

// capped lowers s to the global caps.
func (p *Policy) capped(s Strategy) Strategy {
	if p.MaxAttempts > 0 && s.MaxAttempts > p.MaxAttempts {
		s.MaxAttempts = p.MaxAttempts
	}
	if p.MaxDelay > 0 && (s.MaxDelay == 0 || s.MaxDelay > p.MaxDelay) {
		s.MaxDelay = p.MaxDelay
	}
	return s
}

// Clone returns a deep copy of p.
func (p *Policy) Clone() *Policy {
	q := *p
	q.FailureTypes = make(map[FailureType]Strategy, len(p.FailureTypes))
	for k, v := range p.FailureTypes {
		q.FailureTypes[k] = v
	}
	q.RetryableErrors = slices.Clone(p.RetryableErrors)
	q.Escalation.Ladder = slices.Clone(p.Escalation.Ladder)
	q.ShouldRetryIgnored = slices.Clone(p.ShouldRetryIgnored)
	q.Resends = slices.Clone(p.Resends)
	for i, rs := range q.Resends {
		q.Resends[i].Statuses, q.Resends[i].Types = slices.Clone(rs.Statuses), slices.Clone(rs.Types)
	}
	q.StatusRetry = make(map[int]bool, len(p.StatusRetry))
	for k, v := range p.StatusRetry {
		q.StatusRetry[k] = v
	}
	return &q
}

// Retries reports whether p retries the failure c at all, before counting
// attempts or reading its Retry-After: its type, its HTTP status, whether it
// came after the stream began, and the x-should-retry it carried. A harness
// that knows the exact failure a client met (not only its type, as
// Envelope takes) asks this.
func (p *Policy) Retries(c Classification) bool { return p.retries(c, p.Strategy(c.Type)) }

// retries reports whether p retries c at all (before counting attempts).
func (p *Policy) retries(c Classification, s Strategy) bool {
	if !p.Enabled || c.Type == Canceled || (p.ClientTimeoutFinal && c.ClientTimeout) {
		return false
	}
	retry := s.Retry || p.listed(c)
	if c.Status != 0 && !c.Streamed {
		if v, ok := p.StatusRetry[c.Status]; ok {
			retry = v
		}
	}
	if c.Streamed && p.StreamTransient && c.Type != StreamParse {
		retry = true
	}
	if c.Streamed && !p.StreamErrors {
		retry = false
	}
	if p.ObeysShouldRetry(c.Status) && c.ShouldRetry != nil {
		retry = *c.ShouldRetry
	}
	if p.RetryAfter.needs(c.Type, c.HasRetryAfter) {
		retry = false
	}
	return retry
}

// ObeysShouldRetry reports whether p obeys the x-should-retry header on
// a response of HTTP status st.
func (p *Policy) ObeysShouldRetry(st int) bool {
	return p.HonorShouldRetry && !slices.Contains(p.ShouldRetryIgnored, st)
}

// typeRetried reports whether some error of type ft may be retried under p.
func (p *Policy) typeRetried(ft FailureType) bool {
	if !p.Enabled || ft == Canceled {
		return false
	}
	if p.Strategy(ft).Retry {
		return true
	}
	for _, name := range p.RetryableErrors {
		if slices.Contains(listTypes(name), ft) {
			return true
		}
	}
	// Under StreamTransient a stream-level failure is retried whatever its
	// type, but stream_parse.
	if p.StreamTransient && p.StreamErrors && ft != StreamParse && slices.Contains(streamTypes, ft) {
		return true
	}
	for st, v := range p.StatusRetry {
		if !v {
			continue
		}
		for _, t := range statusTypes(st) {
			if t == ft {
				return true
			}
		}
	}
	return false
}

// nominal is the wait before retry index k (0-based) before jitter.
func (p *Policy) nominal(s Strategy, k int) time.Duration {
	e := k + p.ExponentStart
	var d float64
	switch s.Kind {
	case Exponential, "":
		m := s.Multiplier
		if m == 0 {
			m = 2
		}
		d = float64(s.InitialDelay) * math.Pow(m, float64(e))
	case Linear:
		d = float64(s.InitialDelay) * float64(e+1)
	case Constant:
		d = float64(s.InitialDelay)
	case NoBackoff:
		d = 0
	}
	if s.MaxDelay > 0 && d > float64(s.MaxDelay) {
		d = float64(s.MaxDelay)
	}
	if d > float64(math.MaxInt64/2) {
		d = float64(math.MaxInt64 / 2)
	}
	return time.Duration(d)
}

// jitter applies s.Jitter to d; prev is the previous wait (decorrelated).
func jitter(s Strategy, d, prev time.Duration, r *rand.Rand) time.Duration {
	switch s.Jitter {
	case FullJitter:
		return time.Duration(r.Float64() * float64(d))
	case EqualJitter:
		return d/2 + time.Duration(r.Float64()*float64(d-d/2))
	case DecorrelatedJitter:
		lo := s.InitialDelay
		if prev < lo {
			prev = lo
		}
		hi := 3 * prev
		v := lo + time.Duration(r.Float64()*float64(hi-lo))
		if s.MaxDelay > 0 && v > s.MaxDelay {
			v = s.MaxDelay
		}
		return v
	case ProportionalJitter:
		v := float64(d) + float64(d)*s.JitterFraction*(2*r.Float64()-1)
		if v < 0 {
			v = 0
		}
		return time.Duration(v)
	case SDKJitter:
		return time.Duration(float64(d) * (1 - 0.25*r.Float64()))
	case AdditiveJitter:
		return time.Duration(float64(d) * (1 + s.JitterFraction*r.Float64()))
	}
	return d
}

// jitterBounds is the range jitter can give for nominal d at retry index k.
func (p *Policy) jitterBounds(s Strategy, d time.Duration, k int) (lo, hi time.Duration) {
	switch s.Jitter {
	case FullJitter:
		return 0, d
	case EqualJitter:
		return d / 2, d
	case DecorrelatedJitter:
		hi := s.InitialDelay
		for i := 0; i <= k; i++ {
			hi *= 3
			if s.MaxDelay > 0 && hi > s.MaxDelay {
				hi = s.MaxDelay
				break
			}
		}
		lo := s.InitialDelay
		if s.MaxDelay > 0 && lo > s.MaxDelay {
			lo = s.MaxDelay
		}
		return lo, hi
	case ProportionalJitter:
		lo := time.Duration(float64(d) * (1 - s.JitterFraction))
		if lo < 0 {
			lo = 0
		}
		return lo, time.Duration(float64(d) * (1 + s.JitterFraction))
	case SDKJitter:
		return time.Duration(float64(d) * 0.75), d
	case AdditiveJitter:
		return d, time.Duration(float64(d) * (1 + s.JitterFraction))
	}
	return d, d
}

// retryAfterWait resolves a Retry-After value. use: the value replaces the
// backoff; refuse: the value is above the ceiling (non-retryable).
func (p *Policy) retryAfterWait(s Strategy, ra time.Duration, has bool, raw string) (wait time.Duration, use, refuse bool) {
	if !has || !s.RespectRetryAfter {
		return 0, false, false
	}
	cfg := p.RetryAfter
	if cfg.IntegerOnly {
		if raw != "" {
			if _, err := strconv.ParseUint(raw, 10, 63); err != nil {
				return 0, false, false
			}
		} else if ra%time.Second != 0 {
			return 0, false, false
		}
	}
	if ra < 0 {
		if cfg.Negative != NegativeZero {
			return 0, false, false
		}
		ra = 0
	}
	if cfg.Ceiling > 0 && ra > cfg.Ceiling {
		return 0, false, true
	}
	if (ra == 0 && cfg.zeroBackoff()) || (cfg.MaxUsable > 0 && ra > cfg.MaxUsable) {
		return 0, false, false
	}
	if cfg.Cap > 0 && ra > cfg.Cap {
		ra = cfg.Cap
	}
	if cfg.Padding > 0 {
		ra += time.Duration(float64(ra) * cfg.Padding)
	}
	if p.MaxDelay > 0 && ra > p.MaxDelay {
		ra = p.MaxDelay
	}
	return ra, true, false
}

// Envelope is the range of waits the policy allows before attempt+1 after
// attempt `attempt` (1-based, counted on the current target) failed with ft
// (jitter included; Retry-After honoured when given). ok=false if the policy
// would not retry. A switch to a fallback or to the next model of a ladder is
// not a retry on the same target and waits 0, outside any envelope.
func (p *Policy) Envelope(ft FailureType, attempt int, retryAfter time.Duration, hasRetryAfter bool) (lo, hi time.Duration, ok bool) {
	return p.EnvelopeShouldRetry(ft, attempt, retryAfter, hasRetryAfter, nil)
}

// EnvelopeShouldRetry is Envelope for a failure whose response carried
// x-should-retry (shouldRetry non-nil): a policy that honours the header
// retries (true) or stops (false) whatever the failure type, as Retrier.Do
// does; the attempt limit and the waits still come from ft's strategy.
func (p *Policy) EnvelopeShouldRetry(ft FailureType, attempt int, retryAfter time.Duration, hasRetryAfter bool, shouldRetry *bool) (lo, hi time.Duration, ok bool) {
	retried := p.typeRetried(ft)
	if p.Enabled && ft != Canceled && p.HonorShouldRetry && shouldRetry != nil {
		retried = *shouldRetry
	}
	if !retried || attempt < 1 || p.RetryAfter.needs(ft, hasRetryAfter) {
		return 0, 0, false
	}
	s := p.Strategy(ft)
	if attempt >= s.MaxAttempts && (!s.LimitUnknown || p.MaxAttempts > 0 && attempt >= p.MaxAttempts) {
		return 0, 0, false
	}
	return p.waitEnvelope(s, attempt-1, retryAfter, hasRetryAfter, "")
}

// waitEnvelope is the range of waits of strategy s before retry index k
// (0-based) for a failure whose Retry-After the policy read as ra (has;
// raw: the header as sent, "" if not known); ok is false when the value
// is above the policy's ceiling (the failure is final).
func (p *Policy) waitEnvelope(s Strategy, k int, ra time.Duration, has bool, raw string) (lo, hi time.Duration, ok bool) {
	ra, use, refuse := p.retryAfterWait(s, ra, has, raw)
	if refuse {
		return 0, 0, false
	}
	d := p.nominal(s, k)
	lo, hi = p.jitterBounds(s, d, k)
	if s.WaitsUnknown {
		lo, hi = 0, UnknownWait
	}
	if use {
		rlo, rhi := ra, p.RetryAfter.jittered(ra, 1)
		switch {
		case p.RetryAfter.Floor:
			return max(lo, rlo), max(hi, rhi), true
		case p.RetryAfter.NominalFloor:
			f := max(ra, d)
			return f, p.RetryAfter.jittered(f, 1), true
		}
		return rlo, rhi, true
	}
	return lo, hi, true
}

// Schedule is the nominal (jitter-free) backoff for ft: the wait after each
// failed attempt while retries remain.
func (p *Policy) Schedule(ft FailureType) []time.Duration {
	s := p.Strategy(ft)
	var out []time.Duration
	for k := 0; k+1 < s.MaxAttempts; k++ {
		out = append(out, p.nominal(s, k))
	}
	return out
}

func sortedTypes(m map[FailureType]Strategy) []FailureType {
	out := make([]FailureType, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
