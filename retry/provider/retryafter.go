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
