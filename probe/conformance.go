package probe

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/preset"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// Conformance states.
const (
	Holds   = "holds"
	Differs = "differs"
	Unknown = "unknown"
)

// conformTolerance is how far a figure may be from a preset's and still
// hold: 15% (the probe's own accuracy target) plus 50 ms of noise.
const (
	conformRatio = 0.15
	conformAbs   = 50.0
)

// Conform holds the profile against every retry preset (the seeds' rule
// sets and the SDK presets): one line per rule, in preset order.
func Conform(p *Profile, prov Provider) []Conformance {
	out := []Conformance{}
	for _, name := range preset.Names() {
		pol, err := preset.Get(name)
		if err != nil {
			continue
		}
		out = append(out, conformPreset(name, pol, p, prov)...)
	}
	return out
}

func conformPreset(name string, pol *retry.Policy, p *Profile, prov Provider) []Conformance {
	var out []Conformance
	line := func(rule, want, got string, state string) {
		out = append(out, Conformance{Preset: name, Rule: rule, State: state, Want: want, Got: got})
	}
	for _, fr := range p.Faults {
		f, ok := prov.Fault(fr.Fault)
		if !ok || fr.Sample > 1 {
			continue
		}
		d := presetDecides(pol, f)
		if fr.Retried == nil {
			line("retries "+fr.Fault, decisionString(d), "unknown", Unknown)
			continue
		}
		line("retries "+fr.Fault, decisionString(d), yesNo(*fr.Retried), state(d.Retry == *fr.Retried))
	}
	ex := prov.Exhaust.Err
	ft := retry.Classify(&ex).Type
	s := pol.Strategy(ft)
	wantMax := s.MaxAttempts - 1
	switch nl := p.Policy.NestedLoops; {
	case p.Policy.MaxRetries == nil:
		line("max retries", fmt.Sprint(wantMax), "unknown", Unknown)
	case nl.Seen && nl.Outer > 0:
		// A preset models one loop: the inner one's count.
		line("max retries (inner loop)", fmt.Sprint(wantMax), fmt.Sprint(nl.Inner-1), state(wantMax == nl.Inner-1))
	default:
		line("max retries", fmt.Sprint(wantMax), fmt.Sprint(*p.Policy.MaxRetries), state(wantMax == *p.Policy.MaxRetries))
	}
	out = append(out, conformWaits(name, pol, ft, p, prov)...)
	out = append(out, conformRetryAfter(name, pol, p)...)
	out = append(out, conformCeiling(name, pol, p))
	return out
}

// conformWaits checks every exhaustion wait against the preset's envelope
// for its attempt, widened by the tolerance, and on the long side by the
// noise measured around the wait (lateness only lengthens a wait).
func conformWaits(name string, pol *retry.Policy, ft retry.FailureType, p *Profile, prov Provider) []Conformance {
	c := Conformance{Preset: name, Rule: "backoff waits inside the envelope", State: Holds}
	n := 0
	for _, fr := range p.Faults {
		if fr.Fault != prov.Exhaust.Name {
			continue
		}
		for k, w := range fr.WaitsMs {
			lo, hi, ok := pol.Envelope(ft, k+1, 0, false)
			if !ok {
				break // past the preset's limit: max retries says so
			}
			n++
			lom, him := ms(lo), ms(hi)
			noise := 0.0
			if k < len(fr.NoiseMs) {
				noise = float64(fr.NoiseMs[k])
			}
			if float64(w) < lom*(1-conformRatio)-conformAbs || float64(w) > him*(1+conformRatio)+conformAbs+noise {
				c.State = Differs
				c.Want = fmt.Sprintf("retry %d: %s–%s", k+1, FormatMs(lom), FormatMs(him))
				c.Got = fmt.Sprintf("%s (sample %d)", FormatMs(float64(w)), fr.Sample)
				return []Conformance{c}
			}
		}
	}
	if n == 0 {
		c.State, c.Want, c.Got = Unknown, "the preset's backoff", "no wait to compare"
		return []Conformance{c}
	}
	sched := pol.Schedule(ft)
	c.Want = fmt.Sprintf("nominal %s", durations(sched))
	c.Got = fmt.Sprintf("%d wait(s) inside", n)
	return []Conformance{c}
}

// conformRetryAfter compares the Retry-After findings with what the preset
// does with a 429 carrying each form: retry-after 3, retry-after-ms 1700,
// an HTTP date 6s ahead. The preset honours a form when its envelope for
// the retry is the value itself.
func conformRetryAfter(name string, pol *retry.Policy, p *Profile) []Conformance {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	forms := []struct {
		rule, fig string
		header    http.Header
		got       *bool
	}{
		{"honours Retry-After (seconds)", "policy.retryAfter.seconds", http.Header{"Retry-After": {"3"}}, p.Policy.RetryAfter.Seconds},
		{"honours retry-after-ms", "policy.retryAfter.ms", http.Header{"Retry-After-Ms": {"1700"}}, p.Policy.RetryAfter.Ms},
		{"honours Retry-After (HTTP date)", "policy.retryAfter.httpDate", http.Header{"Retry-After": {now.Add(6 * time.Second).Format(http.TimeFormat)}}, p.Policy.RetryAfter.HTTPDate},
	}
	var out []Conformance
	for _, f := range forms {
		want := presetHonours(pol, f.header, now)
		c := Conformance{Preset: name, Rule: f.rule, Want: yesNo(want)}
		if conf, ok := p.Confidence[f.fig]; f.got != nil && ok && conf.Level != High {
			// Conformance holds what the probe is sure of: a medium or
			// low reading is shown, not judged.
			c.State, c.Got = Unknown, yesNo(*f.got)+" ("+conf.Level+")"
		} else if f.got == nil {
			c.State, c.Got = Unknown, "unknown"
		} else {
			c.State, c.Got = state(want == *f.got), yesNo(*f.got)
		}
		out = append(out, c)
	}
	return out
}

// MaxLongDeadline bounds the deadline of the probe of a Long fault (the
// hang, a large Retry-After): battery.Options.LongDeadline is at most it
// by default, so a preset whose limit is above it cannot be told from a
// client still waiting at it.
const MaxLongDeadline = 15 * time.Second

// conformCeiling holds the bisected Retry-After ceiling against the
// preset's: RetryAfter.Ceiling (above it the error is final: gave up) or
// MaxUsable (above it the backoff). It holds when the preset's limit is
// inside the bracket and the client does above it what the preset does.
func conformCeiling(name string, pol *retry.Policy, p *Profile) Conformance {
	c := Conformance{Preset: name, Rule: "Retry-After ceiling", State: Unknown, Got: "unknown"}
	limit, above := pol.RetryAfter.Ceiling, "gave up"
	if u := pol.RetryAfter.MaxUsable; u > 0 && (limit == 0 || u < limit) {
		limit, above = u, "backoff"
	}
	c.Want = "none"
	if limit > 0 {
		c.Want = fmt.Sprintf("%s, then %s", FormatMs(ms(limit)), above)
	}
	cp := ms(pol.RetryAfter.Cap)
	if cp > 0 && limit == 0 {
		c.Want = "capped at " + FormatMs(cp)
	}
	ra := p.Policy.RetryAfter
	br := ra.CeilingBracketMs
	switch {
	case ra.Large == "capped" && ra.CapMs != nil:
		// The cap within 15%, the wait's jitter and noise included.
		c.Got = "capped at " + FormatMs(float64(*ra.CapMs))
		c.State = state(limit == 0 && cp > 0 && math.Abs(float64(*ra.CapMs)-cp) <= 0.15*cp)
	case ra.Large == "waited" && cp > 0 && limit == 0 && float64(ra.LargeMs) > cp:
		// A preset that caps below the value retries after the cap.
		c.Got = "still waiting for " + FormatMs(float64(ra.LargeMs))
		c.State = state(cp > MaxLongDeadline.Seconds()*1000)
		if c.State == Holds {
			c.State = Unknown
		}
	case ra.Large == "waited" && limit > 0 && float64(ra.LargeMs) > ms(limit):
		c.Got = "still waiting for " + FormatMs(float64(ra.LargeMs))
		c.State = state(false)
		// A client that clamps the value to its limit is still waiting
		// too when the limit is beyond the large probe's deadline.
		if limit > MaxLongDeadline {
			c.State = Unknown
		}
	case ra.Large == "waited":
		c.Got, c.State = "still waiting for "+FormatMs(float64(ra.LargeMs)), Holds // no limit, or one above the value
	case len(br) == 2 && br[0] < br[1]:
		c.Got = fmt.Sprintf("between %s and %s, then %s", FormatMs(float64(br[0])), FormatMs(float64(br[1])), ra.Large)
		lim := ms(limit)
		c.State = state(limit > 0 && float64(br[0]) <= lim && lim <= float64(br[1]) && ra.Large == above)
	}
	return c
}

// presetHonours reports whether the preset waits for the Retry-After in h
// (padding of up to 15% included), as Retrier.Do decides it
// (retry.Policy.DecideFirst: the headers as the policy reads them, its
// ceiling): its wait comes from the value, starts near it and ends at most
// 30% above it (Claude Code adds up to 25% of its own).
func presetHonours(pol *retry.Policy, h http.Header, now time.Time) bool {
	v, has := pol.ReadRetryAfter(h, now)
	pe := provider.Error{Kind: provider.KindHTTP, Status: http.StatusTooManyRequests}
	d := pol.DecideFirstHeaders(pe, h, now)
	return has && v > 0 && d.Retry && !d.Resend && d.Source == trace.DelayRetryAfter &&
		math.Abs(float64(d.Lo-v)) <= 0.15*float64(v) && float64(d.Hi) <= 1.3*float64(v)
}

func durations(ds []time.Duration) string {
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += ", "
		}
		s += d.String()
	}
	if s == "" {
		return "none"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func state(ok bool) string {
	if ok {
		return Holds
	}
	return Differs
}

// presetDecides asks pol what it does after fault f, as Retrier.Do
// decides it (retry.Policy.DecideFirst, the code chaos's delays: policy
// check holds a client to): a loop of its own first (Claude Code re-sends
// a 400 at once), then the status, the type, x-should-retry as the policy
// obeys it (Claude Code not on a 503), and a Retry-After fault's header
// as the policy reads it, with its ceiling (LangChain.js retries a 429
// only with a retry-after under 60s; Claude Code reads no HTTP date).
func presetDecides(pol *retry.Policy, f Fault) retry.FirstDecision {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var h http.Header
	if f.Group == "retry-after" {
		h = http.Header{}
		switch {
		case f.HTTPDate:
			h.Set("Retry-After", now.Add(time.Duration(f.RetryAfterMs)*time.Millisecond).Format(http.TimeFormat))
		case strings.Contains(f.Name, "retry-after-ms"):
			h.Set("Retry-After-Ms", fmt.Sprint(f.RetryAfterMs))
		default:
			h.Set("Retry-After", fmt.Sprint(f.RetryAfterMs/1000))
		}
	}
	return pol.DecideFirstHeaders(f.Err, h, now)
}

// decisionString is a decision as conformance writes what a preset
// expects: yes, no, or yes with the loop of its own that re-sends it.
func decisionString(d retry.FirstDecision) string {
	switch {
	case !d.Retry:
		return "no"
	case d.Resend && d.Hi == 0:
		return fmt.Sprintf("yes (%s at once)", resends(d.Resends))
	case d.Resend:
		return fmt.Sprintf("yes (%s, the first after %s)", resends(d.Resends), FormatMs(ms(d.Lo)))
	}
	return "yes"
}

func resends(n int) string {
	if n == 1 {
		return "1 re-send"
	}
	return fmt.Sprintf("%d re-sends", n)
}
