package provider

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter bounds parsed values so that absurd headers cannot overflow
// a time.Duration; any policy ceiling is far below it.
const maxRetryAfter = 365 * 24 * time.Hour

// ParseRetryAfter reads the server's requested wait the way the official
// Anthropic and OpenAI SDKs do:
//
//  1. retry-after-ms, a number of milliseconds (int or float), if it parses;
//  2. else retry-after as a number of seconds (int or float, e.g. "2", "1.5");
//  3. else retry-after as an HTTP-date, relative to now (a date in the past
//     means "at once": d = 0).
//
// ok is false when neither header is present or neither parses (negative,
// NaN or infinite numbers do not parse). "0" parses as d = 0, ok = true: retry
// at once. Values are capped at one year. raw is always the retry-after header
// as sent ("" if absent), so a policy that honours only integer seconds (seed
// 000) can apply its own rule to it.
func ParseRetryAfter(h http.Header, now time.Time) (d time.Duration, raw string, ok bool) {
	raw = h.Get("Retry-After")
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if v, good := parseNonNegFloat(ms); good {
			return durationOf(v, float64(time.Millisecond)), raw, true
		}
	}
	v := strings.TrimSpace(raw)
	if v == "" {
		return 0, raw, false
	}
	if f, good := parseNonNegFloat(v); good {
		return durationOf(f, float64(time.Second)), raw, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return min(d, maxRetryAfter), raw, true
	}
	return 0, raw, false
}

// parseNonNegFloat accepts plain decimal numbers only (no hex, no "Inf", no
// underscores), as a server would send them.
func parseNonNegFloat(s string) (float64, bool) {
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	if math.IsNaN(f) || f < 0 {
		return 0, false
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func durationOf(v, unit float64) time.Duration {
	ns := v * unit
	if math.IsInf(ns, 0) || ns >= float64(maxRetryAfter) {
		return maxRetryAfter
	}
	return time.Duration(math.Round(ns))
}

// ParseTryAgain reads the wait an error message asks for in words, as the
// OpenAI API writes it when no header says: "Please try again in 1.5s",
// "try again in 20ms", "Please try again in 6m0s", "Try again in 35
// seconds" (Azure). The phrase is matched without regard to case; the
// duration is a sequence of number-unit pairs (h, m, s, ms, as Go and the
// API write them) or a number and a unit word (milliseconds, seconds,
// minutes, hours). ok is false when no such phrase is in msg. Values are
// capped at one year, like ParseRetryAfter's.
//
// Codex CLI waits this long after a response.failed event with code
// rate_limit_exceeded; retry policies use it only when they say so
// (retry.RetryAfter.Message).
func ParseTryAgain(msg string) (d time.Duration, ok bool) {
	const phrase = "try again in"
	lower := strings.ToLower(msg)
	for i := 0; ; {
		j := strings.Index(lower[i:], phrase)
		if j < 0 {
			return 0, false
		}
		i += j + len(phrase)
		if d, ok := parseWords(lower[i:]); ok {
			return d, true
		}
	}
}

// unitWords maps a unit, as written after a number, to its length.
var unitWords = map[string]time.Duration{
	"ms": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
}

// parseWords reads the duration at the start of s (after spaces): one or
// more number-unit pairs, a space allowed between the first number and its
// unit ("35 seconds"), not inside a compound ("1m 30s" reads as 1m).
func parseWords(s string) (time.Duration, bool) {
	s = strings.TrimLeft(s, " ")
	var total float64
	n := 0
	for len(s) > 0 && s[0] >= '0' && s[0] <= '9' {
		num := leading(s, func(c byte) bool { return (c >= '0' && c <= '9') || c == '.' })
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			break
		}
		rest := s[len(num):]
		spaced := strings.TrimLeft(rest, " ")
		unit := leading(spaced, func(c byte) bool { return c >= 'a' && c <= 'z' })
		if len(spaced) != len(rest) && n > 0 {
			break
		}
		u, known := unitWords[unit]
		if !known {
			break
		}
		total += v * float64(u)
		n++
		s = spaced[len(unit):]
	}
	if n == 0 {
		return 0, false
	}
	return durationOf(total, 1), true
}

// leading is the longest prefix of s whose bytes satisfy keep.
func leading(s string, keep func(byte) bool) string {
	i := 0
	for i < len(s) && keep(s[i]) {
		i++
	}
	return s[:i]
}
