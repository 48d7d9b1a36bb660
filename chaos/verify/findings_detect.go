package verify

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// retryAfterIgnored: the attempt after a failure that carried a usable
// Retry-After (above 0, at most UsableRetryAfter) arrived before it had
// passed, by more than the tolerance and the noise measured below the gap.
// An attempt that asked for another model (a fallback) is not a retry of
// the one the provider asked to wait for.
func retryAfterIgnored(ob Observed, sc *scenario.Scenario) []Finding {
	var out []Finding
	for _, w := range ob.ServerWaits {
		k := w.After - 1
		ra := fact(ob, k).RetryAfter
		if !failed(ob, k) || ra == nil || *ra <= 0 || *ra > UsableRetryAfter || slices.Contains(ob.ModelSwitches, k+2) {
			continue
		}
		gap := ob.policy(w.Gap)
		if gap < *ra-ob.shortSide(sc, w, *ra) {
			out = append(out, Finding{Code: "retry_after_ignored", Attempts: []int{k + 1, k + 2},
				Evidence: fmt.Sprintf("attempt %d arrived %s after %s with a Retry-After of %s", k+2, psecs(gap), failureOf(ob, k), secs(*ra))})
		}
	}
	return out
}

// nonRetryable reports whether attempt k's failure is one a request must
// not be sent again for unchanged: a 400, 401, 403 or 404, or an
// invalid-request or context-length error (in a stream too), unless the
// response said x-should-retry: true.
func nonRetryable(ob Observed, k int) bool {
	if fact(ob, k).ShouldRetry {
		return false
	}
	switch statusOf(ob, k) {
	case 400, 401, 403, 404:
		return true
	}
	t := fact(ob, k).Type
	return t == "invalid_request" || t == "context_too_long"
}

// retriedNonRetryable: a non-retryable failure followed, in the same
// logical request, by an attempt whose body is byte for byte the same (a
// request the client changed, e.g. a smaller max_tokens after a context
// overflow, is a new request).
func retriedNonRetryable(ob Observed, _ *scenario.Scenario) []Finding {
	var out []Finding
	for _, w := range ob.ServerWaits {
		k := w.After - 1
		if !failed(ob, k) || !nonRetryable(ob, k) {
			continue
		}
		a, b := fact(ob, k).Body, fact(ob, k+1).Body
		if a == "" || a != b {
			continue
		}
		what := failureOf(ob, k)
		if t := fact(ob, k).Type; t != "" {
			what += " (" + t + ")"
		}
		out = append(out, Finding{Code: "retried_non_retryable", Attempts: []int{k + 1, k + 2},
			Evidence: fmt.Sprintf("attempt %d sent the same request again %s after %s", k+2, psecs(ob.policy(w.Gap)), what)})
	}
	return out
}

// retryStorm: one logical request made more than StormAttempts attempts,
// or StormNoWaits retries in a row came with no wait (a gap that, with the
// noise measured below it, is under NoWait) after failures that did not
// ask for one (no Retry-After of 0).
func retryStorm(ob Observed, sc *scenario.Scenario) []Finding {
	var out []Finding
	for _, req := range ob.requests() {
		if len(req) > StormAttempts {
			out = append(out, Finding{Code: "retry_storm", Attempts: ints(req),
				Evidence: fmt.Sprintf("one request made %d attempts (attempts %d–%d), more than %d", len(req), req[0]+1, req[len(req)-1]+1, StormAttempts)})
		}
		var run []int
		var gaps []string
		flush := func() {
			if len(run) >= StormNoWaits {
				out = append(out, Finding{Code: "retry_storm", Attempts: ints(run),
					Evidence: fmt.Sprintf("%d retries in a row with no wait: attempts %d–%d came %s after the failure before each (under %s is no wait)",
						len(run), run[0]+1, run[len(run)-1]+1, strings.Join(gaps, ", "), secs(NoWait))})
			}
			run, gaps = nil, nil
		}
		for _, k := range req {
			w, ok := ob.waitAfter(k)
			ra := fact(ob, k).RetryAfter
			if !ok || !failed(ob, k) || (ra != nil && *ra == 0) {
				flush()
				continue
			}
			gap := ob.policy(w.Gap)
			if gap+ob.shortSide(sc, w, NoWait) >= NoWait {
				flush()
				continue
			}
			run = append(run, k+1)
			gaps = append(gaps, psecs(gap))
		}
		flush()
	}
	return out
}

// backoffWait is one wait no_backoff and no_jitter may read: after a
// failure without Retry-After, in policy time.
type backoffWait struct {
	w     Wait
	after int // 0-based attempt before the wait
	gap   time.Duration
	exact bool // gap is the client's own record (trace), not the server's gap
}

// backoffWaits returns the waits of req after failures without a
// Retry-After, in order; a wait that is not (a request's success, a
// Retry-After) splits them into separate runs.
func (ob Observed) backoffWaits(req []int) [][]backoffWait {
	var runs [][]backoffWait
	var cur []backoffWait
	for _, k := range req {
		w, ok := ob.waitAfter(k)
		if !ok || !failed(ob, k) || fact(ob, k).RetryAfter != nil || nonRetryable(ob, k) {
			if len(cur) > 0 {
				runs = append(runs, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, backoffWait{w: w, after: k, gap: ob.policy(w.Gap)})
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	return runs
}

// noBackoff: BackoffRun or more consecutive waits of one request, each
// after a retryable failure without Retry-After, within FlatRatio of the
// shortest of them (plus the noise measured around the longest and the
// shortest), none shorter than NoWait (retry_storm's) and the longest
// under three quarters of BackoffCap (a jittered cap reached).
func noBackoff(ob Observed, sc *scenario.Scenario) []Finding {
	var out []Finding
	for _, req := range ob.requests() {
		for _, run := range ob.backoffWaits(req) {
			for i := 0; i < len(run); {
				j := i
				lo, hi := run[i], run[i]
				for j+1 < len(run) {
					n := run[j+1]
					nlo, nhi := lo, hi
					if n.gap < nlo.gap {
						nlo = n
					}
					if n.gap > nhi.gap {
						nhi = n
					}
					if !flat(ob, sc, nlo, nhi) {
						break
					}
					lo, hi, j = nlo, nhi, j+1
				}
				if j-i+1 >= BackoffRun && flat(ob, sc, lo, hi) {
					var ks []int
					var gs []string
					for _, b := range run[i : j+1] {
						ks = append(ks, b.after+1)
						gs = append(gs, psecs(b.gap))
					}
					ks = append(ks, run[j].after+2)
					out = append(out, Finding{Code: "no_backoff", Attempts: ks,
						Evidence: fmt.Sprintf("%d waits in a row after failures without Retry-After did not grow: %s (before attempts %d–%d)",
							j-i+1, strings.Join(gs, ", "), run[i].after+2, run[j].after+2)})
				}
				i = j + 1
			}
		}
	}
	return out
}

func flat(ob Observed, sc *scenario.Scenario, lo, hi backoffWait) bool {
	if lo.gap < NoWait || hi.gap >= BackoffCap*3/4 {
		return false
	}
	noise := ob.longSide(sc, hi.w, hi.gap) + ob.shortSide(sc, lo.w, lo.gap)
	return hi.gap-lo.gap <= time.Duration(FlatRatio*float64(lo.gap))+noise
}

// noJitter: across the logical requests of one run, the waits at the same
// place (the n-th wait of each request, after the same fault and status,
// without Retry-After) are identical in JitterPairs pairs or more and in
// every pair compared. Identical is the same to the millisecond in the
// client's own trace (when its waits account for every server wait), else
// within the noise measured around both server gaps, and only where that
// noise is under 2% of the wait (else the pair is not compared).
func noJitter(ob Observed, sc *scenario.Scenario) []Finding {
	exact := ob.exactWaits()
	type key struct {
		n      int
		fault  string
		status int
	}
	groups := map[key][]backoffWait{}
	var order []key
	for _, req := range ob.requests() {
		n := 0
		for _, run := range ob.backoffWaits(req) {
			for _, b := range run {
				n++
				if b.gap < NoWait {
					continue
				}
				if d, ok := exact[b.w.After]; ok {
					b.gap, b.exact = d, true
				}
				kk := key{n, faultOf(ob, b.after), statusOf(ob, b.after)}
				if _, seen := groups[kk]; !seen {
					order = append(order, kk)
				}
				groups[kk] = append(groups[kk], b)
			}
		}
	}
	pairs, same := 0, 0
	var ks []int
	var ev []string
	for _, kk := range order {
		g := groups[kk]
		for i := 0; i < len(g); i++ {
			for j := i + 1; j < len(g); j++ {
				a, b := g[i], g[j]
				var tol time.Duration
				if !(a.exact && b.exact) {
					tol = ob.noiseOf(sc, a) + ob.noiseOf(sc, b)
					if tol*50 > min(a.gap, b.gap) {
						continue // too noisy to tell
					}
				}
				pairs++
				d := a.gap - b.gap
				if d < 0 {
					d = -d
				}
				if d <= tol {
					same++
				}
			}
		}
		if len(g) >= 2 {
			var gs []string
			for _, b := range g {
				ks = append(ks, b.after+2)
				gs = append(gs, psecs(b.gap))
			}
			ev = append(ev, fmt.Sprintf("wait %d after %s: %s", kk.n, failureOf(ob, g[0].after), strings.Join(gs, ", ")))
		}
	}
	if pairs < JitterPairs || same != pairs {
		return nil
	}
	slices.Sort(ks)
	return []Finding{{Code: "no_jitter", Attempts: slices.Compact(ks),
		Evidence: fmt.Sprintf("the same waits in every request (%d pairs compared): %s", pairs, strings.Join(ev, "; "))}}
}

// exactWaits maps the server waits (by Wait.After) to the client's own
// recorded waits when its trace records exactly one wait per server wait.
func (ob Observed) exactWaits() map[int]time.Duration {
	if !ob.ClientTrace {
		return nil
	}
	cw := ob.ClientWaits()
	if len(cw) != len(ob.ServerWaits) {
		return nil
	}
	m := map[int]time.Duration{}
	for i, w := range ob.ServerWaits {
		m[w.After] = cw[i].Delay
	}
	return m
}

// noiseOf is the noise measured around a server gap, in policy time (no
// tolerance: an author's choice is not noise).
func (ob Observed) noiseOf(sc *scenario.Scenario, b backoffWait) time.Duration {
	wall := scaleDur(b.gap, ob.scale())
	band := ob.serverBand(sc, b.w, wall, wall, true)
	return ob.policy(width(band.below, wall) + width(band.above, wall))
}

// cutAccepted returns the detector of a cut answer taken as whole: the
// run's last attempt met the fault kind (a 200 that never completes) and
// the client reported success.
func cutAccepted(kind, code, what string) detector {
	return func(ob Observed, _ *scenario.Scenario) []Finding {
		k := ob.ServerAttempts - 1
		if k < 0 || faultOf(ob, k) != kind || statusOf(ob, k) != 200 || ob.Outcome != "success" {
			return nil
		}
		return []Finding{{Code: code, Attempts: []int{k + 1},
			Evidence: fmt.Sprintf("attempt %d, the last, %s, and the client reported success", k+1, what)}}
	}
}

// noReadTimeout: the run's last attempt met a stall and the client was
// still on it when it was stopped at its deadline.
func noReadTimeout(ob Observed, _ *scenario.Scenario) []Finding {
	k := ob.ServerAttempts - 1
	if k < 0 || faultOf(ob, k) != "stall" || !ob.ClientKilled {
		return nil
	}
	held := ""
	if e := fact(ob, k).Ended; !e.IsZero() && k < len(ob.ServerArrived) {
		held = fmt.Sprintf(", %s (policy time) after the attempt arrived", psecs(ob.policy(e.Sub(ob.ServerArrived[k]))))
	}
	return []Finding{{Code: "no_read_timeout", Attempts: []int{k + 1},
		Evidence: fmt.Sprintf("attempt %d stalled and the client never gave up on it: it was stopped at its deadline%s", k+1, held)}}
}

// gaveUpEarly: the run failed, and a request's last attempt failed with a
// Retry-After above 0 and at most UsableRetryAfter (the provider said when
// to come back, soon). A client stopped at its deadline did not give up.
func gaveUpEarly(ob Observed, _ *scenario.Scenario) []Finding {
	if ob.Outcome != "failure" || ob.ClientKilled {
		return nil
	}
	var out []Finding
	for _, req := range ob.requests() {
		k := req[len(req)-1]
		ra := fact(ob, k).RetryAfter
		if !failed(ob, k) || ra == nil || *ra <= 0 || *ra > UsableRetryAfter || nonRetryable(ob, k) {
			continue
		}
		out = append(out, Finding{Code: "gave_up_early", Attempts: []int{k + 1},
			Evidence: fmt.Sprintf("the client gave up after attempt %d (%d of its request), %s with a Retry-After of %s", k+1, len(req), failureOf(ob, k), secs(*ra))})
	}
	return out
}

// stitchedAnswer: the client's output holds a proper beginning of the
// mock's answer text (StitchPrefix bytes or more), immediately followed by
// the beginning of an answer text (the mock's, or a scenario's ok text),
// after an attempt was cut.
func stitchedAnswer(ob Observed, sc *scenario.Scenario) []Finding {
	if ob.Stdout == "" {
		return nil
	}
	cut := -1
	for k := range ob.ServerAttempts {
		if failed(ob, k) && statusOf(ob, k) == 200 {
			cut = k
			break
		}
	}
	if cut < 0 {
		return nil
	}
	answers := []string{wire.DefaultText}
	for _, f := range sc.Attempts {
		if t := okText(f); t != "" && !slices.Contains(answers, t) {
			answers = append(answers, t)
		}
	}
	if at, n := stitchAt(ob.Stdout, wire.DefaultText, answers); at >= 0 {
		return []Finding{{Code: "stitched_answer", Attempts: []int{cut + 1},
			Evidence: fmt.Sprintf("the output holds the first %d bytes of the answer cut at attempt %d (%q) immediately followed by a whole answer's beginning (byte %d)",
				n, cut+1, scenario.Excerpt(wire.DefaultText[max(0, n-24):n], 40), at)}}
	}
	return nil
}

// stitchAt returns where in out an answer of answers begins right after a
// proper prefix of cut (StitchPrefix bytes or more), and that prefix's
// length; -1 when nowhere. It looks at the first maxStitchTries
// beginnings of each answer only: output is bounded, but may repeat.
func stitchAt(out, cut string, answers []string) (at, n int) {
	if len(cut) <= StitchPrefix {
		return -1, 0
	}
	start := cut[:StitchPrefix]
	for _, a := range answers {
		head := a[:min(len(a), StitchPrefix)]
		if head == "" {
			continue
		}
		from := 0
		for range maxStitchTries {
			i := strings.Index(out[from:], head)
			if i < 0 {
				break
			}
			i += from
			// The prefix ends at i: it starts at most len(cut)-1 bytes before.
			window := out[max(0, i-(len(cut)-1)):i]
			for off := 0; ; {
				j := strings.Index(window[off:], start)
				if j < 0 {
					break
				}
				p := window[off+j:]
				if len(p) < len(cut) && strings.HasPrefix(cut, p) {
					return i, len(p)
				}
				off += j + 1
			}
			from = i + 1
		}
	}
	return -1, 0
}

// maxStitchTries bounds the beginnings of an answer stitchAt looks at.
const maxStitchTries = 1000

// okText is the text an ok fault sets, "" for any other.
func okText(f scenario.Fault) string {
	if o, ok := f.Kind.(fault.OK); ok {
		return o.Text
	}
	return ""
}
