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

// resendWindow bounds the requests a resend looks among in each scope:
// those begun last. Exports hold up to Limits' items, and a resend is of
// a recent attempt.
const resendWindow = 1024

// openChains are the requests being grouped, indexed by scope.
type openChains struct {
	all      []*chain
	byParent map[spanKey][]*chain // by trace and parent span
	byTrace  map[pcommon.TraceID][]*chain
	roots    []*chain // begun by a root span
}

func (o *openChains) add(c *chain) {
	o.all = append(o.all, c)
	k := spanKey{c.trace, c.parent}
	o.byParent[k] = append(o.byParent[k], c)
	o.byTrace[c.trace] = append(o.byTrace[c.trace], c)
	if c.parent.IsEmpty() {
		o.roots = append(o.roots, c)
	}
}

// chainResends groups HTTP attempt spans under no gen_ai call into
// requests by http.request.resend_count (semconv's rule 2), and returns
// how many resends found no earlier attempt.
func chainResends(loose []span) (reqs []Request, filled int) {
	loose = slices.Clone(loose)
	slices.SortStableFunc(loose, func(x, y span) int { return x.StartTimestamp().AsTime().Compare(y.StartTimestamp().AsTime()) })
	open := &openChains{byParent: map[spanKey][]*chain{}, byTrace: map[pcommon.TraceID][]*chain{}}
	for _, s := range loose {
		at := httpAttempt(s)
		u := httpURL(s.Attributes())
		if at.N > 1 {
			if c := open.resendOf(s, at, u); c != nil {
				fillGap(&c.req, c.last().N, at)
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
		open.add(c)
	}
	for _, c := range open.all {
		reqs = append(reqs, c.req)
	}
	return reqs, filled
}

// resendOf picks the request that the resend at (span s, URL u) belongs
// to, nil for none: one whose last attempt began before it with a lower
// number, in the narrowest scope that has one (same trace and parent;
// same trace; for a root span, any root span's), preferring the number
// just below, a failure, one that ended before it began, the same URL,
// then the one that has waited longest.
func (o *openChains) resendOf(s span, at Attempt, u string) *chain {
	scopes := [][]*chain{o.byParent[spanKey{s.TraceID(), s.ParentSpanID()}], o.byTrace[s.TraceID()]}
	if s.ParentSpanID().IsEmpty() {
		scopes = append(scopes, o.roots)
	}
	for _, cs := range scopes {
		var best *chain
		bestScore := -1
		for _, c := range cs[max(len(cs)-resendWindow, 0):] {
			l := c.last()
			if !l.Start.Before(at.Start) || l.N >= at.N {
				continue
			}
			score := b2i(l.N == at.N-1)<<3 | b2i(l.Failed())<<2 | b2i(!l.End.After(at.Start))<<1 | b2i(c.url == u)
			if score > bestScore || (score == bestScore && l.End.Before(best.last().End)) {
				best, bestScore = c, score
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// fillGap fills in the attempts a resend numbers between the request's
// last exported one (numbered last) and itself, none of them exported, as
// retried and untimed, and counts them in Skipped: the client says it made
// them and its telemetry leaves them out (at most maxUntimed; past that
// the request is Uncounted and Skipped still says so).
func fillGap(r *Request, last int, at Attempt) {
	n := at.N - last - 1
	if last < 1 || n <= 0 {
		return
	}
	r.Skipped += n
	if n > maxUntimed {
		r.Uncounted = "http.request.resend_count " + itoa(at.N-1) + " after " + itoa(last-1) + " says more attempts came between than retrylab fills in without their spans"
		return
	}
	for k := last + 1; k < at.N; k++ {
		r.Attempts = append(r.Attempts, Attempt{N: k, Start: at.Start, End: at.Start, Retried: true, Untimed: true})
	}
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
