package retry

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry/provider"
)

// HeaderRetryAfter is RetryAfter.Header for a policy that reads the
// retry-after header only.
const HeaderRetryAfter = "retry-after"

// maxRetryAfter bounds a value read from a header, as provider.ParseRetryAfter
// does, so that absurd headers cannot overflow a time.Duration.
const maxRetryAfter = 365 * 24 * time.Hour

// ReadRetryAfter is the Retry-After that p reads from response headers h,
// with now the time the response arrived (for an HTTP-date): the value that
// Retrier.Do uses and records as retryAfterMs, and that Envelope expects.
// ok is false when p sees no usable value, and the backoff applies.
// A harness that has only the headers a client received (not the client's
// trace) should read them with this, not with provider.ParseRetryAfter,
// which does not know the policy's rules (forgeflare reads retry-after only).
func (p *Policy) ReadRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	d, raw, ok := provider.ParseRetryAfter(h, now)
	c := Classification{RetryAfter: d, HasRetryAfter: ok, RetryAfterRaw: raw, RetryAfterMsRaw: h.Get("Retry-After-Ms")}
	return p.readRetryAfter(c, now)
}

// MessageRetryAfter is the wait c's message asks for ("Please try again in
// 1.5s") when p reads messages (RetryAfter.Message) and c's headers gave no
// Retry-After: what Retrier.Do uses in their place. A harness that infers
// a failure from the fault it served asks this after ReadRetryAfter.
func (p *Policy) MessageRetryAfter(c Classification) (time.Duration, bool) {
	if !p.RetryAfter.Message || c.HasRetryAfter || !c.HasMessageRetryAfter {
		return 0, false
	}
	return c.MessageRetryAfter, true
}

// readRetryAfter is the Retry-After p reads from a failed attempt: its
// headers' (readHeaders), else its message's when p reads messages.
func (p *Policy) readRetryAfter(c Classification, now time.Time) (time.Duration, bool) {
	c.RetryAfter, c.HasRetryAfter = p.readHeaders(c, now)
	if d, ok := p.MessageRetryAfter(c); ok {
		return d, true
	}
	return c.RetryAfter, c.HasRetryAfter
}

// readHeaders is the Retry-After p reads from a failed attempt's headers.
// When the policy reads the headers as provider.ParseRetryAfter does, or c
// carries no raw header (a hand-built error), it is the value the provider
// parsed.
func (p *Policy) readHeaders(c Classification, now time.Time) (time.Duration, bool) {
	cfg := p.RetryAfter
	standard := cfg.Header == "" && !cfg.ZeroMsDefers && cfg.Negative == "" && !cfg.IntegerPart && !cfg.NoDate
	if standard || (c.RetryAfterRaw == "" && c.RetryAfterMsRaw == "") {
		return c.RetryAfter, c.HasRetryAfter
	}
	return cfg.read(c.RetryAfterMsRaw, c.RetryAfterRaw, now)
}

// read reads the raw retry-after-ms and retry-after headers under cfg. The
// value is never negative: a negative one is 0 or no value, as cfg.Negative
// says.
func (cfg RetryAfter) read(msRaw, raRaw string, now time.Time) (time.Duration, bool) {
	msZero := false
	if cfg.Header != HeaderRetryAfter {
		v, ok := parseNumber(strings.TrimSpace(msRaw))
		msZero = ok && v == 0 && cfg.ZeroMsDefers
		if ok && !msZero && !(v < 0 && cfg.Negative == "") {
			return cfg.nonNegative(durationOf(v, float64(time.Millisecond)))
		}
	}
	if d, ok := cfg.readSeconds(strings.TrimSpace(raRaw), now); ok || !msZero {
		return d, ok
	}
	return 0, true // the retry-after-ms of 0, which nothing replaced
}

// readSeconds reads a retry-after header under cfg.
func (cfg RetryAfter) readSeconds(ra string, now time.Time) (time.Duration, bool) {
	if ra == "" {
		return 0, false
	}
	if cfg.IntegerPart {
		return cfg.integerPart(ra)
	}
	if v, ok := parseNumber(ra); ok {
		if v < 0 && cfg.Negative == "" {
			return 0, false
		}
		return cfg.nonNegative(durationOf(v, float64(time.Second)))
	}
	if cfg.NoDate {
		return 0, false
	}
	if t, err := http.ParseTime(ra); err == nil {
		d := min(t.Sub(now), maxRetryAfter)
		if d < 0 && cfg.Negative == "" {
			d = 0 // a date in the past: at once
		}
		return cfg.nonNegative(d)
	}
	return 0, false
}

// integerPart reads ra's leading whole number of seconds, sign allowed,
// as JavaScript's parseInt(ra, 10) does.
func (cfg RetryAfter) integerPart(ra string) (time.Duration, bool) {
	i := 0
	if i < len(ra) && (ra[i] == '-' || ra[i] == '+') {
		i++
	}
	j := i
	for j < len(ra) && ra[j] >= '0' && ra[j] <= '9' {
		j++
	}
	if j == i {
		return 0, false
	}
	v, ok := parseNumber(ra[:j])
	if !ok || (v < 0 && cfg.Negative == "") {
		return 0, false
	}
	return cfg.nonNegative(durationOf(v, float64(time.Second)))
}

// nonNegative applies cfg.Negative to a value read.
func (cfg RetryAfter) nonNegative(d time.Duration) (time.Duration, bool) {
	switch {
	case d >= 0:
		return d, true
	case cfg.Negative == NegativeZero:
		return 0, true
	}
	return 0, false
}

// parseNumber reads a plain decimal number, sign allowed (no hex, no "Inf",
// no underscores), as a server would send it.
func parseNumber(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// durationOf converts v units to a Duration, keeping its sign, bounded by
// maxRetryAfter either way.
func durationOf(v, unit float64) time.Duration {
	ns := v * unit
	switch {
	case math.IsInf(ns, 1) || ns >= float64(maxRetryAfter):
		return maxRetryAfter
	case math.IsInf(ns, -1) || ns <= -float64(maxRetryAfter):
		return -maxRetryAfter
	}
	return time.Duration(math.Round(ns))
}
