package probe

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/retrylab/retrylab/retry"
)

// A client that sends a failed request again at once (Claude Code re-sends
// a 400 with an adjusted body, 5 times, and an error event inside the
// stream once) is not backing off: a learnt policy that wrote such a fault
// into its backoff loop would make `delays: policy` fail the very client
// it was learnt from (a wait of 10 ms against a 500 ms envelope). The
// policy model has loops of their own for that (retry.Resend, docs/policy.md
// "resends"); the learnt policy writes one for each fault re-sent at once.
const (
	// atOnceFloorMs: the wait, less the noise measured around it (lateness
	// only lengthens a wait), is at most this.
	atOnceFloorMs = 50.0
	// atOnceMaxMs: without a backoff to compare with, the wait itself is at
	// most this.
	atOnceMaxMs = 250.0
)

// learntResend is one resends entry: the statuses (HTTP errors) or the
// in-stream failure types re-sent at once, n times.
type learntResend struct {
	statuses []int
	types    []string
	n        int
	// more: the probe saw n re-sends and then a success, so the client
	// may re-send more (only --per-fault counts them).
	more bool
}

// learntResends finds the decision probes whose failure the client sent
// again at once, and how often: the leading waits of the fault's run that
// read as "at once". Only failures a resends entry can match are taken: a
// plain HTTP status, or a failure after the stream began.
func learntResends(p *Profile, prov Provider) []learntResend {
	type key struct {
		streamed bool
		n        int
		more     bool
	}
	groups := map[key]*learntResend{}
	for _, fr := range p.Faults {
		f, ok := prov.Fault(fr.Fault)
		if !ok || fr.Sample > 0 || fr.Retried == nil || !*fr.Retried || f.Group == "exhaust" {
			continue
		}
		if f.Group != "status" && !(f.Group == "stream" && f.Err.Streamed) {
			continue
		}
		n := leadingAtOnce(fr, p.Policy.Backoff)
		if n == 0 {
			continue
		}
		k := key{f.Err.Streamed, n, n == len(fr.WaitsMs) && fr.End == EndSucceeded}
		g := groups[k]
		if g == nil {
			g = &learntResend{n: n, more: k.more}
			groups[k] = g
		}
		if f.Err.Streamed {
			e := f.Err
			if t := string(retry.Classify(&e).Type); !slices.Contains(g.types, t) {
				g.types = append(g.types, t)
			}
		} else {
			g.statuses = append(g.statuses, f.Err.Status)
		}
	}
	out := make([]learntResend, 0, len(groups))
	for _, g := range groups {
		sort.Ints(g.statuses)
		sort.Strings(g.types)
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b learntResend) int { return strings.Compare(a.key(), b.key()) })
	return out
}

func (r learntResend) key() string {
	return fmt.Sprint(len(r.statuses) == 0, r.statuses, r.types, r.n)
}

// leadingAtOnce counts the waits at the start of fr's run that read as
// "at once": near 0 within the noise, and well under the backoff's first
// wait (half its lowest draw) when the backoff was learnt.
func leadingAtOnce(fr FaultResult, bo Backoff) int {
	limit := atOnceMaxMs
	if bo.InitialMs != nil {
		lo := *bo.InitialMs
		if bo.Jitter != nil {
			lo *= bo.Jitter.MinFactor
		}
		limit = min(limit, lo/2)
	}
	n := 0
	for k, w := range fr.WaitsMs {
		noise := 0.0
		if k < len(fr.NoiseMs) {
			noise = float64(fr.NoiseMs[k])
		}
		if float64(w)-noise > atOnceFloorMs || float64(w) > max(limit, atOnceFloorMs) {
			break
		}
		n++
	}
	return n
}

// resendsYAML writes the resends list and the comment saying what each
// entry was learnt from.
func resendsYAML(rs []learntResend) string {
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	for _, r := range rs {
		what := "statuses " + intsList(r.statuses)
		if len(r.statuses) == 0 {
			what = "in-stream failures " + strings.Join(r.types, ", ")
		}
		more := ""
		if r.more {
			more = "; then it succeeded, so more re-sends are not known (--per-fault counts them)"
		}
		fmt.Fprintf(&b, "# resends: %s sent again at once, %d time(s)%s\n", what, r.n, more)
	}
	b.WriteString("resends:\n")
	for _, r := range rs {
		head := "statuses: [" + intsList(r.statuses) + "]"
		if len(r.statuses) == 0 {
			head = "streamed: true, types: [" + strings.Join(r.types, ", ") + "]"
		}
		fmt.Fprintf(&b, "  - {%s, maxRetries: %d, kind: none}\n", head, r.n)
	}
	return b.String()
}

func intsList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
