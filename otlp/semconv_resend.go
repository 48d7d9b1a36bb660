package otlp

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// chain is a request being grouped by http.request.resend_count.
type chain struct {
	req    Request
	trace  pcommon.TraceID
	parent pcommon.SpanID
	url    string
}

func (c *chain) last() Attempt { return c.req.Attempts[len(c.req.Attempts)-1] }

// chainResends groups HTTP attempt spans under no gen_ai call into
// requests by http.request.resend_count (semconv's rule 2), and returns
// how many resends found no earlier attempt.
func chainResends(loose []span) (reqs []Request, filled int) {
	loose = slices.Clone(loose)
	slices.SortStableFunc(loose, func(x, y span) int { return x.StartTimestamp().AsTime().Compare(y.StartTimestamp().AsTime()) })
	var open []*chain
	for _, s := range loose {
		at := httpAttempt(s)
		u := httpURL(s.Attributes())
		if at.N > 1 {
			if c := resendOf(open, s, at, u); c != nil {
				c.req.Attempts = append(c.req.Attempts, at)
				continue
			}
		}
		c := &chain{req: Request{Provider: endpointProvider(u)}, trace: s.TraceID(), parent: s.ParentSpanID(), url: u}
		if at.N > 1 {
			filled++
			fillBefore(&c.req, at)
		}
		c.req.Attempts = append(c.req.Attempts, at)
		open = append(open, c)
	}
	for _, c := range open {
		reqs = append(reqs, c.req)
	}
	return reqs, filled
}

// resendOf picks the request that the resend at (span s, URL u) belongs
// to, nil for none: one whose last attempt began before it with a lower
// number, in its scope (same trace and parent; same trace; for a root
// span, any root span's), preferring the narrower scope, the number just
// below, a failure, one that ended before it began, the same URL, then the
// one that has waited longest.
func resendOf(open []*chain, s span, at Attempt, u string) *chain {
	var best *chain
	bestScore := -1
	for _, c := range open {
		l := c.last()
		if !l.Start.Before(at.Start) || l.N >= at.N {
			continue
		}
		var scope int
		switch {
		case c.trace == s.TraceID() && c.parent == s.ParentSpanID():
			scope = 2
		case c.trace == s.TraceID():
			scope = 1
		case c.parent.IsEmpty() && s.ParentSpanID().IsEmpty():
			scope = 0
		default:
			continue
		}
		score := scope<<4 | b2i(l.N == at.N-1)<<3 | b2i(l.Failed())<<2 | b2i(!l.End.After(at.Start))<<1 | b2i(c.url == u)
		if score > bestScore || (score == bestScore && l.End.Before(best.last().End)) {
			best, bestScore = c, score
		}
	}
	return best
}

// fillBefore fills in the attempts a resend numbers before itself, none of
// them exported, as retried and untimed (at most maxUntimed; past that the
// request is Uncounted).
func fillBefore(r *Request, at Attempt) {
	if at.N-1 > maxUntimed {
		r.Uncounted = "http.request.resend_count " + itoa(at.N-1) + " says more attempts came before than retrylab fills in without their spans"
		return
	}
	for k := 1; k < at.N; k++ {
		r.Attempts = append(r.Attempts, Attempt{N: k, Start: at.Start, End: at.Start, Retried: true, Untimed: true})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
