package probe

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/policyfile"
	"github.com/retrylab/retrylab/retry/provider"
)

// Learn → verify. A learnt policy must verify the client it was learnt
// from: before `--policy-out` is written, every decision and wait the probe
// recorded is held to the policy file as `chaos run`'s `delays: policy`
// holds a client to it (the same retry.Policy: the backoff loop's count
// and its loops of their own by retry.Replay, whether the failure is
// retried by Policy.Retries, each wait inside Policy.Envelope, or
// EnvelopeShouldRetry when the response carried x-should-retry, widened by
// chaos's default tolerance and the noise measured around the wait; a
// client that gave up while the policy still retries fails it). No client
// is run again: the evidence is the profile's. What does not hold is a
// behaviour the policy model cannot express (a constant re-send loop of
// the client's own, an outer loop restarting the SDK's): the failure types
// it showed on are left out of what `delays: policy` holds (their limit
// and waits written `unknown`, their decision left to the strategy), or,
// for nested loops, the whole backoff loop is; each is named in the
// file's comments and in Profile.Unmodelled, and the file is verified
// again, until it holds.

// Unmodelled is a behaviour of the client that the learnt policy does not
// hold (Profile.Unmodelled): what was seen, and what the policy file
// leaves out of `delays: policy` for it.
type Unmodelled struct {
	Fault       string `json:"fault"`
	FailureType string `json:"failureType"`
	Seen        string `json:"seen"`
	LeftOut     string `json:"leftOut"`
}

// mismatch is one recorded decision or wait the policy does not hold.
type mismatch struct {
	fault, ft string
	sample    int
	what      string
	streamed  bool
	header    bool
}

// verifyTolerance is chaos's default (expect.tolerance unset): 2% + 5ms.
const (
	verifyRatio = 0.02
	verifyAbsMs = 5.0
)

// verifyLearnt holds the profile's recorded runs to pol and returns what
// does not hold, in fault order. Runs that decided nothing (not run, still
// waiting at the deadline after one attempt) are not held; the ceiling's
// bisection is, against the ceiling the file writes (ceilingKey).
func verifyLearnt(pol *retry.Policy, p *Profile, prov Provider) []mismatch {
	var out []mismatch
	// Whole seconds: an HTTP date has no finer unit.
	now := time.Now().Truncate(time.Second)
	for _, fr := range p.Faults {
		f, ok := faultOf(prov, fr)
		if !ok || fr.Retried == nil || fr.End == EndNotRun {
			continue
		}
		e := f.Err
		c := retry.Classify(&e)
		if h := faultHeaders(f, now); len(h) > 0 {
			c.RetryAfter, c.HasRetryAfter = pol.ReadRetryAfter(h, now)
		}
		// The mock stamps a date the value after the attempt arrived,
		// rounded up to the second: up to 1s more than the value ahead.
		late := c
		switch {
		case f.HTTPDate && c.HasRetryAfter && fr.DateLeadMs > 0:
			// As chaos reads it: the date less the response's end.
			c.RetryAfter = time.Duration(fr.DateLeadMs) * time.Millisecond
			late = c
		case f.HTTPDate && c.HasRetryAfter:
			late.RetryAfter += time.Second
		}
		failed := fr.Attempts
		if fr.End == EndSucceeded {
			failed--
		}
		rp := pol.NewReplay()
		for k := 1; k <= failed; k++ {
			st := rp.Fail(c)
			lo, hi, retries := envelopeOf(pol, c, e.ShouldRetry, st)
			if _, hi2, ok := envelopeOf(pol, late, e.ShouldRetry, st); ok && retries {
				hi = max(hi, hi2)
			}
			m := mismatch{fault: fr.Fault, ft: string(c.Type), sample: fr.Sample, streamed: e.Streamed, header: f.Group == "header"}
			switch {
			case k-1 < len(fr.WaitsMs) && !retries:
				m.what = fmt.Sprintf("retried after attempt %d (waited %dms); the policy does not retry it", k, fr.WaitsMs[k-1])
			case k-1 < len(fr.WaitsMs):
				w, slack := float64(fr.WaitsMs[k-1]), verifyAbsMs
				if k-1 < len(fr.NoiseMs) {
					slack += float64(fr.NoiseMs[k-1])
				}
				l, h := ms(lo), ms(hi)
				if w >= l-slack-verifyRatio*l && w <= h+slack+verifyRatio*h {
					continue
				}
				m.what = fmt.Sprintf("waited %dms after attempt %d; the policy allows %s–%s", fr.WaitsMs[k-1], k, FormatMs(l), FormatMs(h))
			case k == failed && fr.End == EndGaveUp && retries && pol.LimitKnown(c.Type):
				m.what = fmt.Sprintf("gave up after %d attempt(s); the policy retries again", k)
			default:
				continue
			}
			out = append(out, m)
			break // what follows a wrong step says nothing more
		}
	}
	return out
}

// envelopeOf is the range of the wait the policy allows after the failure
// c at the replay's step st, as chaos's delays: policy check reads it:
// a re-send of a loop of its own, else nothing when the policy does not
// retry c, else the strategy's envelope (x-should-retry obeyed).
func envelopeOf(pol *retry.Policy, c retry.Classification, should *bool, st retry.ReplayStep) (lo, hi time.Duration, ok bool) {
	switch {
	case st.Resend:
		return st.Lo, st.Hi, true
	case !pol.Retries(c):
		return 0, 0, false
	case should != nil && pol.ObeysShouldRetry(c.Status):
		return pol.EnvelopeShouldRetry(c.Type, st.Attempt, c.RetryAfter, c.HasRetryAfter, should)
	}
	return pol.Envelope(c.Type, st.Attempt, c.RetryAfter, c.HasRetryAfter)
}

// faultOf is the fault a run of the profile served: the exhaustion's for
// a sample, a ceiling probe's from its name ("429 retry-after V").
func faultOf(prov Provider, fr FaultResult) (Fault, bool) {
	switch {
	case fr.Sample > 0:
		return prov.Exhaust, true
	case fr.Group == "ceiling":
		var v int64
		if _, err := fmt.Sscanf(fr.Fault, "429 retry-after %d", &v); err != nil || v <= 0 {
			return Fault{}, false
		}
		return CeilingFault(prov, v*1000), true
	}
	return prov.Fault(fr.Fault)
}

// faultHeaders are the Retry-After headers a probe's fault sent, as the
// policy reads them at now (an HTTP date: the value ahead of now).
func faultHeaders(f Fault, now time.Time) http.Header {
	if (f.Group != "retry-after" && f.Group != "ceiling") || f.RetryAfterMs <= 0 {
		return nil
	}
	h := http.Header{}
	switch {
	case f.HTTPDate:
		h.Set("Retry-After", now.Add(time.Duration(f.RetryAfterMs)*time.Millisecond).UTC().Format(http.TimeFormat))
	case strings.Contains(f.Name, "retry-after-ms"):
		h.Set("Retry-After-Ms", fmt.Sprint(f.RetryAfterMs))
	default:
		h.Set("Retry-After", fmt.Sprint(f.RetryAfterMs/1000))
	}
	return h
}

// leftOut is what a learnt policy leaves out of delays: policy.
type leftOut struct {
	all      bool            // the backoff loop (nested loops)
	types    map[string]bool // failure types: limit and waits unknown, retried
	streamed bool            // a left-out type came from an in-stream failure
	header   bool            // a left-out fault carried x-should-retry
}

// maxVerifyRounds bounds learn → verify: each round leaves out at least
// one more failure type, or the whole loop, so a few suffice.
const maxVerifyRounds = 8

// LearntPolicy is the policy file of the profile (PolicyYAML) verified
// against the runs it was learnt from (verifyLearnt): what the policy
// model cannot hold is left out, named in the file and returned. The file
// it returns holds every recorded run; false when even leaving everything
// out did not make it hold (a bug of the probe: the caller must not write
// it).
func LearntPolicy(p *Profile, prov Provider) (string, []Unmodelled, bool) {
	out := leftOut{types: map[string]bool{}}
	var un []Unmodelled
	for range maxVerifyRounds {
		text := policyYAML(p, prov, out, un)
		pol, err := policyfile.Parse([]byte(text), "learnt.yaml")
		if err != nil {
			return text, un, false
		}
		ms := verifyLearnt(pol, p, prov)
		if len(ms) == 0 {
			return text, un, true
		}
		grew := false
		for _, m := range ms {
			u := Unmodelled{Fault: m.fault, FailureType: m.ft, Seen: m.what}
			if m.sample > 0 {
				u.Fault = fmt.Sprintf("%s #%d", m.fault, m.sample)
			}
			switch nl := p.Policy.NestedLoops; {
			case m.sample > 0 && nl.Seen && !out.all:
				out.all, grew = true, true
				u.Seen = fmt.Sprintf("nested loops: bursts of %d attempts, an outer loop starting the inner one again (%s)", nl.Inner, m.what)
				u.LeftOut = "the backoff loop (all: maxRetries and initialDelay unknown): one loop cannot hold two"
			case !out.types[m.ft] && (!out.all || m.sample == 0):
				// A decision probe's fault is left out by its type even
				// when the loop already is (aider: the loop left out, a 400
				// with x-should-retry: true still re-sent by the SDK, which
				// the file cannot say without honorShouldRetry).
				out.types[m.ft], grew = true, true
				out.streamed = out.streamed || m.streamed
				out.header = out.header || m.header
				u.LeftOut = fmt.Sprintf("%s: its limit and waits (maxRetries and initialDelay unknown, Retry-After not read)", m.ft)
			default:
				continue
			}
			un = append(un, u)
		}
		if !grew {
			if out.all && len(out.types) > 0 && out.header {
				return text, un, false
			}
			// What is left does not hold under any one type: leave out
			// the loop too, then every type seen.
			out.all = true
			for _, m := range ms {
				out.types[m.ft] = true
				out.header = out.header || m.header
				out.streamed = out.streamed || m.streamed
			}
		}
	}
	text := policyYAML(p, prov, out, un)
	pol, err := policyfile.Parse([]byte(text), "learnt.yaml")
	return text, un, err == nil && len(verifyLearnt(pol, p, prov)) == 0
}

// drops reports whether the policy file leaves the fault f out: its
// statusRetry entry and any re-send of it are not written, so the
// failure type's strategy decides.
func (o leftOut) drops(f Fault) bool {
	e := f.Err
	return o.types[string(retry.Classify(&e).Type)]
}

// filter drops from rs the statuses and types left out (their re-sends
// are not modelled either), and the entries left empty.
func (o leftOut) filter(rs []learntResend) []learntResend {
	if len(o.types) == 0 {
		return rs
	}
	var kept []learntResend
	for _, r := range rs {
		var sts []int
		for _, st := range r.statuses {
			if !o.types[string(retry.Classify(&provider.Error{Kind: provider.KindHTTP, Status: st}).Type)] {
				sts = append(sts, st)
			}
		}
		var ts []string
		for _, t := range r.types {
			if !o.types[t] {
				ts = append(ts, t)
			}
		}
		if len(sts)+len(ts) > 0 {
			r.statuses, r.types = sts, ts
			kept = append(kept, r)
		}
	}
	return kept
}
