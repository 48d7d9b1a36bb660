package fleet

import (
	"math"
	"slices"
	"time"
)

// SyncWindow is how close (policy time) two clients' retry attempts must
// arrive to count as synchronized.
const SyncWindow = 50 * time.Millisecond

// RecoveryShare is the share of the goodput the fleet must reach again for
// it to have recovered.
const RecoveryShare = 0.9

// Attempt is one attempt as the fleet's figures read it; times are policy
// time since the fleet's first arrival.
type Attempt struct {
	Client    int           // the client that sent it (1-based; 0 unknown)
	At        time.Duration // when its request arrived
	End       time.Duration // when it ended
	Status    int           // HTTP status sent; 0 none
	Succeeded bool          // a complete answer was delivered
	// OutputTokens are the answer's output tokens that left the mock.
	OutputTokens int64
	// Known says First is known from the client's own trace: whether
	// the attempt began a logical request (its attempt 1). Without it the
	// journal alone decides (firsts): a client's first attempt, and each
	// after one of its attempts that succeeded.
	Known, First bool
}

// Input is what the figures are computed from.
type Input struct {
	Clients  int       // clients in the fleet
	Survived int       // clients whose outcome was success
	Attempts []Attempt // every attempt the mock saw, in any order
	// OutageEnd is the end of the outage's last phase, policy time since
	// the fleet's first arrival; HasOutage false: no outage.
	OutageEnd time.Duration
	HasOutage bool
	// RequestsPerMinute is the account's request limit (limits:); 0 none.
	RequestsPerMinute int
	// Noise is the scheduling noise measured around the run, in policy
	// time: how far an arrival may be from where the client meant it.
	// Synchrony is counted again with the window widened by it
	// (SynchronizedWide), for a gate that must not fail on the machine's
	// noise.
	Noise time.Duration
}

// Figures are result.json's fleet:. Retries and Synchronized are the
// counts behind Synchrony, for its bound; they are not in result.json.
type Figures struct {
	Clients            int      `json:"clients"`
	Survived           int      `json:"survived"`
	Requests           int      `json:"requests"`
	Attempts           int      `json:"attempts"`
	Amplification      float64  `json:"amplification"`
	Synchrony          *float64 `json:"synchrony"`
	Status429          int      `json:"status429"`
	Status529          int      `json:"status529"`
	GoodputPerMin      float64  `json:"goodputPerMin"`
	RecoveryMs         *int64   `json:"recoveryMs"`
	WastedOutputTokens int64    `json:"wastedOutputTokens"`

	Retries      int `json:"-"`
	Synchronized int `json:"-"`
	// SynchronizedWide counts the retries within SyncWindow + Noise of
	// another client's.
	SynchronizedWide int `json:"-"`
}

// Compute returns the fleet's figures from in (see the package doc).
func Compute(in Input) Figures {
	f := Figures{Clients: in.Clients, Survived: in.Survived, Attempts: len(in.Attempts)}
	as := slices.Clone(in.Attempts)
	slices.SortStableFunc(as, func(a, b Attempt) int { return cmpDur(a.At, b.At) })
	first := firsts(as)
	var retries []Attempt
	var last time.Duration
	succ := 0
	for i, a := range as {
		if first[i] {
			f.Requests++
		} else {
			retries = append(retries, a)
		}
		switch a.Status {
		case 429:
			f.Status429++
		case 529:
			f.Status529++
		}
		if a.Succeeded {
			succ++
		} else if a.Status == 200 {
			f.WastedOutputTokens += a.OutputTokens
		}
		last = max(last, a.End, a.At)
	}
	if f.Requests > 0 {
		f.Amplification = round4(float64(f.Attempts) / float64(f.Requests))
	}
	f.Retries = len(retries)
	f.Synchronized = synchronized(retries, SyncWindow)
	f.SynchronizedWide = synchronized(retries, SyncWindow+max(in.Noise, 0))
	if f.Retries > 0 {
		s := round4(float64(f.Synchronized) / float64(f.Retries))
		f.Synchrony = &s
	}
	if last > 0 {
		f.GoodputPerMin = round4(float64(succ) / last.Minutes())
	}
	if in.HasOutage {
		if r, ok := Recovery(as, first, in.OutageEnd, in.RequestsPerMinute); ok {
			ms := r.Milliseconds()
			f.RecoveryMs = &ms
		}
	}
	return f
}

// firsts marks the attempts (sorted by arrival) that begin a logical
// request: as the client's trace says where it says (Known), else a
// client's first, and each after one of its attempts that succeeded (a
// client that gives up and starts its next request then counts as
// retrying: only its trace can tell the two apart).
func firsts(as []Attempt) []bool {
	out := make([]bool, len(as))
	open := map[int]bool{} // client → a request is open
	for i, a := range as {
		if a.Known {
			out[i] = a.First
		} else if !open[a.Client] {
			out[i] = true
		}
		open[a.Client] = !a.Succeeded
	}
	return out
}

// synchronized counts the retries (sorted by arrival) that arrived within
// window of a retry of another client: a window slides over them with a
// count per client, so the cost is linear.
func synchronized(rs []Attempt, window time.Duration) int {
	count := map[int]int{}
	lo, hi, in, n := 0, 0, 0, 0
	for _, r := range rs {
		for hi < len(rs) && rs[hi].At <= r.At+window {
			count[rs[hi].Client]++
			hi, in = hi+1, in+1
		}
		for rs[lo].At < r.At-window {
			count[rs[lo].Client]--
			lo, in = lo+1, in-1
		}
		if in-count[r.Client] > 0 {
			n++
		}
	}
	return n
}

// Recovery is how long after end (the outage's last phase ends) the fleet's
// goodput is back to RecoveryShare of what it may reach, and false when it
// never is within the attempts given (metastable). as is sorted by arrival,
// first marks the attempts that begin a logical request.
//
// The demand is the logical requests open at end (begun before it, not yet
// answered): the fleet has recovered when RecoveryShare of them, rounded
// up, have succeeded after end, at the moment the last of those succeeds;
// with none open, at once. With a request limit (rpm above 0) it has also
// recovered once the successes within a window of ten of the limit's
// intervals (600s/rpm), ending at a success after end, reach
// RecoveryShare of what the limit allows in it (nine): the limit, not the
// backlog, then bounds the goodput.
func Recovery(as []Attempt, first []bool, end time.Duration, rpm int) (time.Duration, bool) {
	open := map[int]bool{} // client → its request open at end
	demand := 0
	for i, a := range as {
		if a.At >= end {
			break
		}
		if first[i] {
			open[a.Client] = true
		}
		if a.Succeeded && a.End <= end {
			open[a.Client] = false
		}
	}
	for _, o := range open {
		if o {
			demand++
		}
	}
	if demand == 0 {
		return 0, true
	}
	var ends []time.Duration // successes after end
	for _, a := range as {
		if a.Succeeded && a.End > end {
			ends = append(ends, a.End)
		}
	}
	slices.Sort(ends)
	best, ok := time.Duration(0), false
	if target := int(math.Ceil(RecoveryShare * float64(demand))); target <= len(ends) {
		best, ok = ends[target-1]-end, true
	}
	if rpm > 0 {
		w := 10 * time.Minute / time.Duration(rpm)
		need := int(math.Ceil(RecoveryShare * 10))
		lo := 0
		for i, e := range ends {
			for ends[lo] <= e-w {
				lo++
			}
			if i-lo+1 >= need {
				if d := e - end; !ok || d < best {
					best, ok = d, true
				}
				break
			}
		}
	}
	return best, ok
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// round4 rounds to four decimals, for a figure read by people and gates.
func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
