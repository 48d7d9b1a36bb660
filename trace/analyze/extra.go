package analyze

import (
	"slices"
	"strconv"
	"strings"

	"github.com/retrylab/retrylab/trace/internal/jsonval"

	"github.com/retrylab/retrylab/trace/analyze/internal/sketch"
)

// Bounds of the figures added for seeds 002, 003 and 004 (issue 9): every
// list and map below is capped, with the rest counted.
const (
	// MaxListedIDs is how many run or ticket ids a list shows; the rest
	// are counted in its "more".
	MaxListedIDs = 20
	// MaxDistributionBucket is the last bucket of the retries-per-request
	// and repair-iteration distributions: it counts that value and above
	// ("10+").
	MaxDistributionBucket = 10
	// maxTickets bounds the tickets followed one by one (per worker and
	// merged); decisions for tickets past it are counted in
	// tickets.untrackedDecisions.
	maxTickets = 1 << 16
	// maxMessages bounds the distinct normalised error messages counted
	// overall; maxModelMessages per model, for at most maxMessageModels
	// models. The rest go to OtherMessages / OtherModels.
	maxMessages      = 1000
	maxMessageModels = 50
	maxModelMessages = 100
	// TopMessages is how many messages errorMessages.top lists, and
	// TopModelMessages how many per model.
	TopMessages      = 10
	TopModelMessages = 5
	// maxNormCache bounds the (raw model, raw message) pairs counted on
	// the fast path, per worker.
	maxNormCache = 4096
)

// Keys counting what is past a cap.
const (
	OtherMessages = "(other)"
	OtherModels   = "(other models)"
	OtherValues   = "(other)"
)

// IDList is a bounded, sorted list of ids with the count of the rest.
type IDList struct {
	Count int64    `json:"count"`
	IDs   []string `json:"ids"`
	More  int64    `json:"more"`
}

// Bucket is one value of a distribution ("0" … "9", "10+") and its count.
type Bucket struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
}

// Orchestrator holds seed 003's L2/L3 figures.
type Orchestrator struct {
	L3Runs              int              `json:"l3Runs"`
	JudgeRuns           int              `json:"judgeRuns"`
	JudgeInvocations    int64            `json:"judgeInvocations"`
	Candidates          int64            `json:"candidates"`
	ValidCandidates     int64            `json:"validCandidates"`
	Verifications       int64            `json:"verifications"`
	VerificationsPassed int64            `json:"verificationsPassed"`
	RunStoppedByReason  map[string]int64 `json:"runStoppedByReason"`
	EscalatedRuns       IDList           `json:"escalatedRuns"`
	RepairIterations    RepairIterations `json:"repairIterations"`
}

// RepairIterations is the distribution of max(iteration) per run with a
// RepairAttempted, and the runs above the avg_repair_iterations threshold.
type RepairIterations struct {
	Runs         int      `json:"runs"`
	Distribution []Bucket `json:"distribution"`
	Threshold    float64  `json:"threshold"`
	Above        IDList   `json:"above"`
}

// Recovery is seed 004's recovery figures over ProviderRequestFinished.
type Recovery struct {
	FailedOnce       int64         `json:"failedOnce"`
	Recovered        int64         `json:"recovered"`
	Rate             float64       `json:"rate"`
	TimeToRecoveryMs RecoveryTimes `json:"timeToRecoveryMs"`
}

// RecoveryTimes are the nearest-rank percentiles, mean and max of the
// durations of recovered requests, in ms.
type RecoveryTimes struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   int64   `json:"p50"`
	P90   int64   `json:"p90"`
	P99   int64   `json:"p99"`
	Max   int64   `json:"max"`
}

// Tickets is seed 002's ticket analytics, from RetryDecision and
// TicketTransition events.
type Tickets struct {
	Decisions           int64            `json:"decisions"`
	Tickets             int              `json:"tickets"`
	UntrackedDecisions  int64            `json:"untrackedDecisions"`
	Retried             int              `json:"retried"`
	RetriedByCategory   map[string]int64 `json:"retriedByCategory"`
	Exhausted           IDList           `json:"exhausted"`
	SucceededAfterRetry int              `json:"succeededAfterRetry"`
	RetrySuccessRate    float64          `json:"retrySuccessRate"`
	DelayMs             Delays           `json:"delayMs"`
	Transitions         int64            `json:"transitions"`
	TransitionsByEvent  map[string]int64 `json:"transitionsByEvent"`
	TransitionsByTo     map[string]int64 `json:"transitionsByTo"`
}

// RetryCore counts the retry core's ErrorReport, EscalationDeclined and
// error-context RetryAttempt events.
type RetryCore struct {
	ErrorReports                int64            `json:"errorReports"`
	ErrorReportsByFailureType   map[string]int64 `json:"errorReportsByFailureType"`
	ErrorReportsByCategory      map[string]int64 `json:"errorReportsByCategory"`
	EscalationsDeclined         int64            `json:"escalationsDeclined"`
	EscalationsDeclinedByReason map[string]int64 `json:"escalationsDeclinedByReason"`
	EscalationsDeclinedByWhy    map[string]int64 `json:"escalationsDeclinedByWhy"`
	ErrorContextRetries         int64            `json:"errorContextRetries"`
}

// MessageCount is one normalised error message and its count.
type MessageCount struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// ModelMessages is the top messages of one model.
type ModelMessages struct {
	Model string         `json:"model"`
	Total int64          `json:"total"`
	Top   []MessageCount `json:"top"`
	Other int64          `json:"other"`
}

// ErrorMessages is the most common normalised errorMessage of RetryAttempt
// events, overall and per model.
type ErrorMessages struct {
	Total   int64           `json:"total"`
	Top     []MessageCount  `json:"top"`
	Other   int64           `json:"other"`
	ByModel []ModelMessages `json:"byModel"`
}

// ticketState is what ticket analytics need of one ticket.
type ticketState struct {
	// category is that of the ticket's first RetryDecision (lowest
	// currentAttempt, then earliest ts, then the smaller category), or the
	// smallest errorCategory of its retry transitions when it has none:
	// whatever the order the workers read the files in.
	category    string
	catAttempt  int64
	catTS       string
	hasCat      bool
	transCat    string
	retried     bool
	succeeded   bool
	hasDecision bool
	lastAttempt int64
	lastTS      string
	lastRetry   bool
}

// later reports whether a decision (attempt, ts, shouldRetry) comes after
// the ticket's last: a higher currentAttempt, then a later ts; on a full
// tie (no ts, say) shouldRetry false wins, so that the result does not
// depend on the order workers read the files in.
func (t *ticketState) later(attempt int64, ts string, retry bool) bool {
	if !t.hasDecision {
		return true
	}
	if attempt != t.lastAttempt {
		return attempt > t.lastAttempt
	}
	if ts != t.lastTS {
		return ts > t.lastTS
	}
	return !retry && t.lastRetry
}

// decisionCategory offers the category of a decision (attempt, ts).
func (t *ticketState) decisionCategory(attempt int64, ts, cat string) {
	if !t.hasCat || attempt < t.catAttempt || attempt == t.catAttempt && (ts < t.catTS || ts == t.catTS && cat < t.category) {
		t.hasCat, t.catAttempt, t.catTS, t.category = true, attempt, ts, cat
	}
}

// transitionCategory offers the errorCategory of a retry transition.
func (t *ticketState) transitionCategory(cat string) {
	if cat != "" && (t.transCat == "" || cat < t.transCat) {
		t.transCat = cat
	}
}

// Category returns the ticket's category (see category).
func (t *ticketState) Category() string {
	if t.hasCat {
		return t.category
	}
	return t.transCat
}

func (t *ticketState) merge(o *ticketState) {
	if o.hasCat {
		t.decisionCategory(o.catAttempt, o.catTS, o.category)
	}
	t.transitionCategory(o.transCat)
	t.retried = t.retried || o.retried
	t.succeeded = t.succeeded || o.succeeded
	if o.hasDecision && t.later(o.lastAttempt, o.lastTS, o.lastRetry) {
		t.hasDecision, t.lastAttempt, t.lastTS, t.lastRetry = true, o.lastAttempt, o.lastTS, o.lastRetry
	}
}

// extraAcc accumulates the issue 9 figures of one worker.
type extraAcc struct {
	retriesDist                      [MaxDistributionBucket + 1]int64
	ttr                              sketch.Dist
	judgeInvocations                 int64
	candidates, validCandidates      int64
	verifications, verificationsPass int64
	runStopped                       map[string]int64
	tickets                          map[string]*ticketState
	untracked, decisions             int64
	ticketDelay                      sketch.Dist
	ticketDelayHist                  Histogram
	transitions                      int64
	byEvent, byTo                    map[string]int64
	errorReports                     int64
	reportByType, reportByCategory   map[string]int64
	declined                         int64
	declinedReason, declinedWhy      map[string]int64
	errorContext                     int64
	messages                         int64
	byMessage                        map[string]int64
	byModelMessage                   map[string]map[string]int64
	msgKey                           []byte
	msgIdx                           map[string]int
	msgPairs                         []msgPair
}

func newExtraAcc() extraAcc {
	return extraAcc{
		runStopped: map[string]int64{}, tickets: map[string]*ticketState{},
		byEvent: map[string]int64{}, byTo: map[string]int64{},
		reportByType: map[string]int64{}, reportByCategory: map[string]int64{},
		declinedReason: map[string]int64{}, declinedWhy: map[string]int64{},
		byMessage: map[string]int64{}, byModelMessage: map[string]map[string]int64{},
		msgIdx: map[string]int{},
	}
}

// message counts one RetryAttempt's raw errorMessage (a JSON string token)
// of the model whose raw token is modelRaw (nil without one). The hot path
// is one map lookup: raw model and message seen before (at most
// maxNormCache pairs of short ones) count in msgPairs, folded into the
// maps by flushMessages.
func (a *acc) message(modelRaw, raw []byte) {
	if len(raw) < 2 || raw[0] != '"' {
		return
	}
	x := &a.x
	x.messages++
	x.msgKey = append(append(append(x.msgKey[:0], modelRaw...), 0), raw...)
	if i, ok := x.msgIdx[string(x.msgKey)]; ok {
		x.msgPairs[i].n++
		return
	}
	model := ""
	if modelRaw != nil {
		model = a.str(modelRaw)
	}
	m := NormalizeMessage(jsonval.String(raw))
	if len(x.msgKey) <= 2*maxInternBytes && len(x.msgIdx) < maxNormCache {
		x.msgIdx[string(x.msgKey)] = len(x.msgPairs)
		x.msgPairs = append(x.msgPairs, msgPair{model: model, msg: m, n: 1})
		return
	}
	countCappedN(x.byMessage, m, OtherMessages, 1, maxMessages)
	x.modelMessage(model, m, 1)
}

// msgPair counts one (model, normalised message) of msgIdx.
type msgPair struct {
	model, msg string
	n          int64
}

// flushMessages folds the counts of msgPairs into the maps.
func (x *extraAcc) flushMessages() {
	for i := range x.msgPairs {
		p := &x.msgPairs[i]
		if p.n > 0 {
			countCappedN(x.byMessage, p.msg, OtherMessages, p.n, maxMessages)
			x.modelMessage(p.model, p.msg, p.n)
			p.n = 0
		}
	}
}

func (x *extraAcc) modelMessage(model, m string, n int64) {
	mm := x.byModelMessage[model]
	if mm == nil {
		if len(x.byModelMessage) >= maxMessageModels {
			model = OtherModels
			mm = x.byModelMessage[model]
		}
		if mm == nil {
			mm = map[string]int64{}
			x.byModelMessage[model] = mm
		}
	}
	countCappedN(mm, m, OtherMessages, n, maxModelMessages)
}

func (x *extraAcc) ticket(id string) *ticketState {
	t := x.tickets[id]
	if t == nil {
		if len(x.tickets) >= maxTickets {
			return nil
		}
		t = &ticketState{}
		x.tickets[id] = t
	}
	return t
}

func (x *extraAcc) merge(o *extraAcc) {
	x.flushMessages()
	o.flushMessages()
	for i, v := range o.retriesDist {
		x.retriesDist[i] += v
	}
	x.ttr.Merge(&o.ttr)
	x.judgeInvocations += o.judgeInvocations
	x.candidates += o.candidates
	x.validCandidates += o.validCandidates
	x.verifications += o.verifications
	x.verificationsPass += o.verificationsPass
	mergeCapped(x.runStopped, o.runStopped)
	for k, v := range o.tickets {
		if t := x.tickets[k]; t != nil {
			t.merge(v)
		} else if len(x.tickets) < maxTickets {
			x.tickets[k] = v
		} else {
			x.untracked++ // its decisions are lost to the per-ticket figures
		}
	}
	x.untracked += o.untracked
	x.decisions += o.decisions
	x.ticketDelay.Merge(&o.ticketDelay)
	x.ticketDelayHist.merge(&o.ticketDelayHist)
	x.transitions += o.transitions
	mergeCapped(x.byEvent, o.byEvent)
	mergeCapped(x.byTo, o.byTo)
	x.errorReports += o.errorReports
	mergeCapped(x.reportByType, o.reportByType)
	mergeCapped(x.reportByCategory, o.reportByCategory)
	x.declined += o.declined
	mergeCapped(x.declinedReason, o.declinedReason)
	mergeCapped(x.declinedWhy, o.declinedWhy)
	x.errorContext += o.errorContext
	x.messages += o.messages
	for k, v := range o.byMessage {
		countCappedN(x.byMessage, k, OtherMessages, v, maxMessages)
	}
	for model, mm := range o.byModelMessage {
		for k, v := range mm {
			x.modelMessage(model, k, v)
		}
	}
}

func mergeCapped(dst, src map[string]int64) {
	for k, v := range src {
		countCapped(dst, k, OtherValues, v)
	}
}

// countCappedN is countCapped with its own bound.
func countCappedN(m map[string]int64, k, other string, n int64, limit int) {
	if _, ok := m[k]; !ok && len(m) >= limit {
		k = other
	}
	m[k] += n
}

// idList sorts ids and keeps the first MaxListedIDs.
func idList(ids []string) IDList {
	slices.Sort(ids)
	l := IDList{Count: int64(len(ids)), IDs: ids}
	if len(ids) > MaxListedIDs {
		l.IDs = slices.Clip(ids[:MaxListedIDs])
		l.More = int64(len(ids) - MaxListedIDs)
	}
	if l.IDs == nil {
		l.IDs = []string{}
	}
	return l
}

func distribution(counts []int64) []Bucket {
	out := make([]Bucket, len(counts))
	for i, c := range counts {
		v := strconv.Itoa(i)
		if i == len(counts)-1 {
			v += "+"
		}
		out[i] = Bucket{Value: v, Count: c}
	}
	return out
}

// topMessages sorts m by count (then message) and keeps the first k; the
// rest are summed into other.
func topMessages(m map[string]int64, k int) (top []MessageCount, other, total int64) {
	top = make([]MessageCount, 0, len(m))
	for msg, c := range m {
		total += c
		if msg == OtherMessages {
			other += c
			continue
		}
		top = append(top, MessageCount{msg, c})
	}
	slices.SortFunc(top, func(x, y MessageCount) int {
		if x.Count != y.Count {
			if x.Count > y.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(x.Message, y.Message)
	})
	if len(top) > k {
		for _, mc := range top[k:] {
			other += mc.Count
		}
		top = slices.Clip(top[:k])
	}
	return top, other, total
}

// extraResult fills the issue 9 figures of an.
func (a *acc) extraResult(an *Analysis, repairThreshold float64) {
	x := &a.x
	x.flushMessages()
	o := a.orchestrator(an.Counts.RepairRuns, repairThreshold)
	an.Orchestrator = o
	an.Requests.RetriesPerRequest = distribution(x.retriesDist[:])

	rec := an.Counts.Recovered
	an.Recovery = Recovery{FailedOnce: an.Requests.Failed + rec, Recovered: rec}
	an.Recovery.Rate = ratio(float64(rec), float64(an.Recovery.FailedOnce))
	an.Recovery.TimeToRecoveryMs = RecoveryTimes{Count: x.ttr.Count(),
		Mean: ratio(float64(x.ttr.Total()), float64(x.ttr.Count())),
		P50:  x.ttr.Quantile(0.5), P90: x.ttr.Quantile(0.9), P99: x.ttr.Quantile(0.99), Max: x.ttr.Max()}

	t := x.ticketFigures()
	an.Tickets = t
	an.TicketDelayHist = x.ticketDelayHist
	an.RetryCore = RetryCore{ErrorReports: x.errorReports, ErrorReportsByFailureType: x.reportByType,
		ErrorReportsByCategory: x.reportByCategory, EscalationsDeclined: x.declined,
		EscalationsDeclinedByReason: x.declinedReason, EscalationsDeclinedByWhy: x.declinedWhy,
		ErrorContextRetries: x.errorContext}
	an.ErrorMessages = x.errorMessages()

	m := &an.Metrics
	m.JudgeInvocationRate = ratio(float64(o.JudgeRuns), float64(o.L3Runs))
	m.CandidateValidityRate = ratio(float64(o.ValidCandidates), float64(o.Candidates))
	m.VerificationPassRate = ratio(float64(o.VerificationsPassed), float64(o.Verifications))
	m.RecoveredRate = an.Recovery.Rate
	rt := an.Recovery.TimeToRecoveryMs
	m.TimeToRecoveryMean = rt.Mean / 1000
	m.TimeToRecoveryP50 = float64(rt.P50) / 1000
	m.TimeToRecoveryP90 = float64(rt.P90) / 1000
	m.TimeToRecoveryP99 = float64(rt.P99) / 1000
	m.RetrySuccessRate = t.RetrySuccessRate
	m.TicketExhaustedRate = ratio(float64(t.Exhausted.Count), float64(t.Tickets))
}

// orchestrator is seed 003's figures of the runs: L3 and judge activity,
// candidates, verifications, stops, the escalated runs and the repair
// iterations of each run (those above repairThreshold listed).
func (a *acc) orchestrator(repairRuns int, repairThreshold float64) Orchestrator {
	x := &a.x
	o := Orchestrator{
		JudgeInvocations: x.judgeInvocations, Candidates: x.candidates, ValidCandidates: x.validCandidates,
		Verifications: x.verifications, VerificationsPassed: x.verificationsPass, RunStoppedByReason: x.runStopped,
	}
	var escalated, above []string
	var iterDist [MaxDistributionBucket + 1]int64
	for k, r := range a.runs {
		if !r.counted {
			continue
		}
		id := strings.TrimPrefix(k, fileRunPrefix)
		if r.l3Active {
			o.L3Runs++
			if r.judged {
				o.JudgeRuns++
			}
		}
		if r.escalated {
			escalated = append(escalated, id)
		}
		if r.repairs > 0 {
			it := r.repairs
			if r.hasIter {
				it = r.maxIter
			}
			iterDist[min(max(it, 0), MaxDistributionBucket)]++
			if float64(it) > repairThreshold {
				above = append(above, id)
			}
		}
	}
	o.EscalatedRuns = idList(escalated)
	o.RepairIterations = RepairIterations{Runs: repairRuns, Distribution: distribution(iterDist[:]),
		Threshold: repairThreshold, Above: idList(above)}
	return o
}

// ticketFigures is seed 002's ticket analytics from the RetryDecision and
// TicketTransition events.
func (x *extraAcc) ticketFigures() Tickets {
	t := Tickets{Decisions: x.decisions, Tickets: 0, UntrackedDecisions: x.untracked,
		RetriedByCategory: map[string]int64{}, Transitions: x.transitions,
		TransitionsByEvent: x.byEvent, TransitionsByTo: x.byTo,
		DelayMs: Delays{Count: x.ticketDelay.Count(), Total: x.ticketDelay.Total(),
			P50: x.ticketDelay.Quantile(0.5), P90: x.ticketDelay.Quantile(0.9),
			P99: x.ticketDelay.Quantile(0.99), Max: x.ticketDelay.Max()}}
	var exhausted []string
	for id, ts := range x.tickets {
		if ts.hasDecision {
			t.Tickets++
			if !ts.lastRetry {
				exhausted = append(exhausted, id)
			}
		}
		if ts.retried {
			t.Retried++
			cat := ts.Category()
			if cat == "" {
				cat = "unknown"
			}
			countCapped(t.RetriedByCategory, cat, OtherValues, 1)
			if ts.succeeded {
				t.SucceededAfterRetry++
			}
		}
	}
	t.Exhausted = idList(exhausted)
	t.RetrySuccessRate = ratio(float64(t.SucceededAfterRetry), float64(t.Retried))
	return t
}

// errorMessages is seed 004's top error messages, overall and per model
// (models with the most failures first).
func (x *extraAcc) errorMessages() ErrorMessages {
	em := ErrorMessages{ByModel: []ModelMessages{}}
	em.Top, em.Other, em.Total = topMessages(x.byMessage, TopMessages)
	for model, mm := range x.byModelMessage {
		mt := ModelMessages{Model: model}
		mt.Top, mt.Other, mt.Total = topMessages(mm, TopModelMessages)
		em.ByModel = append(em.ByModel, mt)
	}
	slices.SortFunc(em.ByModel, func(p, q ModelMessages) int {
		if p.Total != q.Total {
			if p.Total > q.Total {
				return -1
			}
			return 1
		}
		return strings.Compare(p.Model, q.Model)
	})
	return em
}
