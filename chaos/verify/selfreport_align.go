package verify

import (
	"fmt"
	"slices"
	"time"

	"github.com/retrylab/retrylab/otlp"
)

// clientAttempt is one attempt of the client's account, with the reason
// its request may leave out attempts ("" when it counts them all).
type clientAttempt struct {
	otlp.Attempt
	uncounted string
}

// staleBefore is how long before the scenario began a client's attempt
// may be stamped (its clock is the mock's: the same machine) and still be
// this run's.
const staleBefore = time.Second

// reportedAttempts lists the client's attempts in the order it began them,
// and apart those stamped before the scenario began (a replay of older
// telemetry: not this run's attempts).
func reportedAttempts(acc *otlp.Account, began time.Time) (fresh, stale []clientAttempt) {
	for _, r := range acc.Requests {
		for _, a := range r.Attempts {
			ca := clientAttempt{Attempt: a, uncounted: r.Uncounted}
			if !began.IsZero() && a.End.Before(began.Add(-staleBefore)) {
				stale = append(stale, ca)
				continue
			}
			fresh = append(fresh, ca)
		}
	}
	slices.SortStableFunc(fresh, func(x, y clientAttempt) int { return x.Start.Compare(y.Start) })
	return fresh, stale
}

func plainAttempts(cs []clientAttempt) []otlp.Attempt {
	out := make([]otlp.Attempt, len(cs))
	for k, c := range cs {
		out[k] = c.Attempt
	}
	return out
}

// alignCost weighs an alignment of the client's attempts onto the
// server's, compared in this order: claims the journal contradicts,
// server attempts left out that nothing excuses, left out at the end,
// left out before an attempt of a request that does not count them all,
// and last attempts placed on a server attempt that arrived clearly
// before the client began them (late). Timing only breaks ties: a client
// may stamp an attempt when it ends, or long before it is sent, and the
// machine's noise is in every stamp, so it never outweighs a reading of
// the account that the journal allows.
type alignCost struct{ contra, unexcused, suffix, excused, late int }

func (a alignCost) less(b alignCost) bool {
	return slices.Compare([]int{a.contra, a.unexcused, a.suffix, a.excused, a.late}, []int{b.contra, b.unexcused, b.suffix, b.excused, b.late}) < 0
}

func (a alignCost) plus(b alignCost) alignCost {
	return alignCost{a.contra + b.contra, a.unexcused + b.unexcused, a.suffix + b.suffix, a.excused + b.excused, a.late + b.late}
}

// lateBy is how much later than a server attempt arrived a client may say
// it began it (beyond the machine's measured slack): its clock is the
// mock's, and it stamps an attempt before sending it, so this is room for
// clocks read at millisecond grain and a busy machine.
const lateBy = 30 * time.Millisecond

// late reports whether the client's attempt a began clearly after server
// attempt j arrived: it cannot be that attempt.
func late(ob Observed, a otlp.Attempt, j int) bool {
	return !a.Untimed && j < len(ob.ServerArrived) && !ob.ServerArrived[j].IsZero() &&
		a.Start.Sub(ob.ServerArrived[j]) > lateBy+ob.Slack
}

// alignment places each client attempt on a server attempt, in order.
type alignment struct {
	match []int // client attempt k is server attempt match[k] (0-based)
	cost  alignCost
}

// align finds the alignment of the client's attempts (at most as many as
// the server's) onto the server's, keeping their order, that the journal
// contradicts least, then leaves out the fewest attempts unexcused, then
// the fewest at the end: the account read as favourably for the client as
// it allows. A server attempt left out just before an attempt of an
// uncounted request is excused (that request's own retries); one left
// out after the client's last is a suffix.
func align(ob Observed, cs []clientAttempt) alignment {
	n, m := len(cs), ob.ServerAttempts
	// best[i][j]: the cost of aligning cs[i:] onto server attempts j:, and
	// whether cs[i] takes j (else j is left out).
	type cell struct {
		cost  alignCost
		take  bool
		valid bool
	}
	best := make([][]cell, n+1)
	for i := range best {
		best[i] = make([]cell, m+1)
	}
	for j := m; j >= 0; j-- {
		best[n][j] = cell{cost: alignCost{suffix: m - j}, valid: true}
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			var c cell
			if nx := best[i+1][j+1]; nx.valid {
				k := alignCost{}
				if contradiction(ob, cs[i].Attempt, j) != "" {
					k.contra = 1
				}
				if late(ob, cs[i].Attempt, j) {
					k.late = 1
				}
				c = cell{cost: k.plus(nx.cost), take: true, valid: true}
			}
			if nx := best[i][j+1]; nx.valid {
				k := alignCost{unexcused: 1}
				if cs[i].uncounted != "" {
					k = alignCost{excused: 1}
				}
				if sk := k.plus(nx.cost); !c.valid || sk.less(c.cost) {
					c = cell{cost: sk, valid: true}
				}
			}
			best[i][j] = c
		}
	}
	al := alignment{cost: best[0][0].cost}
	for i, j := 0, 0; i < n && j < m; j++ {
		if best[i][j].take {
			al.match = append(al.match, j)
			i++
		}
	}
	return al
}

// contradiction is what the journal's server attempt j says against the
// client's claim a, "" nothing.
func contradiction(ob Observed, a otlp.Attempt, j int) string {
	failed := j < len(ob.FailedAttempts) && ob.FailedAttempts[j]
	sent := 0
	if j < len(ob.ServerStatuses) {
		sent = ob.ServerStatuses[j]
	}
	switch {
	case a.Status != 0 && a.Status != sent:
		return fmt.Sprintf("the client claims status %d, the server sent %s", a.Status, reportedStatus(sent))
	case !a.Failed() && failed && (sent < 200 || sent > 299):
		return fmt.Sprintf("the client claims it succeeded, the server's answer failed (%s)", faultAt(ob, j))
	}
	return ""
}

// firstContradiction names the first claim of the alignment the journal
// contradicts, "" none.
func firstContradiction(ob Observed, cs []clientAttempt, al alignment) string {
	for k, j := range al.match {
		if c := contradiction(ob, cs[k].Attempt, j); c != "" {
			if k == j {
				return fmt.Sprintf("attempt %d: %s", k+1, c)
			}
			return fmt.Sprintf("the client's attempt %d (the server's %d at best): %s", k+1, j+1, c)
		}
	}
	return ""
}

// timingGap looks, in an alignment that leaves out only the server's last
// attempts, for a client attempt its own timestamps place on a later
// server attempt than the one it is aligned with. The client's clock is
// the mock's, and its stamp-to-arrival delay is measured on the attempts
// before: the offset is the smallest delay seen, the noise their spread.
// An attempt stamped later than its place by more than 20 ms and twice
// the noise, about when a later server attempt arrived (within a quarter
// of that), with every attempt after it fitting that shift as well, is
// that later attempt, and the client left out those between. "" when
// none. The machine's timer slack is not added: it delays the client's
// wake-ups, which come before it stamps an attempt, not the send after.
func timingGap(ob Observed, cs []clientAttempt, al alignment) string {
	if len(al.match) == 0 || len(ob.ServerArrived) < ob.ServerAttempts || cs[0].Untimed || al.match[0] != 0 {
		return ""
	}
	lag := func(k, j int) time.Duration { return cs[k].Start.Sub(ob.ServerArrived[j]) }
	hi, lo := lag(0, 0), lag(0, 0)
	for k := 1; k < len(al.match); k++ {
		if cs[k].Untimed {
			continue
		}
		j := al.match[k]
		late := lag(k, j) - hi
		if late > 20*time.Millisecond+2*(hi-lo) {
			if jj := shiftFits(ob, cs, al, k, hi, late/4); jj > j {
				left := fmt.Sprintf("attempt %d", j+1)
				if jj > j+1 {
					left = fmt.Sprintf("attempts %d–%d", j+1, jj)
				}
				return fmt.Sprintf("the client's attempt %d began %s after the server's attempt %d arrived, about when its attempt %d did: the telemetry leaves out %s in the middle, not the last ones", k+1, fmtDur(late), j+1, jj+1, left)
			}
		}
		hi, lo = max(hi, lag(k, j)), min(lo, lag(k, j))
	}
	return ""
}

// shiftFits returns the later server attempt client attempt k's stamp
// (less the offset off) falls on within tol, when every timed client
// attempt after it falls as well on the server attempt as far along; -1
// when none.
func shiftFits(ob Observed, cs []clientAttempt, al alignment, k int, off, tol time.Duration) int {
	j := al.match[k]
	for jj := j + 1; jj < ob.ServerAttempts; jj++ {
		fits := true
		for kk := k; kk < len(al.match) && fits; kk++ {
			s := al.match[kk] + jj - j
			fits = s < ob.ServerAttempts && (cs[kk].Untimed || (cs[kk].Start.Sub(ob.ServerArrived[s])-off).Abs() < tol)
		}
		if fits {
			return jj
		}
	}
	return -1
}

// concurrent reports whether two of the client's requests were in flight
// at once by its own account (their attempts' spans overlap, or begin
// within lateBy of each other): the server then
// met their attempts in an order the client's stamps do not give.
func concurrent(acc *otlp.Account) bool {
	type span struct{ from, to time.Time }
	var rs []span
	for _, r := range acc.Requests {
		if len(r.Attempts) == 0 {
			continue
		}
		sp := span{r.Attempts[0].Start, r.Attempts[0].End}
		for _, a := range r.Attempts {
			if a.Untimed {
				continue
			}
			if a.Start.Before(sp.from) {
				sp.from = a.Start
			}
			if a.End.After(sp.to) {
				sp.to = a.End
			}
		}
		rs = append(rs, sp)
	}
	slices.SortFunc(rs, func(x, y span) int { return x.from.Compare(y.from) })
	for i := 1; i < len(rs); i++ {
		if rs[i].from.Before(rs[i-1].to) || rs[i].from.Sub(rs[i-1].from) < lateBy {
			return true
		}
	}
	return false
}

// maxUnordered bounds the attempts matched in any order (Kuhn's
// algorithm is O(n·m²)).
const maxUnordered = 2000

// unorderedContradictions matches the client's attempts to the server's
// in any order (each to one it does not contradict, as many as can be)
// and returns the client attempts left unmatched: claims no server attempt
// bears out. ok is false when the accounts are too long to match so.
func unorderedContradictions(ob Observed, cs []clientAttempt) (unmatched []int, ok bool) {
	n, m := len(cs), ob.ServerAttempts
	if n > maxUnordered || m > maxUnordered {
		return nil, false
	}
	owner := make([]int, m)
	for j := range owner {
		owner[j] = -1
	}
	var try func(k int, seen []bool) bool
	try = func(k int, seen []bool) bool {
		for j := 0; j < m; j++ {
			if seen[j] || contradiction(ob, cs[k].Attempt, j) != "" {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || try(owner[j], seen) {
				owner[j] = k
				return true
			}
		}
		return false
	}
	for k := 0; k < n; k++ {
		if !try(k, make([]bool, m)) {
			unmatched = append(unmatched, k)
		}
	}
	return unmatched, true
}
