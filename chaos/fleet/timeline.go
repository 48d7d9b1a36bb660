package fleet

import "time"

// Outcome classes of the timeline, in the order the chart stacks them.
const (
	ClassOK         = "ok"          // a complete answer
	ClassRateLimit  = "rateLimited" // 429
	ClassOverloaded = "overloaded"  // 529 or 503
	ClassFailed     = "failed"      // anything else
)

// Classes lists the outcome classes in stacking order.
var Classes = []string{ClassOK, ClassRateLimit, ClassOverloaded, ClassFailed}

// Bucket is the attempts that arrived in one step of a timeline, by class.
type Bucket struct {
	At     time.Duration  `json:"atMs"` // start, policy time since the first arrival
	Counts map[string]int `json:"counts"`
}

// MaxBuckets bounds a timeline: a long run's step grows instead.
const MaxBuckets = 600

// Class is the outcome class of a.
func Class(a Attempt) string {
	switch {
	case a.Succeeded:
		return ClassOK
	case a.Status == 429:
		return ClassRateLimit
	case a.Status == 529 || a.Status == 503:
		return ClassOverloaded
	}
	return ClassFailed
}

// Timeline counts the attempts that arrived in each step of policy time by
// outcome class: steps of a second, or longer (whole seconds) so that there
// are at most MaxBuckets. It returns the buckets and the step.
func Timeline(as []Attempt) ([]Bucket, time.Duration) {
	var last time.Duration
	for _, a := range as {
		last = max(last, a.At)
	}
	step := time.Second
	if n := int(last/step) + 1; n > MaxBuckets {
		step = time.Duration((n+MaxBuckets-1)/MaxBuckets) * time.Second
	}
	if len(as) == 0 {
		return nil, step
	}
	bs := make([]Bucket, int(last/step)+1)
	for i := range bs {
		bs[i] = Bucket{At: time.Duration(i) * step, Counts: map[string]int{}}
	}
	for _, a := range as {
		i := max(int(a.At/step), 0)
		bs[i].Counts[Class(a)]++
	}
	return bs, step
}
