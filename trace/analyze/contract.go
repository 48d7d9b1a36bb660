// The analysis JSON contract (DESIGN.md, docs/analyze.md): the types of
// Analysis, field for field, and the names of its groupings and capped keys.

package analyze

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/retrylab/retrylab/trace/internal/jsonval"
)

// Schema is the "schema" of an Analysis.
const Schema = "retrylab.analysis/v1"

// Group dimensions accepted by Options.By.
var Dimensions = []string{"provider", "model", "failureType", "run", "day", "promptPattern"}

// defaultBy is the grouping used when Options.By is empty.
var defaultBy = []string{"provider", "model"}

// Analysis is the result of Run: DESIGN.md's analysis contract
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
		b = jsonval.AppendString(b, d)
		b = append(b, ':')
		b = jsonval.AppendString(b, g.Keys[d])
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
