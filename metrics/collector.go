package metrics

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

// Options bound what a Collector keeps. Zero fields take the defaults.
type Options struct {
	// MaxValues is the number of distinct values each label keeps (provider,
	// model, failure_type, status, from, to, reason); later ones are
	// counted as Other. Default 50.
	MaxValues int
	// MaxRuns is the number of runs whose L2 and repair state is kept (the
	// per-run figures need it); past it the oldest run is forgotten, and
	// counted again as a new run should it write again. Default 65536.
	MaxRuns int
}

// Default limits of Options.
const (
	DefaultMaxValues = 50
	DefaultMaxRuns   = 1 << 16
)

// Collector counts trace events as Prometheus metrics. Register it with a
// prometheus.Registerer and pass it to trace.Writer.Observe (or call
// ObserveEvent yourself); it is safe for concurrent use, and one Collector
// may observe many Writers.
type Collector struct {
	requests, withRetries, failed, retries *prometheus.CounterVec
	failedAttempts                         *prometheus.CounterVec
	delay                                  *prometheus.HistogramVec
	escalations                            *prometheus.CounterVec
	steps, diagnoses, l2Runs, l2Escalated  prometheus.Counter
	repairDesc                             *prometheus.Desc

	provider, model, failureType, status, from, to, reason *capped

	mu      sync.Mutex
	maxRuns int
	runs    map[string]*runState
	order   []string // run keys, oldest first, for forgetting
	repairN int64    // runs with a RepairAttempted
	repairS int64    // the sum of their iterations (see runState.contrib)
}

var (
	_ prometheus.Collector = (*Collector)(nil)
	_ trace.Observer       = (*Collector)(nil)
)

// runState is what the per-run figures need of one run, as analyze keeps
// it.
type runState struct {
	l2Active, l2Escalated bool
	repairs, maxIter      int64
	hasIter               bool
}

// contrib is the run's share of the repair-iterations sum: its largest
// iteration, or its number of RepairAttempted when none carried one.
func (r *runState) contrib() int64 {
	if r.hasIter {
		return r.maxIter
	}
	return r.repairs
}

// New returns a Collector with opts' limits.
func New(opts Options) *Collector {
	if opts.MaxValues <= 0 {
		opts.MaxValues = DefaultMaxValues
	}
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = DefaultMaxRuns
	}
	pm := []string{"provider", "model"}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	c := &Collector{
		requests:       counterVec(MetricRequests, "Logical provider requests (ProviderRequestFinished).", pm...),
		withRetries:    counterVec(MetricRequestsWithRetries, "Requests with at least one retry.", pm...),
		failed:         counterVec(MetricRequestsFailed, "Requests that failed after their last attempt.", pm...),
		retries:        counterVec(MetricRetries, "Retries, the sum of ProviderRequestFinished.retries.", pm...),
		failedAttempts: counterVec(MetricFailedAttempts, "Failed attempts (RetryAttempt), by failure type and HTTP status (none without one).", "provider", "model", "failure_type", "status"),
		delay: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricRetryDelay,
			Help: "Waits before a retry (RetryAttempt with willRetry).", Buckets: DelayBuckets()}, pm),
		escalations: counterVec(MetricEscalations, "Escalations (RunEscalated), by path and reason.", "from", "to", "reason"),
		steps:       counter(MetricStepsFinished, "StepFinished events."),
		diagnoses:   counter(MetricDiagnosesStarted, "DiagnosisStarted events."),
		l2Runs:      counter(MetricL2Runs, "Runs with L2 activity (IterationStarted, RepairAttempted, or a RunEscalated from L2)."),
		l2Escalated: counter(MetricL2RunsEscalated, "Runs with a RunEscalated from L2."),
		repairDesc: prometheus.NewDesc(MetricRepairIterations,
			"Per run with a RepairAttempted, its largest iteration (its number of RepairAttempted when none carries one).", nil, nil),
		maxRuns: opts.MaxRuns,
		runs:    map[string]*runState{},
	}
	for _, p := range []**capped{&c.provider, &c.model, &c.failureType, &c.status, &c.from, &c.to, &c.reason} {
		*p = newCapped(opts.MaxValues)
	}
	return c
}

// DelayBuckets are the upper bounds, in seconds, of the retry-delay
// histogram: analyze.HistogramBoundsMs, the buckets of trace analyze.
func DelayBuckets() []float64 {
	out := make([]float64, len(analyze.HistogramBoundsMs))
	for i, ms := range analyze.HistogramBoundsMs {
		out[i] = float64(ms) / 1000
	}
	return out
}

// Describe sends the descriptors of every metric of c.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.collectors() {
		m.Describe(ch)
	}
	ch <- c.repairDesc
}

// Collect sends the current value of every metric of c.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.collectors() {
		m.Collect(ch)
	}
	c.mu.Lock()
	n, s := c.repairN, c.repairS
	c.mu.Unlock()
	ch <- prometheus.MustNewConstSummary(c.repairDesc, uint64(n), float64(s), nil)
}

func (c *Collector) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.requests, c.withRetries, c.failed, c.retries, c.failedAttempts,
		c.delay, c.escalations, c.steps, c.diagnoses, c.l2Runs, c.l2Escalated}
}

// ObserveEvent counts ev. Events of types the Collector does not count are
// ignored, as is a payload that is not a JSON object.
func (c *Collector) ObserveEvent(ev trace.Event) {
	switch ev.Type {
	case trace.TypeStepFinished:
		c.steps.Inc()
		return
	case trace.TypeDiagnosisStarted:
		c.diagnoses.Inc()
		return
	case trace.TypeProviderRequestFinished, trace.TypeRetryAttempt, trace.TypeRunEscalated,
		trace.TypeIterationStarted, trace.TypeRepairAttempted:
	default:
		return
	}
	var p payload
	if json.Unmarshal(ev.Payload, &p) != nil {
		p = nil
	}
	switch ev.Type {
	case trace.TypeProviderRequestFinished:
		c.requestFinished(p)
	case trace.TypeRetryAttempt:
		c.retryAttempt(p)
	case trace.TypeRunEscalated:
		from, to := c.from.value(p.str("from")), c.to.value(p.str("to"))
		c.escalations.WithLabelValues(from, to, c.reason.value(orUnknown(p.str("reason")))).Inc()
		if strings.EqualFold(p.str("from"), "L2") {
			c.run(ev.RunID, func(r *runState) { r.l2Active, r.l2Escalated = true, true })
		}
	case trace.TypeIterationStarted:
		c.run(ev.RunID, func(r *runState) { r.l2Active = true })
	case trace.TypeRepairAttempted:
		it, ok := p.int("iteration")
		c.run(ev.RunID, func(r *runState) {
			r.l2Active = true
			r.repairs++
			if ok {
				r.maxIter = max(r.maxIter, it)
				r.hasIter = true
			}
		})
	}
}

func (c *Collector) requestFinished(p payload) {
	pv, mv := c.provider.value(p.str("provider")), c.model.value(p.str("model"))
	retries, _ := p.int("retries")
	retries = max(retries, 0)
	// Every series of a provider and model starts with its first request,
	// at 0 where it does not count it: a rate's numerator then exists
	// whenever its denominator does.
	var withRetries, failed float64
	if retries > 0 {
		withRetries = 1
	}
	if !p.bool("success") {
		failed = 1
	}
	c.requests.WithLabelValues(pv, mv).Inc()
	c.retries.WithLabelValues(pv, mv).Add(float64(retries))
	c.withRetries.WithLabelValues(pv, mv).Add(withRetries)
	c.failed.WithLabelValues(pv, mv).Add(failed)
}

func (c *Collector) retryAttempt(p payload) {
	pv, mv := c.provider.value(p.str("provider")), c.model.value(p.str("model"))
	status := "none"
	if s, _ := p.int("status"); s != 0 {
		status = strconv.FormatInt(s, 10)
	}
	c.failedAttempts.WithLabelValues(pv, mv, c.failureType.value(orUnknown(p.str("failureType"))), c.status.value(status)).Inc()
	if p.bool("willRetry") {
		d, _ := p.int("delayMs")
		c.delay.WithLabelValues(pv, mv).Observe(float64(max(d, 0)) / 1000)
	}
}

// run applies change to the state of run key, counting what it turned on.
func (c *Collector) run(key string, change func(*runState)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.runs[key]
	if r == nil {
		r = &runState{}
		c.runs[key] = r
		c.order = append(c.order, key)
		if len(c.order) > c.maxRuns {
			delete(c.runs, c.order[0])
			c.order = c.order[1:]
		}
	}
	before := *r
	change(r)
	if r.l2Active && !before.l2Active {
		c.l2Runs.Inc()
	}
	if r.l2Escalated && !before.l2Escalated {
		c.l2Escalated.Inc()
	}
	if r.repairs > 0 {
		if before.repairs == 0 {
			c.repairN++
		}
		c.repairS += r.contrib() - before.contrib()
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// payload is an event's payload, read as leniently as trace analyze reads
// it.
type payload map[string]json.RawMessage

// str is a string member, "" when absent or not a string.
func (p payload) str(k string) string {
	var s string
	if v, ok := p[k]; ok && len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s
	}
	return ""
}

// bool is true for a member that is JSON true.
func (p payload) bool(k string) bool { return string(p[k]) == "true" }

// int is a number member rounded to an integer (a number in a string too),
// clamped to int64, as trace analyze reads it.
func (p payload) int(k string) (int64, bool) { return trace.JSONInt(p[k]) }
