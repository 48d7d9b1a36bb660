// Accumulation: one worker's counts (acc), its interned labels and the
// per-event figures, and the merge of the workers' accs.

package analyze

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/internal/jsonval"

	"github.com/retrylab/retrylab/trace/analyze/internal/sketch"
)

// runState is what the metrics need to know about one run.
type runState struct {
	counted     bool // has an event other than the mock's journal
	escalated   bool
	l2Escalated bool
	l2Active    bool
	repairs     int64
	maxIter     int64
	hasIter     bool
	l3Active    bool
	judged      bool
}

func (r *runState) merge(o *runState) {
	r.counted = r.counted || o.counted
	r.escalated = r.escalated || o.escalated
	r.l2Escalated = r.l2Escalated || o.l2Escalated
	r.l2Active = r.l2Active || o.l2Active
	r.repairs += o.repairs
	r.maxIter = max(r.maxIter, o.maxIter)
	r.hasIter = r.hasIter || o.hasIter
	r.l3Active = r.l3Active || o.l3Active
	r.judged = r.judged || o.judged
}

type groupKey struct{ provider, model, failureType, run, day, promptPattern string }

type groupStats struct {
	total, succeeded, failed, withRetries, retries, recovered int64
}

type pathKey struct{ from, to string }

// acc accumulates one worker's share of the files.
type acc struct {
	by                                                      []string
	byProvider, byModel, byFailure, byRun, byDay, byPattern bool
	files                                                   int
	events, malformed                                       int64
	unknown                                                 map[string]int
	duration, delay                                         sketch.Dist
	durHist, delayHist                                      Histogram
	failedAttempts                                          int64
	byFailureType                                           map[string]int64
	byStatus                                                map[int64]int64
	escalations                                             int64
	byPath                                                  map[pathKey]int64
	byReason                                                map[string]int64
	diagStarted, stepFinished                               int64
	runs                                                    map[string]*runState
	groups                                                  map[groupKey]*groupStats
	recentGroups                                            [recentSlots]recentGroup
	readers                                                 payloadReaders
	intern                                                  map[string]interned
	recent                                                  [recentSlots]interned
	cur                                                     payloadFields
	x                                                       extraAcc
	cur9                                                    extraFields
	dirty9                                                  bool
}

func newAcc(by []string) *acc {
	a := &acc{
		by:            by,
		byProvider:    slices.Contains(by, "provider"),
		byModel:       slices.Contains(by, "model"),
		byFailure:     slices.Contains(by, "failureType"),
		byRun:         slices.Contains(by, "run"),
		byDay:         slices.Contains(by, "day"),
		byPattern:     slices.Contains(by, "promptPattern"),
		unknown:       map[string]int{},
		byFailureType: map[string]int64{},
		byStatus:      map[int64]int64{},
		byPath:        map[pathKey]int64{},
		byReason:      map[string]int64{},
		runs:          map[string]*runState{},
		groups:        map[groupKey]*groupStats{},
		intern:        map[string]interned{},
		x:             newExtraAcc(),
	}
	a.bindReaders()
	return a
}

// str returns the label of a JSON string token (see trace.Label), interning
// short ones: they are of low-cardinality fields.
func (a *acc) str(val []byte) string {
	if len(val) >= 2 && val[0] == '"' {
		raw := val[1 : len(val)-1]
		slot := &a.recent[recentSlot(raw)]
		if slot.raw == string(raw) && len(raw) > 0 {
			return slot.s
		}
		if e, ok := a.intern[string(raw)]; ok {
			*slot = e
			return e.s
		}
		s := trace.Label(jsonval.String(val))
		if len(raw) <= maxInternBytes && len(a.intern) < maxInterned {
			e := interned{raw: string(raw), s: s}
			a.intern[e.raw] = e
			*slot = e
		}
		return s
	}
	return ""
}

// recentGroup caches one groups entry (see group).
type recentGroup struct {
	key groupKey
	g   *groupStats
}

// group returns the counts of gk, made on first use. A direct-mapped cache
// keyed by the fields' lengths and first bytes is looked at first: hashing
// six strings per request was 6 % of the analysis.
func (a *acc) group(gk groupKey) *groupStats {
	h := 0
	for _, f := range [...]string{gk.provider, gk.model, gk.failureType, gk.run, gk.day, gk.promptPattern} {
		h = h*31 + len(f)
		if len(f) > 0 {
			h = h*7 + int(f[0]) + int(f[len(f)-1])*3
		}
	}
	slot := &a.recentGroups[h&(recentSlots-1)]
	if slot.g != nil && slot.key == gk {
		return slot.g
	}
	g := a.groups[gk]
	if g == nil {
		g = &groupStats{}
		a.groups[gk] = g
	}
	*slot = recentGroup{key: gk, g: g}
	return g
}

// interned is a string value as it appears in the trace (raw, escapes and
// all) and the label it stands for.
type interned struct{ raw, s string }

// recentSlots is the size of the direct-mapped cache in front of the intern
// map: providers, models and failure types repeat from one event to the next,
// and comparing a few bytes is cheaper than hashing them.
const recentSlots = 64

func recentSlot(raw []byte) int {
	if len(raw) == 0 {
		return 0
	}
	return (len(raw)*31 + int(raw[0])*7 + int(raw[len(raw)/2])*3 + int(raw[len(raw)-1])) & (recentSlots - 1)
}

// The intern table's bounds: at most maxInterned strings of at most
// maxInternBytes each (2.5 MB per worker).
const (
	maxInterned    = 10_000
	maxInternBytes = 256
)

// maxUnknownTypes bounds the distinct unknown event types counted by name
// per worker; the rest are counted under OtherUnknownTypes.
const maxUnknownTypes = 1000

// OtherUnknownTypes is the inputs.unknownTypes key that counts the events
// of unknown types past the first 1000 distinct ones.
const OtherUnknownTypes = "(other unknown types)"

// maxDistinctCounts bounds the distinct failure types, statuses, escalation
// paths and reasons counted by name (per worker, and once merged): a trace
// of a million distinct failure types took 600 MB. The rest are counted
// under OtherFailureTypes, "(other statuses)", OtherPaths and OtherReasons.
// Real traces hold a few dozen of each.
const maxDistinctCounts = 1000

// The keys that count what is past maxDistinctCounts (an added key in
// attempts.byFailureType, attempts.byStatus, escalations.byReason, and
// escalations.byPath as from and to).
const (
	OtherFailureTypes = "(other failure types)"
	OtherStatuses     = "(other statuses)"
	OtherReasons      = "(other reasons)"
	OtherPaths        = "(other paths)"
)

// otherStatus is the byStatus key of OtherStatuses (no HTTP status).
const otherStatus = math.MinInt64

// countCapped adds n to m[k], or to m[other] once m holds maxDistinctCounts
// keys and k is not one of them.
func countCapped[K comparable](m map[K]int64, k, other K, n int64) {
	if _, ok := m[k]; !ok && len(m) >= maxDistinctCounts {
		k = other
	}
	m[k] += n
}

// fileRunPrefix marks run keys made from a file name rather than a runId.
const fileRunPrefix = "\x00file:"

func (a *acc) event(ev *trace.RawEvent, run *runState, runKey string) {
	switch ev.Type {
	case trace.TypeProviderRequestFinished:
		a.requestFinished(ev, runKey)
	case trace.TypeRetryAttempt:
		a.retryAttempt()
	case trace.TypeRunEscalated:
		a.runEscalated(run)
	case trace.TypeIterationStarted:
		run.l2Active = true
	case trace.TypeRepairAttempted:
		run.l2Active = true
		run.repairs++
		if a.cur.hasIter {
			run.maxIter = max(run.maxIter, a.cur.iter)
			run.hasIter = true
		}
	case trace.TypeDiagnosisStarted:
		a.diagStarted++
		run.l3Active = true
	case trace.TypeDiagnosisCompleted, trace.TypeJudgeDecided:
		run.l3Active = true
	case trace.TypeStepFinished:
		a.stepFinished++
	default:
		a.extraEvent(ev, run)
	}
}

// requestFinished counts a finished request in its group and its duration
// (and, recovered, its time to recovery).
func (a *acc) requestFinished(ev *trace.RawEvent, runKey string) {
	c := &a.cur
	dur, retries, success := c.dur, max(c.retries, 0), c.success
	if retries > 0 && success {
		sketch.AddBoth(&a.duration, &a.x.ttr, dur) // the time to recovery is the duration
	} else {
		a.duration.Add(dur)
	}
	a.durHist.add(max(dur, 0))
	// Request counts are kept per group only; result sums the groups.
	g := a.group(a.groupKeyOf(ev, runKey))
	g.total++
	g.retries = satAdd(g.retries, retries)
	if success {
		g.succeeded++
	} else {
		g.failed++
	}
	if retries > 0 {
		g.withRetries++
		if success {
			g.recovered++
		}
	}
	a.x.retriesDist[min(retries, MaxDistributionBucket)]++
}

// groupKeyOf is the --by group of the request being read.
func (a *acc) groupKeyOf(ev *trace.RawEvent, runKey string) groupKey {
	c := &a.cur
	var gk groupKey
	if a.byProvider {
		gk.provider = c.provider
	}
	if a.byModel {
		gk.model = c.model
	}
	if a.byFailure {
		gk.failureType = cmp.Or(c.failureType, "none")
	}
	if a.byRun {
		gk.run = runKey
	}
	if a.byDay {
		gk.day = dayOf(ev.TS)
	}
	if a.byPattern {
		gk.promptPattern = cmp.Or(c.promptPattern, "none")
	}
	return gk
}

// retryAttempt counts a failed attempt by type and status, the delay before
// its retry, its error context and its message.
func (a *acc) retryAttempt() {
	c := &a.cur
	a.failedAttempts++
	countCapped(a.byFailureType, cmp.Or(c.failureType, "unknown"), OtherFailureTypes, 1)
	if c.status != 0 {
		countCapped(a.byStatus, c.status, otherStatus, 1)
	}
	if c.willRetry {
		a.delay.Add(c.delay)
		a.delayHist.add(max(c.delay, 0))
	}
	if a.dirty9 {
		if a.cur9.errCtx {
			a.x.errorContext++
		}
		if a.cur9.msg != nil {
			a.message(a.cur9.modelRaw, a.cur9.msg)
		}
	}
}

// runEscalated counts an escalation by path and reason, and what it says
// of its run's levels (L2, L3).
func (a *acc) runEscalated(run *runState) {
	from, to := a.cur.from, a.cur.to
	a.escalations++
	countCapped(a.byPath, pathKey{from, to}, pathKey{OtherPaths, OtherPaths}, 1)
	countCapped(a.byReason, cmp.Or(a.cur.reason, "unknown"), OtherReasons, 1)
	run.escalated = true
	if strings.EqualFold(to, "L3") {
		run.l3Active = true
	}
	if strings.EqualFold(from, "L2") {
		run.l2Escalated = true
		run.l2Active = true
	}
}

// extraEvent counts the events of issue 9's figures.
func (a *acc) extraEvent(ev *trace.RawEvent, run *runState) {
	c, x := &a.cur9, &a.x
	switch ev.Type {
	case trace.TypeJudgeInvoked:
		run.l3Active, run.judged = true, true
		x.judgeInvocations++
	case trace.TypeCandidateGenerated:
		run.l3Active = true
		x.candidates++
		if c.valid {
			x.validCandidates++
		}
	case trace.TypeVerificationFinished:
		x.verifications++
		if c.passed {
			x.verificationsPass++
		}
	case trace.TypeRunStopped:
		countCapped(x.runStopped, orUnknown(a.cur.reason), OtherValues, 1)
	case trace.TypeRetryDecision:
		x.decisions++
		if c.shouldRetry {
			x.ticketDelay.Add(c.delay)
			x.ticketDelayHist.add(max(c.delay, 0))
		}
		t := x.ticket(c.ticket)
		if t == nil {
			x.untracked++
			return
		}
		ts := string(ev.TS)
		t.decisionCategory(c.attempt, ts, c.category)
		if c.shouldRetry {
			t.retried = true
		}
		if t.later(c.attempt, ts, c.shouldRetry) {
			t.hasDecision, t.lastAttempt, t.lastTS, t.lastRetry = true, c.attempt, ts, c.shouldRetry
		}
	case trace.TypeTicketTransition:
		x.transitions++
		countCapped(x.byEvent, orUnknown(c.event), OtherValues, 1)
		to := a.cur.to
		countCapped(x.byTo, orUnknown(to), OtherValues, 1)
		succeed := c.event == trace.TicketSucceed || to == "needs_review" || to == "done"
		if c.ticket != "" && (succeed || c.event == trace.TicketRetry) {
			if t := x.ticket(c.ticket); t != nil {
				if succeed {
					t.succeeded = true
				} else {
					t.retried = true
					t.transitionCategory(c.category)
				}
			}
		}
	case trace.TypeErrorReport:
		x.errorReports++
		countCapped(x.reportByType, orUnknown(a.cur.failureType), OtherValues, 1)
		countCapped(x.reportByCategory, orUnknown(c.category), OtherValues, 1)
	case trace.TypeEscalationDeclined:
		x.declined++
		countCapped(x.declinedReason, orUnknown(a.cur.reason), OtherValues, 1)
		countCapped(x.declinedWhy, orUnknown(c.why), OtherValues, 1)
	default:
		if !trace.IsKnownType(ev.Type) {
			t := trace.Label(ev.Type)
			if _, ok := a.unknown[t]; !ok && len(a.unknown) >= maxUnknownTypes {
				t = OtherUnknownTypes
			}
			a.unknown[t]++
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// dayOf returns the UTC date of an RFC 3339 timestamp, or "unknown".
func dayOf(ts []byte) string {
	if len(ts) >= 10 && ts[len(ts)-1] == 'Z' && ts[4] == '-' && ts[7] == '-' {
		return string(ts[:10])
	}
	if t, err := time.Parse(time.RFC3339Nano, string(ts)); err == nil {
		return t.UTC().Format(time.DateOnly)
	}
	return "unknown"
}

func (a *acc) merge(o *acc) {
	a.files += o.files
	a.events += o.events
	a.malformed += o.malformed
	for k, v := range o.unknown {
		a.unknown[k] += v
	}
	a.duration.Merge(&o.duration)
	a.delay.Merge(&o.delay)
	a.durHist.merge(&o.durHist)
	a.delayHist.merge(&o.delayHist)
	a.failedAttempts += o.failedAttempts
	for k, v := range o.byFailureType {
		countCapped(a.byFailureType, k, OtherFailureTypes, v)
	}
	for k, v := range o.byStatus {
		countCapped(a.byStatus, k, otherStatus, v)
	}
	a.escalations += o.escalations
	for k, v := range o.byPath {
		countCapped(a.byPath, k, pathKey{OtherPaths, OtherPaths}, v)
	}
	for k, v := range o.byReason {
		countCapped(a.byReason, k, OtherReasons, v)
	}
	a.diagStarted += o.diagStarted
	a.x.merge(&o.x)
	a.stepFinished += o.stepFinished
	for k, v := range o.runs {
		if r := a.runs[k]; r != nil {
			r.merge(v)
		} else {
			a.runs[k] = v
		}
	}
	for k, v := range o.groups {
		g := a.groups[k]
		if g == nil {
			g = &groupStats{}
			a.groups[k] = g
		}
		g.total += v.total
		g.succeeded += v.succeeded
		g.failed += v.failed
		g.withRetries += v.withRetries
		g.retries = satAdd(g.retries, v.retries)
		g.recovered += v.recovered
	}
}

// satAdd returns a+b for non-negative a and b, or math.MaxInt64 where that
// sum would overflow: absurd inputs (a delay of 2^62 ms) saturate instead of
// wrapping round to a negative total.
func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
