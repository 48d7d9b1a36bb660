package ticket

import (
	"regexp"
	"time"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/trace"
)

// Ticket-level error categories (seed 002, agent-learning.js).
const (
	CategoryTransient   = "transient"
	CategoryAPIError    = "api_error"
	CategoryCodeError   = "code_error"
	CategorySystemError = "system_error"
	CategoryUnknown     = "unknown"
)

// Strategy is a ticket category's retry strategy.
type Strategy struct {
	MaxRetries int
	Kind       retry.Kind
	BaseDelay  time.Duration
}

// BaseDelay is the one base delay of seed 002, for Decide (the
// ticket lifecycle) and the forge-ticket preset alike. The seed gives none;
// the only agent-learning.js that can be read (corynaegle-ai/swarm-app,
// apps/platform/lib/agent-learning.js, whose shouldRetryTicket and
// calculateBackoffDelay the seed calls) uses baseDelayMs 1000 for its
// exponential category, and 2000–5000 for the others. 1s it is: a re-queued
// ticket also waits for a free VM, which adds its own delay, and a rate
// limit of a minute is still outlasted by the exponential series (1s, 2s,
// 4s) together with the agent run in between. The earlier 30s of Decide
// made the preset and the lifecycle give two answers to one seed.
const BaseDelay = time.Second

// Strategies is seed 002's table, with BaseDelay: exponential
// waits 1s, 2s, 4s; linear 1s, 2s; none 0.
var Strategies = map[string]Strategy{
	CategoryTransient:   {MaxRetries: 3, Kind: retry.Exponential, BaseDelay: BaseDelay},
	CategoryAPIError:    {MaxRetries: 2, Kind: retry.Linear, BaseDelay: BaseDelay},
	CategoryCodeError:   {MaxRetries: 1, Kind: retry.NoBackoff},
	CategorySystemError: {MaxRetries: 2, Kind: retry.Exponential, BaseDelay: BaseDelay},
	CategoryUnknown:     {MaxRetries: 1, Kind: retry.Linear, BaseDelay: BaseDelay},
}

// Decision is a ticket-level retry decision (shouldRetryTicket).
type Decision struct {
	Category          string
	ShouldRetry       bool
	MaxRetries        int
	NextDelay         time.Duration // 0 when not retrying
	AttemptsRemaining int           // retries left after this one
}

// Decide returns the decision for a ticket that failed with category after
// currentRetries earlier retries: retry while currentRetries < MaxRetries,
// waiting BaseDelay × 2^currentRetries (exponential), BaseDelay ×
// (currentRetries+1) (linear) or 0 (none). An unknown category is treated as
// "unknown".
func Decide(category string, currentRetries int) Decision {
	st, ok := Strategies[category]
	if !ok {
		category, st = CategoryUnknown, Strategies[CategoryUnknown]
	}
	d := Decision{Category: category, MaxRetries: st.MaxRetries}
	if currentRetries < 0 {
		currentRetries = 0
	}
	if currentRetries >= st.MaxRetries {
		return d
	}
	d.ShouldRetry = true
	d.AttemptsRemaining = st.MaxRetries - currentRetries - 1
	switch st.Kind {
	case retry.Exponential:
		d.NextDelay = st.BaseDelay << currentRetries
	case retry.Linear:
		d.NextDelay = st.BaseDelay * time.Duration(currentRetries+1)
	}
	return d
}

var ticketPatterns = []struct {
	re       *regexp.Regexp
	category string
}{
	{regexp.MustCompile(`(?i)rate.?limit|\b429\b|\b50[234]\b|\b529\b|overloaded|timed? ?out|timeout|ETIMEDOUT|ECONNRESET|ECONNREFUSED|EAI_AGAIN|socket hang up|temporarily unavailable`), CategoryTransient},
	{regexp.MustCompile(`(?i)ENOENT|EACCES|EPERM|ENOSPC|EMFILE|\bgit\b|fatal:|permission denied \(publickey\)|no space left`), CategorySystemError},
	{regexp.MustCompile(`(?i)SyntaxError|TypeError|ReferenceError|RangeError|syntax error|is not defined|is not a function|cannot read propert|unexpected token|compilation failed|build failed|test(s)? failed`), CategoryCodeError},
	{regexp.MustCompile(`(?i)api.?error|api key|unauthori[sz]ed|authentication|forbidden|\b40[0134]\b|invalid.?request|bad request`), CategoryAPIError},
}

// ClassifyError maps an agent's error message to a ticket category,
// checking transient, system, code and API patterns in that order; anything
// else is unknown.
func ClassifyError(msg string) string {
	for _, p := range ticketPatterns {
		if p.re.MatchString(msg) {
			return p.category
		}
	}
	return CategoryUnknown
}

// EmitDecision writes d as a RetryDecision event (currentAttempt is
// currentRetries+1, as seed 002's activity log has it). w may be nil.
func EmitDecision(w *trace.Writer, ticketID string, currentRetries int, d Decision) error {
	return w.Emit(trace.TypeRetryDecision, trace.RetryDecision{TicketID: ticketID, Category: d.Category,
		CurrentAttempt: currentRetries + 1, MaxRetries: d.MaxRetries, ShouldRetry: d.ShouldRetry,
		NextDelayMs: d.NextDelay.Milliseconds()})
}

// DecideError classifies errMsg, decides, and writes the RetryDecision to
// w (nil: no event).
func DecideError(w *trace.Writer, ticketID, errMsg string, currentRetries int) Decision {
	d := Decide(ClassifyError(errMsg), currentRetries)
	EmitDecision(w, ticketID, currentRetries, d)
	return d
}
