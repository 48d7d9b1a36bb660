package probe

import (
	"fmt"
	"math"
)

// Floor is the wall time the client's own waits impose on a probe: a
// client that waits 160s before it gives up cannot be learnt faster at
// real time. Two figures, both said with the probe's own wall time
// (Profile.DurationMs) against each:
//
//   - ExhaustionMs: the longest exhaustion run, the sum of its waits (wall
//     clock). Every probe runs it.
//   - ExperimentsMs: the longest experiment of the probe as the client's
//     own waits make it last: the exhaustion and survival runs (the sum of
//     their waits), the longest wait for a Retry-After it honoured (the
//     battery's or a ceiling probe's), a hung attempt it gave up on, and
//     the deadline of a probe it was still waiting in when stopped (a hang
//     with no timeout within it, a Retry-After it waited for beyond it).
//     ExperimentsBy says which experiment it is.
//
// The survival figures' checks are not in either: they are the probe's
// (their outages are as long as the figure they check, and start once it
// is known), not a wait the client chose.
type Floor struct {
	ExhaustionMs  int64  `json:"exhaustionMs"`
	ExperimentsMs int64  `json:"experimentsMs"`
	ExperimentsBy string `json:"experimentsBy,omitempty"`
	// Ratio is DurationMs ÷ ExhaustionMs and ExperimentsRatio DurationMs ÷
	// ExperimentsMs, to two decimals; absent when the floor is 0 (a client
	// that never waited).
	Ratio            float64 `json:"ratio,omitempty"`
	ExperimentsRatio float64 `json:"experimentsRatio,omitempty"`
}

// FloorOf works out the floor of a probe's observations, scale the time
// scale they ran at (their waits are policy time) and durationMs the
// probe's wall time.
func FloorOf(obs []Observation, scale float64, durationMs int64) Floor {
	if scale <= 0 {
		scale = 1
	}
	var f Floor
	var longest float64
	for _, o := range obs {
		if o.End == EndNotRun || o.Check != "" || o.Attempts == 0 {
			continue
		}
		waits := 0.0
		for _, w := range o.WaitsMs {
			waits += w
		}
		waits *= scale
		own := waits + float64(o.FirstAttemptMs)
		var by string
		switch {
		case o.End == EndStopped && o.DeadlineMs > 0:
			own = float64(o.DeadlineMs)
			by = fmt.Sprintf("%s: still running at its deadline, %s", o.Fault, FormatMs(own))
		case o.Sample > 0 && o.Outage != "":
			by = fmt.Sprintf("%s: a survival run, %s of waits", o.Fault, FormatMs(own))
		case o.Sample > 0:
			by = fmt.Sprintf("the exhaustion (%s), %s of waits", o.Fault, FormatMs(own))
		case o.RetryAfterMs > 0 || o.Round > 0:
			by = fmt.Sprintf("%s (ceiling round %d): waited %s", o.Fault, o.Round, FormatMs(own))
		default:
			by = fmt.Sprintf("%s: waited %s", o.Fault, FormatMs(own))
		}
		if o.Sample > 0 && o.Outage == "" {
			f.ExhaustionMs = max(f.ExhaustionMs, int64(math.Round(waits)))
		}
		if own > longest {
			longest, f.ExperimentsBy = own, by
		}
	}
	f.ExperimentsMs = max(int64(math.Round(longest)), f.ExhaustionMs)
	ratio := func(floor int64) float64 {
		if floor <= 0 || durationMs <= 0 {
			return 0
		}
		return math.Round(float64(durationMs)/float64(floor)*100) / 100
	}
	f.Ratio, f.ExperimentsRatio = ratio(f.ExhaustionMs), ratio(f.ExperimentsMs)
	return f
}
