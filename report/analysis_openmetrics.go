package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retrylab/retrylab/trace/analyze"
)

// AnalysisOpenMetrics writes the analysis in the OpenMetrics text format
// (which the Prometheus text parser also reads): counters named
// retrylab_*_total, the retry delays and request durations as
// retrylab_retry_delay_seconds and retrylab_request_duration_seconds
// histograms (exact bucket counts, le="+Inf" included), gauges for the rates
// and metrics, one retrylab_alert_state gauge per alert and state (1 for the
// current state, 0 otherwise), and the closing "# EOF".
func AnalysisOpenMetrics(w io.Writer, a *analyze.Analysis) error {
	a = safeAnalysis(a, true) // keys redacted, labels made safe to print
	om := &omWriter{bw: bufio.NewWriter(w)}
	om.inputs(a)
	om.requests(a)
	om.histogram("retrylab_retry_delay_seconds", "Waits before a retry (RetryAttempt with willRetry).", &a.DelayHist)
	om.histogram("retrylab_request_duration_seconds", "Request durations including every retry.", &a.DurationHist)
	om.escalations(a)
	om.groups(a)
	for _, d := range analyze.Registry {
		v, n := d.Value(a)
		name := d.OpenMetricsName()
		om.gauge(name, "Dashboard metric "+d.Name+".", v)
		om.gauge(name+"_samples", "Samples behind "+d.Name+".", float64(n))
	}
	om.tickets(a)
	om.orchestrator(a)
	om.retryCore(a)
	om.errorMessages(a)
	om.alerts(a)
	om.bw.WriteString("# EOF\n")
	return om.bw.Flush()
}

// omWriter writes OpenMetrics families and samples.
type omWriter struct{ bw *bufio.Writer }

// fam writes a family's TYPE, UNIT (if any) and HELP lines.
func (om *omWriter) fam(name, typ, help, unit string) {
	fmt.Fprintf(om.bw, "# TYPE %s %s\n", name, typ)
	if unit != "" {
		fmt.Fprintf(om.bw, "# UNIT %s %s\n", name, unit)
	}
	fmt.Fprintf(om.bw, "# HELP %s %s\n", name, help)
}

// sample writes one sample; labels are name, value pairs.
func (om *omWriter) sample(name string, labels []string, v float64) {
	bw := om.bw
	bw.WriteString(name)
	if len(labels) > 0 {
		bw.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				bw.WriteByte(',')
			}
			fmt.Fprintf(bw, "%s=\"%s\"", labels[i], omEscape(labels[i+1]))
		}
		bw.WriteByte('}')
	}
	bw.WriteByte(' ')
	bw.WriteString(omFloat(v))
	bw.WriteByte('\n')
}

func (om *omWriter) counter(name, help string, v int64) {
	om.fam(name, "counter", help, "")
	om.sample(name+"_total", nil, float64(v))
}

func (om *omWriter) gauge(name, help string, v float64) {
	om.fam(name, "gauge", help, "")
	om.sample(name, nil, v)
}

// byKey writes a counter family with one sample per key of m, sorted.
func (om *omWriter) byKey(name, help, label string, m map[string]int64) {
	om.fam(name, "counter", help, "")
	for _, k := range anSortedKeys(m) {
		om.sample(name+"_total", []string{label, k}, float64(m[k]))
	}
}

// buckets writes a counter family with one sample per bucket.
func (om *omWriter) buckets(name, help, label string, bs []analyze.Bucket) {
	om.fam(name, "counter", help, "")
	for _, b := range bs {
		om.sample(name+"_total", []string{label, b.Value}, float64(b.Count))
	}
}

// histogram writes h in seconds: cumulative buckets, +Inf, sum and count.
func (om *omWriter) histogram(name, help string, h *analyze.Histogram) {
	om.fam(name, "histogram", help, "seconds")
	var cum int64
	for i, b := range analyze.HistogramBoundsMs {
		cum += h.Counts[i]
		om.sample(name+"_bucket", []string{"le", omLe(float64(b) / 1000)}, float64(cum))
	}
	cum += h.Counts[len(h.Counts)-1]
	om.sample(name+"_bucket", []string{"le", "+Inf"}, float64(cum))
	om.sample(name+"_sum", nil, float64(h.SumMs)/1000)
	om.sample(name+"_count", nil, float64(cum))
}

func (om *omWriter) inputs(a *analyze.Analysis) {
	om.counter("retrylab_files", "Trace files read.", int64(a.Inputs.Files))
	om.gauge("retrylab_runs", "Runs found (one runId, or one file without runIds).", float64(a.Inputs.Runs))
	om.counter("retrylab_events", "Well-formed events read.", a.Inputs.Events)
	om.counter("retrylab_malformed_lines", "Malformed lines skipped.", a.Inputs.MalformedLines)
	om.byKey("retrylab_unknown_events", "Events of unknown types, by type.", "type", anInts(a.Inputs.UnknownTypes))
}

func (om *omWriter) requests(a *analyze.Analysis) {
	r := a.Requests
	om.counter("retrylab_requests", "Logical provider requests (ProviderRequestFinished).", r.Total)
	om.counter("retrylab_requests_failed", "Requests that failed after their last attempt.", r.Failed)
	om.counter("retrylab_requests_with_retries", "Requests with at least one retry.", r.WithRetries)
	om.counter("retrylab_retries", "Retries, the sum of ProviderRequestFinished.retries.", r.Retries)
	om.gauge("retrylab_retry_rate", "Requests with retries / requests.", r.RetryRate)
	om.gauge("retrylab_failure_rate", "Failed requests / requests.", r.FailureRate)
	om.gauge("retrylab_recovered_rate", "Requests with retries that succeeded / requests with retries.", r.RecoveredRate)
	om.gauge("retrylab_amplification", "Attempts / requests.", r.Amplification)
	om.byKey("retrylab_failed_attempts", "Failed attempts (RetryAttempt), by failure type.", "failure_type", a.Attempts.ByFailureType)
	om.fam("retrylab_failed_attempts_by_status", "counter", "Failed attempts with an HTTP status, by status.", "")
	for _, k := range anSortedKeys(a.Attempts.ByStatus) {
		om.sample("retrylab_failed_attempts_by_status_total", []string{"status", k}, float64(a.Attempts.ByStatus[k]))
	}
}

func (om *omWriter) escalations(a *analyze.Analysis) {
	e := a.Escalations
	om.fam("retrylab_escalations", "counter", "Escalations (RunEscalated), by path.", "")
	for _, p := range e.ByPath {
		om.sample("retrylab_escalations_total", []string{"from", p.From, "to", p.To}, float64(p.Count))
	}
	om.byKey("retrylab_escalations_by_reason", "Escalations by reason.", "reason", e.ByReason)
}

func (om *omWriter) groups(a *analyze.Analysis) {
	om.fam("retrylab_group_requests", "counter", "Requests per group of the --by dimensions.", "")
	for _, g := range a.Groups {
		om.sample("retrylab_group_requests_total", groupLabels(a, g), float64(g.Total))
	}
	om.fam("retrylab_group_retry_rate", "gauge", "Retry rate per group.", "")
	for _, g := range a.Groups {
		om.sample("retrylab_group_retry_rate", groupLabels(a, g), g.RetryRate)
	}
	om.fam("retrylab_group_failure_rate", "gauge", "Failure rate per group.", "")
	for _, g := range a.Groups {
		om.sample("retrylab_group_failure_rate", groupLabels(a, g), g.FailureRate)
	}
}

// alerts writes each alert's state (one gauge per state, 1 for the current
// one), value and threshold. Alerts may share a name (a default and an
// --alert on the same metric both take the metric's name); a repeated
// series would make the whole exposition invalid, so the second one is
// labelled name#2, and so on.
func (om *omWriter) alerts(a *analyze.Analysis) {
	alertLabel := make([]string, len(a.Alerts))
	used := map[string]int{}
	for i, al := range a.Alerts {
		used[al.Name]++
		alertLabel[i] = al.Name
		if n := used[al.Name]; n > 1 {
			alertLabel[i] = fmt.Sprintf("%s#%d", al.Name, n)
		}
	}
	om.fam("retrylab_alert_state", "gauge", "1 for each alert's current state (ok, warning, firing, insufficient_data), else 0.", "")
	states := []string{analyze.StateOK, analyze.StateWarning, analyze.StateFiring, analyze.StateInsufficientData}
	for i, al := range a.Alerts {
		for _, s := range states {
			v := 0.0
			if al.State == s {
				v = 1
			}
			om.sample("retrylab_alert_state", []string{"alert", alertLabel[i], "metric", al.Metric, "state", s}, v)
		}
	}
	om.fam("retrylab_alert_value", "gauge", "Each alert's metric value.", "")
	for i, al := range a.Alerts {
		om.sample("retrylab_alert_value", []string{"alert", alertLabel[i]}, al.Value)
	}
	om.fam("retrylab_alert_threshold", "gauge", "Each alert's threshold.", "")
	for i, al := range a.Alerts {
		om.sample("retrylab_alert_threshold", []string{"alert", alertLabel[i], "op", al.Op}, al.Threshold)
	}
}

// groupLabels turns a group's dimensions into label pairs (failureType
// becomes failure_type, as label names are snake case).
func groupLabels(a *analyze.Analysis, g analyze.Group) []string {
	var l []string
	for _, d := range a.By {
		name := d
		if d == "failureType" {
			name = "failure_type"
		}
		l = append(l, name, g.Keys[d])
	}
	return l
}

func anInts(m map[string]int) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = int64(v)
	}
	return out
}

func omFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// omLe formats a bucket bound as OpenMetrics requires of le values: the
// canonical number, which for an integer ends in ".0" (le="1.0", not "1").
func omLe(v float64) string {
	s := omFloat(v)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return s
}

func omEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// tickets writes seed 002's ticket metrics under the seed's own names
// (tickets_retried_total{category}, tickets_retry_exhausted_total, the
// retry_delay_seconds histogram; retry_success_rate is a registry gauge).
// Id lists (escalated runs, exhausted tickets) are not series: their
// counts are.
func (om *omWriter) tickets(a *analyze.Analysis) {
	t := a.Tickets
	om.byKey("tickets_retried", "Tickets retried at least once (RetryDecision shouldRetry true, or a retry TicketTransition), by category.", "category", t.RetriedByCategory)
	om.counter("tickets_retry_exhausted", "Tickets whose last RetryDecision has shouldRetry false.", t.Exhausted.Count)
	om.histogram("retry_delay_seconds", "Ticket retry delays (RetryDecision nextDelayMs with shouldRetry true).", &a.TicketDelayHist)
	om.counter("retrylab_retry_decisions", "RetryDecision events.", t.Decisions)
	om.byKey("retrylab_ticket_transitions", "TicketTransition events, by event.", "event", t.TransitionsByEvent)
	om.byKey("retrylab_ticket_transitions_by_state", "TicketTransition events, by the state entered.", "to", t.TransitionsByTo)
}

// orchestrator writes seed 003's counts.
func (om *omWriter) orchestrator(a *analyze.Analysis) {
	om.buckets("retrylab_requests_by_retries", "Requests by their number of retries (10+ for ten and more).", "retries", a.Requests.RetriesPerRequest)
	o := a.Orchestrator
	om.counter("retrylab_judge_invocations", "JudgeInvoked events.", o.JudgeInvocations)
	om.counter("retrylab_candidates", "CandidateGenerated events.", o.Candidates)
	om.counter("retrylab_verifications", "VerificationFinished events.", o.Verifications)
	om.byKey("retrylab_runs_stopped", "RunStopped events, by reason.", "reason", o.RunStoppedByReason)
	om.fam("retrylab_escalated_runs", "gauge", "Runs with a RunEscalated.", "")
	om.sample("retrylab_escalated_runs", nil, float64(o.EscalatedRuns.Count))
	om.buckets("retrylab_runs_by_repair_iterations", "Runs with a RepairAttempted, by max(iteration) (10+ for ten and more).", "iterations", o.RepairIterations.Distribution)
	om.fam("retrylab_runs_above_repair_threshold", "gauge", "Runs whose max(iteration) is above the avg_repair_iterations threshold.", "")
	om.sample("retrylab_runs_above_repair_threshold", nil, float64(o.RepairIterations.Above.Count))
	om.alertCounts(a)
}

// alertCounts writes the numerators and denominators of the seed 003
// alerts under the names of metrics.Collector's counters, so that a
// dashboard or a rule reads either.
func (om *omWriter) alertCounts(a *analyze.Analysis) {
	c := a.Counts
	om.counter("retrylab_steps_finished", "StepFinished events.", c.StepFinished)
	om.counter("retrylab_diagnoses_started", "DiagnosisStarted events.", c.DiagnosisStarted)
	om.counter("retrylab_l2_runs", "Runs with L2 activity (IterationStarted, RepairAttempted, or a RunEscalated from L2).", int64(c.L2Runs))
	om.counter("retrylab_l2_runs_escalated", "Runs with a RunEscalated from L2.", int64(c.L2EscalatedRuns))
	om.fam("retrylab_repair_iterations", "summary", "Per run with a RepairAttempted, its largest iteration (its number of RepairAttempted when none carries one).", "")
	om.sample("retrylab_repair_iterations_sum", nil, float64(c.RepairIterations))
	om.sample("retrylab_repair_iterations_count", nil, float64(c.RepairRuns))
}

// retryCore writes the retry core's own events (seed 004).
func (om *omWriter) retryCore(a *analyze.Analysis) {
	rc := a.RetryCore
	om.byKey("retrylab_error_reports", "ErrorReport events, by failure type.", "failure_type", rc.ErrorReportsByFailureType)
	om.byKey("retrylab_error_reports_by_category", "ErrorReport events, by category.", "category", rc.ErrorReportsByCategory)
	om.byKey("retrylab_escalations_declined", "EscalationDeclined events, by the escalation's reason.", "reason", rc.EscalationsDeclinedByReason)
	om.byKey("retrylab_escalations_declined_by_why", "EscalationDeclined events, by why it was declined.", "why", rc.EscalationsDeclinedByWhy)
	om.counter("retrylab_error_context_retries", "RetryAttempt events with errorContext true.", rc.ErrorContextRetries)
}

// errorMessages writes seed 004's top error messages, overall and per
// model, the rest as (other).
func (om *omWriter) errorMessages(a *analyze.Analysis) {
	em := a.ErrorMessages
	om.fam("retrylab_error_messages", "counter", "Failed attempts by normalised errorMessage: the top ones, the rest as (other).", "")
	for _, m := range em.Top {
		om.sample("retrylab_error_messages_total", []string{"message", m.Message}, float64(m.Count))
	}
	if em.Other > 0 {
		om.sample("retrylab_error_messages_total", []string{"message", analyze.OtherMessages}, float64(em.Other))
	}
	om.fam("retrylab_error_messages_by_model", "counter", "Failed attempts by model and normalised errorMessage: the top ones per model, the rest as (other).", "")
	for _, mm := range em.ByModel {
		for _, m := range mm.Top {
			om.sample("retrylab_error_messages_by_model_total", []string{"model", mm.Model, "message", m.Message}, float64(m.Count))
		}
		if mm.Other > 0 {
			om.sample("retrylab_error_messages_by_model_total", []string{"model", mm.Model, "message", analyze.OtherMessages}, float64(mm.Other))
		}
	}
}
