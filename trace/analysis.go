package trace

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/retrylab/retrylab/internal/regfile"
	"github.com/retrylab/retrylab/trace/internal/sketch"
)

// Schema is the "schema" of an Analysis.
const Schema = "retrylab.analysis/v1"

// Group dimensions accepted by Options.By.
var Dimensions = []string{"provider", "model", "failureType", "run", "day", "promptPattern"}

// DefaultBy is the grouping used when Options.By is empty.
var DefaultBy = []string{"provider", "model"}

// Analysis is the result of Analyze: DESIGN.md's analysis contract
// (schema retrylab.analysis/v1), field for field. Its semantics:
//
//   - A run is one runId, or one file for lines that carry none. Runs whose
//     only events are the mock server's journal (MockRequest, MockResponse,
//     as in server.jsonl) are not runs, and journal events never touch the
//     request or attempt figures; they still count in inputs.events.
//   - requests: over ProviderRequestFinished. retryRate = requests with
//     retries > 0 / requests; failureRate = success false / requests;
//     recoveredRate = requests with retries that succeeded / requests with
//     retries; amplification = (requests + retries) / requests, retries being
//     the sum of payload.retries. Every ratio with a zero denominator is 0.
//   - Percentiles are nearest-rank (rank ceil(q·n)); exact up to 4096 values,
//     then from a log-bucket sketch with ≤ 1 % relative error. count, total
//     and max are always exact. Values are whole milliseconds.
//   - attempts: failed = RetryAttempt events; byFailureType counts them (a
//     missing failureType is "unknown"); byStatus counts those with a status;
//     delayMs covers the ones with willRetry true.
//   - escalations: total = RunEscalated events; runs = runs with one;
//     rate = runs / inputs.runs (= escalation_rate); byPath sorted by count,
//     then from, then to; a missing reason is "unknown".
//   - groups: requests per value of the --by dimensions (provider, model,
//     failureType — "none" when absent —, run, day — the UTC date of ts,
//     "unknown" without one —, promptPattern — "none" when absent), sorted
//     by those values.
//   - metrics: l2_escalation_rate = runs with a RunEscalated from "L2" /
//     runs with L2 activity (IterationStarted, RepairAttempted, or an
//     escalation from L2); avg_repair_iterations = mean over runs with a
//     RepairAttempted of the largest payload.iteration (the number of
//     RepairAttempted events when none carries an iteration);
//     diagnosis_rate = DiagnosisStarted / StepFinished.
//   - alerts: see EvaluateAlerts; the samples n of each metric are given by
//     Analysis.Metric, from Registry.
//   - issue 9 (additive): requests.retriesPerRequest, recovery,
//     orchestrator, tickets, retryCore and errorMessages, and the metrics of
//     Registry past diagnosis_rate; docs/analyze.md defines each field.
//     Every list is capped (MaxListedIDs ids, TopMessages messages) with the
//     count of the rest.
type Analysis struct {
	Schema      string        `json:"schema"`
	Inputs      Inputs        `json:"inputs"`
	Requests    Requests      `json:"requests"`
	Attempts    Attempts      `json:"attempts"`
	Escalations Escalations   `json:"escalations"`
	Groups      []Group       `json:"groups"`
	Metrics     Metrics       `json:"metrics"`
	Alerts      []AlertResult `json:"alerts"`

	// Added by issue 9 (seeds 002, 003, 004); see docs/analyze.md.
	Orchestrator  Orchestrator  `json:"orchestrator"`
	Recovery      Recovery      `json:"recovery"`
	Tickets       Tickets       `json:"tickets"`
	RetryCore     RetryCore     `json:"retryCore"`
	ErrorMessages ErrorMessages `json:"errorMessages"`

	// Counts holds the denominators behind the metrics; it is not part of
	// the JSON contract.
	Counts Counts `json:"-"`
	// Confidence is the one-sided confidence of the rates' exact bounds
	// and of the alerts gated on them (0.95 by default).
	Confidence float64 `json:"-"`
	// By is the grouping dimensions of Groups, in order.
	By []string `json:"-"`
	// Delays holds exact bucket counts of willRetry delays and request
	// durations for histograms; it is not part of the JSON contract.
	DelayHist, DurationHist Histogram `json:"-"`
	// FromJSON is true for an analysis decoded from its JSON contract
	// (ReadAnalysisJSON): Counts and the histograms are then unknown.
	FromJSON bool `json:"-"`
	// TicketDelayHist holds the bucket counts of RetryDecision nextDelayMs
	// (shouldRetry true), for the seed's retry_delay_seconds histogram.
	TicketDelayHist Histogram `json:"-"`
}

// Inputs describes what was read.
type Inputs struct {
	Files          int            `json:"files"`
	Runs           int            `json:"runs"`
	Events         int64          `json:"events"`
	MalformedLines int64          `json:"malformedLines"`
	UnknownTypes   map[string]int `json:"unknownTypes"`
}

// Requests summarises ProviderRequestFinished events.
type Requests struct {
	Total         int64     `json:"total"`
	Succeeded     int64     `json:"succeeded"`
	Failed        int64     `json:"failed"`
	WithRetries   int64     `json:"withRetries"`
	Retries       int64     `json:"retries"`
	RetryRate     float64   `json:"retryRate"`
	FailureRate   float64   `json:"failureRate"`
	RecoveredRate float64   `json:"recoveredRate"`
	Amplification float64   `json:"amplification"`
	DurationMs    Quantiles `json:"durationMs"`
	// RetriesPerRequest counts the requests with 0, 1, … 9 and 10+ retries.
	RetriesPerRequest []Bucket `json:"retriesPerRequest"`
}

// Quantiles are nearest-rank percentiles and the exact maximum, in ms.
type Quantiles struct {
	P50 int64 `json:"p50"`
	P90 int64 `json:"p90"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

// Attempts summarises RetryAttempt events.
type Attempts struct {
	Failed        int64            `json:"failed"`
	ByFailureType map[string]int64 `json:"byFailureType"`
	ByStatus      map[string]int64 `json:"byStatus"`
	DelayMs       Delays           `json:"delayMs"`
}

// Delays summarises the delayMs of RetryAttempt events with willRetry true.
type Delays struct {
	Count int64 `json:"count"`
	Total int64 `json:"total"`
	P50   int64 `json:"p50"`
	P90   int64 `json:"p90"`
	P99   int64 `json:"p99"`
	Max   int64 `json:"max"`
}

// Escalations summarises RunEscalated events.
type Escalations struct {
	Total    int64            `json:"total"`
	Runs     int              `json:"runs"`
	Rate     float64          `json:"rate"`
	ByPath   []EscalationPath `json:"byPath"`
	ByReason map[string]int64 `json:"byReason"`
}

// EscalationPath counts the escalations from one model or level to another.
type EscalationPath struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int64  `json:"count"`
}

// Group is the request summary of one value of the grouping dimensions.
type Group struct {
	Keys          map[string]string // dimension → value
	Total         int64
	Succeeded     int64
	Failed        int64
	WithRetries   int64
	Retries       int64
	RetryRate     float64
	FailureRate   float64
	RecoveredRate float64
	by            []string
}

// MarshalJSON writes the dimensions first, in --by order, then the counts.
// Values are JSON strings whatever they hold (control characters, invalid
// UTF-8 as U+FFFD), as encoding/json would write them.
func (g Group) MarshalJSON() ([]byte, error) {
	var b []byte
	b = append(b, '{')
	for _, d := range g.by {
		b = appendJSONString(b, d)
		b = append(b, ':')
		b = appendJSONString(b, g.Keys[d])
		b = append(b, ',')
	}
	b = fmt.Appendf(b, `"total":%d,"succeeded":%d,"failed":%d,"withRetries":%d,"retries":%d,"retryRate":%s,"failureRate":%s,"recoveredRate":%s}`,
		g.Total, g.Succeeded, g.Failed, g.WithRetries, g.Retries, fmtFloat(g.RetryRate), fmtFloat(g.FailureRate), fmtFloat(g.RecoveredRate))
	return b, nil
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Metrics are the seed's dashboard metrics, the ones alerts refer to.
type Metrics struct {
	ProviderRetryRate   float64 `json:"provider_retry_rate"`
	ProviderFailureRate float64 `json:"provider_failure_rate"`
	EscalationRate      float64 `json:"escalation_rate"`
	L2EscalationRate    float64 `json:"l2_escalation_rate"`
	AvgRepairIterations float64 `json:"avg_repair_iterations"`
	DiagnosisRate       float64 `json:"diagnosis_rate"`

	JudgeInvocationRate   float64 `json:"judge_invocation_rate"`
	CandidateValidityRate float64 `json:"candidate_validity_rate"`
	VerificationPassRate  float64 `json:"verification_pass_rate"`
	RecoveredRate         float64 `json:"recovered_rate"`
	TimeToRecoveryMean    float64 `json:"time_to_recovery_mean"`
	TimeToRecoveryP50     float64 `json:"time_to_recovery_p50"`
	TimeToRecoveryP90     float64 `json:"time_to_recovery_p90"`
	TimeToRecoveryP99     float64 `json:"time_to_recovery_p99"`
	RetrySuccessRate      float64 `json:"retry_success_rate"`
	TicketExhaustedRate   float64 `json:"ticket_exhausted_rate"`
}

// Counts are the numerators and denominators behind Metrics.
type Counts struct {
	EscalatedRuns    int   // runs with a RunEscalated
	L2Runs           int   // runs with L2 activity
	L2EscalatedRuns  int   // runs with a RunEscalated from L2
	RepairRuns       int   // runs with a RepairAttempted
	RepairIterations int64 // sum over RepairRuns of the largest iteration
	DiagnosisStarted int64
	StepFinished     int64
	Recovered        int64 // requests with retries that succeeded
}

// Histogram holds exact cumulative-ready bucket counts of millisecond values
// for the upper bounds HistogramBoundsMs, plus an implicit +Inf bucket.
type Histogram struct {
	Counts [len(HistogramBoundsMs) + 1]int64 // non-cumulative
	SumMs  int64
}

// HistogramBoundsMs are the histogram upper bounds in milliseconds.
var HistogramBoundsMs = [...]int64{100, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000}

func (h *Histogram) add(v int64) {
	i, _ := slices.BinarySearch(HistogramBoundsMs[:], v)
	h.Counts[i]++
	h.SumMs = satAdd(h.SumMs, v)
}

func (h *Histogram) merge(o *Histogram) {
	for i := range h.Counts {
		h.Counts[i] += o.Counts[i]
	}
	h.SumMs = satAdd(h.SumMs, o.SumMs)
}

// Options control Analyze.
type Options struct {
	// By lists the grouping dimensions (see Dimensions); empty means DefaultBy.
	By []string
	// Alerts are evaluated against Metrics; nil means no alerts (the CLI
	// passes DefaultAlerts).
	Alerts []Alert
	// MinSamples is the default minimum sample count of an alert.
	MinSamples int
	// Confidence is the one-sided confidence of the rates' exact
	// (Clopper–Pearson) bounds and of the alerts gated on them; 0 means 0.95.
	Confidence float64
	// Strict makes the first malformed line an error.
	Strict bool
	// Workers is how many files are read at once; 0 means GOMAXPROCS.
	Workers int
	// Malformed, if not nil, is called for each malformed line, in file
	// order, after all files are read.
	Malformed func(*LineError)
	// Stdin is read for the path "-"; nil means os.Stdin.
	Stdin io.Reader
	// Streams are read for their paths instead of opening them: a pipe
	// (bash's <(...)) whose first bytes the caller has read already and
	// puts back in front.
	Streams map[string]io.Reader
}

// maxReportedPerFile bounds the malformed lines remembered per file.
const maxReportedPerFile = 100

// Analyze reads the trace files (as Discover returns them) in parallel,
// one streaming pass each, and computes the Analysis. A file that cannot be
// read is an error; so is a malformed line with Options.Strict.
func Analyze(ctx context.Context, files []string, opts Options) (*Analysis, error) {
	by, conf, err := analyzeOptions(opts)
	if err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	tasks, err := planChunks(files, workers)
	if err != nil {
		return nil, err
	}
	workers = min(workers, max(len(tasks), 1))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results, accs := readTasks(ctx, cancel, tasks, workers, by, opts)
	if err := fileLines(tasks, results); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	total := accs[0]
	for _, a := range accs[1:] {
		total.merge(a)
	}
	if opts.Malformed != nil {
		reportMalformed(tasks, results, opts.Malformed)
	}
	an := total.result(len(files), repairThreshold(opts.Alerts))
	an.By = slices.Clone(by)
	an.Confidence = conf
	alerts, err := EvaluateAlerts(an, opts.Alerts, opts.MinSamples)
	if err != nil {
		return nil, err
	}
	an.Alerts = alerts
	return an, nil
}

// analyzeOptions checks the groupings and the confidence of opts, with
// their defaults.
func analyzeOptions(opts Options) (by []string, conf float64, err error) {
	by = opts.By
	if len(by) == 0 {
		by = DefaultBy
	}
	for _, d := range by {
		if !slices.Contains(Dimensions, d) {
			return nil, 0, fmt.Errorf("unknown grouping %q (want one of %s)", d, strings.Join(Dimensions, ", "))
		}
	}
	conf = opts.Confidence
	if conf == 0 {
		conf = 0.95
	}
	if !(conf > 0.5 && conf < 1) {
		return nil, 0, fmt.Errorf("confidence %v is out of range (want 0.5 < c < 1)", conf)
	}
	return by, conf, nil
}

// taskResult is what reading one chunk gave, besides its events.
type taskResult struct {
	malformed []*LineError // line numbers relative to the chunk
	extra     int64
	lines     int // lines in the chunk, when it was read to its end
	err       error
}

// readTasks reads the chunks with workers goroutines, each into its own
// acc. An I/O error ends everything (cancel); a strict line error waits for
// its file's earlier chunks.
func readTasks(ctx context.Context, cancel context.CancelFunc, tasks []chunk, workers int, by []string, opts Options) ([]taskResult, []*acc) {
	results := make([]taskResult, len(tasks))
	accs := make([]*acc, workers)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := range workers {
		a := newAcc(by)
		accs[w] = a
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					continue
				}
				res := &results[i]
				res.lines, res.err = a.readChunk(ctx, tasks[i], opts, func(le *LineError) error {
					if opts.Strict {
						return le
					}
					if len(res.malformed) < maxReportedPerFile {
						res.malformed = append(res.malformed, le)
					} else {
						res.extra++
					}
					return nil
				})
				var le *LineError
				if res.err != nil && !errors.As(res.err, &le) {
					cancel()
				}
			}
		})
	}
	for i := range tasks {
		next <- i
	}
	close(next)
	wg.Wait()
	return results, accs
}

// fileLines turns the chunks' line numbers, relative to their start, into
// the file's, adding the lines of its earlier chunks; the first error, in
// file order, is returned.
func fileLines(tasks []chunk, results []taskResult) error {
	offset := 0
	for i, t := range tasks {
		if t.index == 0 {
			offset = 0
		}
		r := &results[i]
		for _, le := range r.malformed {
			le.Line += offset
		}
		if err := r.err; err != nil {
			var le *LineError
			if errors.As(err, &le) {
				le.Line += offset
			}
			return err
		}
		offset += r.lines
	}
	return nil
}

// reportMalformed hands report at most maxReportedPerFile malformed lines
// per file, whatever its chunks (each chunk kept its first ones, so the
// file's first ones are here), then one line saying how many more.
func reportMalformed(tasks []chunk, results []taskResult, report func(*LineError)) {
	var reported int
	var extra int64
	var last *LineError
	for i, r := range results {
		if tasks[i].index == 0 {
			reported, extra, last = 0, 0, nil
		}
		for _, le := range r.malformed {
			if reported < maxReportedPerFile {
				report(le)
				reported++
				last = le
			} else {
				extra++
			}
		}
		extra += r.extra
		if endOfFile := i+1 == len(tasks) || tasks[i+1].index == 0; endOfFile && extra > 0 && last != nil {
			report(&LineError{File: tasks[i].path, Line: last.Line,
				Reason: fmt.Sprintf("and %d more malformed lines after this one", extra)})
		}
	}
}

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

// str returns the label of a JSON string token (see label), interning
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
		s := label(jsonString(val))
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

// MaxLabelBytes is the longest label (provider, model, failure type, reason,
// from, to, run id, unknown type) kept as it is. A longer one is cut to its
// first bytes followed by "…" and 16 hex digits of its FNV-1a hash, so that
// distinct long values stay distinct while memory stays bounded.
const MaxLabelBytes = 256

// label bounds s to MaxLabelBytes (see there).
func label(s string) string {
	if len(s) <= MaxLabelBytes {
		return s
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	return cutLabel(s, h.Sum64())
}

// cutLabel is the label of a string longer than MaxLabelBytes whose first
// bytes s holds (at least MaxLabelBytes-18 of them) and whose FNV-1a hash
// is sum.
func cutLabel(s string, sum uint64) string {
	suffix := fmt.Sprintf("…%016x", sum)
	cut := min(MaxLabelBytes-len(suffix), len(s))
	for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}

// rawLabel is label of the raw contents of a JSON string (no quotes).
func rawLabel(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		if len(raw) <= MaxLabelBytes {
			return string(raw)
		}
		return label(string(raw))
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	return label(jsonString(q))
}

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

// chunk is a byte range of a file, read by one worker. index is its
// position among the file's chunks; end < 0 means to the end.
type chunk struct {
	path       string
	index      int
	start, end int64
}

// chunkMin is the smallest chunk a large plain file is split into.
var chunkMin int64 = 16 << 20 // a variable for tests

// planChunks splits large plain files into line-aligned chunks so that one
// big trace still uses every worker. Standard input and gzip files are read
// whole.
func planChunks(files []string, workers int) ([]chunk, error) {
	var tasks []chunk
	for _, path := range files {
		whole := chunk{path: path, end: -1}
		if path == StdinName || workers < 2 {
			tasks = append(tasks, whole)
			continue
		}
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() < 2*chunkMin {
			tasks = append(tasks, whole) // errors surface when the file is read
			continue
		}
		f, err := regfile.Open(path) // a FIFO swapped in since the Stat: not opened
		if err != nil {
			tasks = append(tasks, whole)
			continue
		}
		bounds, err := lineBounds(f, fi.Size(), min(int64(workers*4), fi.Size()/chunkMin))
		f.Close()
		if err != nil {
			return nil, readError(path, err)
		}
		if bounds == nil {
			tasks = append(tasks, whole)
			continue
		}
		for i := 0; i+1 < len(bounds); i++ {
			tasks = append(tasks, chunk{path: path, index: i, start: bounds[i], end: bounds[i+1]})
		}
	}
	return tasks, nil
}

// lineBounds returns n+1 offsets that cut f into about n pieces, each cut
// just after a '\n'; nil if f is gzip.
func lineBounds(f *os.File, size, n int64) ([]int64, error) {
	buf := make([]byte, 64<<10)
	if _, err := f.ReadAt(buf[:2], 0); err != nil {
		return nil, err
	}
	if buf[0] == 0x1f && buf[1] == 0x8b {
		return nil, nil
	}
	bounds := []int64{0}
	for i := int64(1); i < n; i++ {
		pos := max(size*i/n, bounds[len(bounds)-1])
		for {
			m, err := f.ReadAt(buf, pos)
			if j := bytes.IndexByte(buf[:m], '\n'); j >= 0 {
				pos += int64(j) + 1
				break
			}
			pos += int64(m)
			if err != nil { // io.EOF: no newline before the end
				pos = size
				break
			}
		}
		if pos >= size {
			break
		}
		if pos > bounds[len(bounds)-1] {
			bounds = append(bounds, pos)
		}
	}
	return append(bounds, size), nil
}

// readChunk reads one chunk and returns how many lines it held.
func (a *acc) readChunk(ctx context.Context, c chunk, opts Options, malformed func(*LineError) error) (int, error) {
	path := c.path
	var r *Reader
	var err error
	switch {
	case c.end >= 0:
		var f *os.File
		if f, err = regfile.Open(path); err == nil {
			r = newPlainReader(io.NewSectionReader(f, c.start, c.end-c.start), path)
			r.closer = append(r.closer, f)
			r.ctx = ctx
		}
	default:
		if src, ok := opts.Streams[path]; ok && path != StdinName {
			r, err = openStream(ctx, path, src)
		} else {
			r, err = openContext(ctx, path, opts.Stdin)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("%s: %w", path, context.Cause(ctx))
		}
		return 0, readError(path, err)
	}
	defer r.Close()
	err = a.readEvents(ctx, r, path, malformed)
	return r.line, err
}

func (a *acc) readEvents(ctx context.Context, r *Reader, path string, malformed func(*LineError) error) error {
	fileRun := fileRunPrefix + path
	r.members = a.membersOf
	var lastRunID []byte
	var lastRun *runState
	var lastKey string
	for n := 0; ; n++ {
		if n&0xfff == 0 && ctx.Err() != nil {
			return fmt.Errorf("%s: stopped reading: %w", path, context.Cause(ctx))
		}
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			if ctx.Err() != nil {
				return fmt.Errorf("%s: stopped reading: %w", path, context.Cause(ctx))
			}
			var le *LineError
			if errors.As(err, &le) {
				a.cur = payloadFields{}
				a.cur9, a.dirty9 = extraFields{}, false
				a.malformed++
				if err := malformed(le); err != nil {
					return err
				}
				continue
			}
			return readError(path, err)
		}
		a.events++
		// Find the run, reusing the last one while runId does not change.
		var run *runState
		if lastRun != nil && string(ev.RunID) == string(lastRunID) {
			run = lastRun
		} else {
			key := fileRun
			if len(ev.RunID) > 0 {
				key = rawLabel(ev.RunID)
			}
			run = a.runs[key]
			if run == nil {
				run = &runState{}
				a.runs[key] = run
			}
			lastRun, lastKey = run, key
			lastRunID = append(lastRunID[:0], ev.RunID...)
		}
		switch ev.Type {
		case TypeMockRequest, TypeMockResponse:
			continue // the mock's journal: not a client event, not a run
		}
		run.counted = true
		if !ev.membersSeen && len(ev.Payload) > 0 && ev.Payload[0] == '{' {
			if fn := a.membersOf(ev.Type); fn != nil {
				scanObject(ev.Payload, 0, 0, fn) // the type came after the payload
			}
		}
		a.event(ev, run, lastKey)
		a.cur = payloadFields{}
		if a.dirty9 {
			a.cur9, a.dirty9 = extraFields{}, false
		}
	}
}

func (a *acc) event(ev *RawEvent, run *runState, runKey string) {
	switch ev.Type {
	case TypeProviderRequestFinished:
		a.requestFinished(ev, runKey)
	case TypeRetryAttempt:
		a.retryAttempt()
	case TypeRunEscalated:
		a.runEscalated(run)
	case TypeIterationStarted:
		run.l2Active = true
	case TypeRepairAttempted:
		run.l2Active = true
		run.repairs++
		if a.cur.hasIter {
			run.maxIter = max(run.maxIter, a.cur.iter)
			run.hasIter = true
		}
	case TypeDiagnosisStarted:
		a.diagStarted++
		run.l3Active = true
	case TypeDiagnosisCompleted, TypeJudgeDecided:
		run.l3Active = true
	case TypeStepFinished:
		a.stepFinished++
	default:
		a.extraEvent(ev, run)
	}
}

// requestFinished counts a finished request in its group and its duration
// (and, recovered, its time to recovery).
func (a *acc) requestFinished(ev *RawEvent, runKey string) {
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
func (a *acc) groupKeyOf(ev *RawEvent, runKey string) groupKey {
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
func (a *acc) extraEvent(ev *RawEvent, run *runState) {
	c, x := &a.cur9, &a.x
	switch ev.Type {
	case TypeJudgeInvoked:
		run.l3Active, run.judged = true, true
		x.judgeInvocations++
	case TypeCandidateGenerated:
		run.l3Active = true
		x.candidates++
		if c.valid {
			x.validCandidates++
		}
	case TypeVerificationFinished:
		x.verifications++
		if c.passed {
			x.verificationsPass++
		}
	case TypeRunStopped:
		countCapped(x.runStopped, orUnknown(a.cur.reason), OtherValues, 1)
	case TypeRetryDecision:
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
	case TypeTicketTransition:
		x.transitions++
		countCapped(x.byEvent, orUnknown(c.event), OtherValues, 1)
		to := a.cur.to
		countCapped(x.byTo, orUnknown(to), OtherValues, 1)
		succeed := c.event == TicketSucceed || to == "needs_review" || to == "done"
		if c.ticket != "" && (succeed || c.event == TicketRetry) {
			if t := x.ticket(c.ticket); t != nil {
				if succeed {
					t.succeeded = true
				} else {
					t.retried = true
					t.transitionCategory(c.category)
				}
			}
		}
	case TypeErrorReport:
		x.errorReports++
		countCapped(x.reportByType, orUnknown(a.cur.failureType), OtherValues, 1)
		countCapped(x.reportByCategory, orUnknown(c.category), OtherValues, 1)
	case TypeEscalationDeclined:
		x.declined++
		countCapped(x.declinedReason, orUnknown(a.cur.reason), OtherValues, 1)
		countCapped(x.declinedWhy, orUnknown(c.why), OtherValues, 1)
	default:
		if !IsKnownType(ev.Type) {
			t := label(ev.Type)
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

// payloadFields are the payload members the analysis reads, of whichever
// event is being read.
type payloadFields struct {
	provider, model, failureType, from, to, reason, promptPattern string
	dur, retries, status, delay, iter                             int64
	success, willRetry, hasIter                                   bool
}

// extraFields are the payload members of the issue 9 figures. They are
// apart from payloadFields, and cleared only after an event that set one
// (acc.dirty9), so that the events of the hot loop pay nothing for them.
type extraFields struct {
	ticket, category, event, why string
	attempt, delay               int64
	msg, modelRaw                []byte // raw JSON tokens, valid until the next event
	valid, passed, shouldRetry   bool
	errCtx                       bool
}

// member records one payload member of an event of type typ.
// payloadReaders are an acc's readers of payload members, one per event
// type it reads, bound once (a method value made per event would allocate).
type payloadReaders struct {
	requestFinished, retryAttempt, runEscalated, repairAttempted func(k, v []byte) bool
	extra                                                        map[string]func(k, v []byte) bool
}

func (a *acc) bindReaders() {
	a.readers = payloadReaders{
		requestFinished: a.memberRequestFinished,
		retryAttempt:    a.memberRetryAttempt,
		runEscalated:    a.memberRunEscalated,
		repairAttempted: a.memberRepairAttempted,
		extra:           map[string]func(k, v []byte) bool{},
	}
	for typ, read := range map[string]func(k, v []byte){
		TypeCandidateGenerated:   a.memberCandidate,
		TypeVerificationFinished: a.memberVerification,
		TypeRunStopped:           a.memberRunStopped,
		TypeRetryDecision:        a.memberRetryDecision,
		TypeTicketTransition:     a.memberTicketTransition,
		TypeErrorReport:          a.memberErrorReport,
		TypeEscalationDeclined:   a.memberEscalationDeclined,
	} {
		a.readers.extra[typ] = func(k, v []byte) bool {
			a.dirty9 = true
			read(k, v)
			return true
		}
	}
}

// membersOf returns the reader of the payload members of events of type
// typ, nil when the analysis reads none of them (the payload is still
// checked to be valid JSON).
func (a *acc) membersOf(typ string) func(k, v []byte) bool {
	switch typ {
	case TypeProviderRequestFinished:
		return a.readers.requestFinished
	case TypeRetryAttempt:
		return a.readers.retryAttempt
	case TypeRunEscalated:
		return a.readers.runEscalated
	case TypeRepairAttempted:
		return a.readers.repairAttempted
	}
	return a.readers.extra[typ]
}

func (a *acc) memberRequestFinished(k, v []byte) bool {
	c := &a.cur
	switch string(k) {
	case "provider":
		c.provider = a.str(v)
	case "model":
		c.model = a.str(v)
	case "durationMs":
		c.dur, _ = jsonInt(v)
	case "success":
		c.success = jsonBool(v)
	case "retries":
		c.retries, _ = jsonInt(v)
	case "failureType":
		c.failureType = a.str(v)
	case "promptPattern":
		if a.byPattern {
			c.promptPattern = a.str(v)
		}
	}
	return true
}

func (a *acc) memberRetryAttempt(k, v []byte) bool {
	c := &a.cur
	switch string(k) {
	case "failureType":
		c.failureType = a.str(v)
	case "status":
		c.status, _ = jsonInt(v)
	case "delayMs":
		c.delay, _ = jsonInt(v)
	case "willRetry":
		c.willRetry = jsonBool(v)
	case "model":
		a.cur9.modelRaw, a.dirty9 = v, true
	case "errorMessage":
		a.cur9.msg, a.dirty9 = v, true
	case "errorContext":
		a.cur9.errCtx, a.dirty9 = jsonBool(v), true
	}
	return true
}

func (a *acc) memberRunEscalated(k, v []byte) bool {
	c := &a.cur
	switch string(k) {
	case "from":
		c.from = a.str(v)
	case "to":
		c.to = a.str(v)
	case "reason":
		c.reason = a.str(v)
	}
	return true
}

func (a *acc) memberRepairAttempted(k, v []byte) bool {
	if string(k) == "iteration" {
		if it, ok := jsonInt(v); ok {
			a.cur.iter, a.cur.hasIter = it, true
		}
	}
	return true
}

// The readers of the payload members of the issue 9 event types.

func (a *acc) memberCandidate(k, v []byte) {
	if string(k) == "valid" {
		a.cur9.valid = jsonBool(v)
	}
}

func (a *acc) memberVerification(k, v []byte) {
	if string(k) == "passed" || string(k) == "success" {
		a.cur9.passed = a.cur9.passed || jsonBool(v)
	}
}

func (a *acc) memberRunStopped(k, v []byte) {
	if string(k) == "reason" {
		a.cur.reason = a.str(v)
	}
}

func (a *acc) memberRetryDecision(k, v []byte) {
	e := &a.cur9
	switch string(k) {
	case "ticketId":
		e.ticket = a.str(v)
	case "category":
		e.category = a.str(v)
	case "currentAttempt":
		e.attempt, _ = jsonInt(v)
	case "shouldRetry":
		e.shouldRetry = jsonBool(v)
	case "nextDelayMs":
		e.delay, _ = jsonInt(v)
	}
}

func (a *acc) memberTicketTransition(k, v []byte) {
	e := &a.cur9
	switch string(k) {
	case "ticketId":
		e.ticket = a.str(v)
	case "event":
		e.event = a.str(v)
	case "to":
		a.cur.to = a.str(v)
	case "errorCategory":
		e.category = a.str(v)
	}
}

func (a *acc) memberErrorReport(k, v []byte) {
	switch string(k) {
	case "failureType":
		a.cur.failureType = a.str(v)
	case "category":
		a.cur9.category = a.str(v)
	}
}

func (a *acc) memberEscalationDeclined(k, v []byte) {
	switch string(k) {
	case "reason":
		a.cur.reason = a.str(v)
	case "why":
		a.cur9.why = a.str(v)
	}
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

func ratio(num, den float64) float64 {
	if den == 0 {
		return 0
	}
	return num / den
}

func (a *acc) result(files int, repairThreshold float64) *Analysis {
	an := &Analysis{Schema: Schema}
	an.Inputs = Inputs{Files: files, Events: a.events, MalformedLines: a.malformed, UnknownTypes: a.unknown}
	c, runs := a.runCounts()
	sum := a.groupTotals()
	c.DiagnosisStarted = a.diagStarted
	c.StepFinished = a.stepFinished
	c.Recovered = sum.recovered
	an.Counts = c
	an.Inputs.Runs = runs
	an.Requests = a.requests(sum)
	an.Attempts = a.attempts()
	an.Escalations = Escalations{
		Total: a.escalations, Runs: c.EscalatedRuns,
		Rate:   ratio(float64(c.EscalatedRuns), float64(runs)),
		ByPath: a.escalationPaths(), ByReason: a.byReason,
	}
	an.Groups = a.groupList()
	an.Metrics = Metrics{
		ProviderRetryRate:   an.Requests.RetryRate,
		ProviderFailureRate: an.Requests.FailureRate,
		EscalationRate:      an.Escalations.Rate,
		L2EscalationRate:    ratio(float64(c.L2EscalatedRuns), float64(c.L2Runs)),
		AvgRepairIterations: ratio(float64(c.RepairIterations), float64(c.RepairRuns)),
		DiagnosisRate:       ratio(float64(c.DiagnosisStarted), float64(c.StepFinished)),
	}
	an.DelayHist, an.DurationHist = a.delayHist, a.durHist
	an.Alerts = []AlertResult{}
	a.extraResult(an, repairThreshold)
	return an
}

// runCounts counts the runs (with at least one event of a client) and what
// happened in them: escalations, L2 activity, repairs.
func (a *acc) runCounts() (c Counts, runs int) {
	for _, r := range a.runs {
		if !r.counted {
			continue
		}
		runs++
		if r.escalated {
			c.EscalatedRuns++
		}
		if r.l2Active {
			c.L2Runs++
		}
		if r.l2Escalated {
			c.L2EscalatedRuns++
		}
		if r.repairs > 0 {
			c.RepairRuns++
			if r.hasIter {
				c.RepairIterations = satAdd(c.RepairIterations, r.maxIter)
			} else {
				c.RepairIterations += r.repairs
			}
		}
	}
	return c, runs
}

// groupTotals sums the groups: every request is in exactly one group, so
// the groups sum to the totals.
func (a *acc) groupTotals() groupStats {
	var sum groupStats
	for _, g := range a.groups {
		sum.total += g.total
		sum.succeeded += g.succeeded
		sum.failed += g.failed
		sum.withRetries += g.withRetries
		sum.retries = satAdd(sum.retries, g.retries)
		sum.recovered += g.recovered
	}
	return sum
}

// requests are the request figures of the totals sum.
func (a *acc) requests(sum groupStats) Requests {
	tot := float64(sum.total)
	return Requests{
		Total: sum.total, Succeeded: sum.succeeded, Failed: sum.failed,
		WithRetries: sum.withRetries, Retries: sum.retries,
		RetryRate:     ratio(float64(sum.withRetries), tot),
		FailureRate:   ratio(float64(sum.failed), tot),
		RecoveredRate: ratio(float64(sum.recovered), float64(sum.withRetries)),
		Amplification: ratio(float64(sum.total)+float64(sum.retries), tot),
		DurationMs: Quantiles{
			P50: a.duration.Quantile(0.5), P90: a.duration.Quantile(0.9),
			P99: a.duration.Quantile(0.99), Max: a.duration.Max(),
		},
	}
}

// attempts are the failed attempts' figures: by type, by status (the
// capped rest as OtherStatuses), and the delays before retries.
func (a *acc) attempts() Attempts {
	byStatus := make(map[string]int64, len(a.byStatus))
	for k, v := range a.byStatus {
		if k == otherStatus {
			byStatus[OtherStatuses] = v
			continue
		}
		byStatus[strconv.FormatInt(k, 10)] = v
	}
	return Attempts{
		Failed: a.failedAttempts, ByFailureType: a.byFailureType, ByStatus: byStatus,
		DelayMs: Delays{
			Count: a.delay.Count(), Total: a.delay.Total(),
			P50: a.delay.Quantile(0.5), P90: a.delay.Quantile(0.9),
			P99: a.delay.Quantile(0.99), Max: a.delay.Max(),
		},
	}
}

// escalationPaths lists the escalation paths, most taken first, then by
// name.
func (a *acc) escalationPaths() []EscalationPath {
	paths := make([]EscalationPath, 0, len(a.byPath))
	for k, v := range a.byPath {
		paths = append(paths, EscalationPath{From: k.from, To: k.to, Count: v})
	}
	slices.SortFunc(paths, func(x, y EscalationPath) int {
		if x.Count != y.Count {
			return int(y.Count - x.Count)
		}
		if x.From != y.From {
			return strings.Compare(x.From, y.From)
		}
		return strings.Compare(x.To, y.To)
	})
	return paths
}

// groupList lists the --by groups, sorted by their keys in the order of
// --by.
func (a *acc) groupList() []Group {
	groups := make([]Group, 0, len(a.groups))
	for k, g := range a.groups {
		groups = append(groups, Group{
			Keys: a.groupKeys(k), Total: g.total, Succeeded: g.succeeded, Failed: g.failed,
			WithRetries: g.withRetries, Retries: g.retries,
			RetryRate:     ratio(float64(g.withRetries), float64(g.total)),
			FailureRate:   ratio(float64(g.failed), float64(g.total)),
			RecoveredRate: ratio(float64(g.recovered), float64(g.withRetries)),
			by:            a.by,
		})
	}
	slices.SortFunc(groups, func(x, y Group) int {
		for _, d := range a.by {
			if c := strings.Compare(x.Keys[d], y.Keys[d]); c != 0 {
				return c
			}
		}
		return 0
	})
	return groups
}

// groupKeys names a group's key by the dimensions of --by.
func (a *acc) groupKeys(k groupKey) map[string]string {
	keys := map[string]string{}
	for _, d := range a.by {
		switch d {
		case "provider":
			keys[d] = k.provider
		case "model":
			keys[d] = k.model
		case "failureType":
			keys[d] = k.failureType
		case "run":
			keys[d] = strings.TrimPrefix(k.run, fileRunPrefix)
		case "day":
			keys[d] = k.day
		case "promptPattern":
			keys[d] = k.promptPattern
		}
	}
	return keys
}

// DefaultRepairThreshold is the threshold of orchestrator.repairIterations.above
// when no avg_repair_iterations alert is given (seed 003's "> 3").
const DefaultRepairThreshold = 3

// repairThreshold is the threshold of the first avg_repair_iterations
// alert, or DefaultRepairThreshold.
func repairThreshold(alerts []Alert) float64 {
	for _, al := range alerts {
		if al.Metric == "avg_repair_iterations" && al.Threshold != nil {
			return *al.Threshold
		}
	}
	return DefaultRepairThreshold
}
