package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retrylab/retrylab/trace"
)

// AnalysisOpenMetrics writes the analysis in the OpenMetrics text format
// (which the Prometheus text parser also reads): counters named
// retrylab_*_total, the retry delays and request durations as
// retrylab_retry_delay_seconds and retrylab_request_duration_seconds
// histograms (exact bucket counts, le="+Inf" included), gauges for the rates
// and metrics, one retrylab_alert_state gauge per alert and state (1 for the
// current state, 0 otherwise), and the closing "# EOF".
func AnalysisOpenMetrics(w io.Writer, a *trace.Analysis) error {
	a = safeAnalysis(a, true) // keys redacted, labels made safe to print
	bw := bufio.NewWriter(w)
	fam := func(name, typ, help, unit string) {
		fmt.Fprintf(bw, "# TYPE %s %s\n", name, typ)
		if unit != "" {
			fmt.Fprintf(bw, "# UNIT %s %s\n", name, unit)
		}
		fmt.Fprintf(bw, "# HELP %s %s\n", name, help)
	}
	sample := func(name string, labels []string, v float64) {
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
	counter := func(name, help string, v int64) {
		fam(name, "counter", help, "")
		sample(name+"_total", nil, float64(v))
	}
	gauge := func(name, help string, v float64) {
		fam(name, "gauge", help, "")
		sample(name, nil, v)
	}

	counter("retrylab_files", "Trace files read.", int64(a.Inputs.Files))
	gauge("retrylab_runs", "Runs found (one runId, or one file without runIds).", float64(a.Inputs.Runs))
	counter("retrylab_events", "Well-formed events read.", a.Inputs.Events)
	counter("retrylab_malformed_lines", "Malformed lines skipped.", a.Inputs.MalformedLines)
	fam("retrylab_unknown_events", "counter", "Events of unknown types, by type.", "")
	for _, k := range anSortedKeys(anInts(a.Inputs.UnknownTypes)) {
		sample("retrylab_unknown_events_total", []string{"type", k}, float64(a.Inputs.UnknownTypes[k]))
	}

	r := a.Requests
	counter("retrylab_requests", "Logical provider requests (ProviderRequestFinished).", r.Total)
	counter("retrylab_requests_failed", "Requests that failed after their last attempt.", r.Failed)
	counter("retrylab_requests_with_retries", "Requests with at least one retry.", r.WithRetries)
	counter("retrylab_retries", "Retries, the sum of ProviderRequestFinished.retries.", r.Retries)
	gauge("retrylab_retry_rate", "Requests with retries / requests.", r.RetryRate)
	gauge("retrylab_failure_rate", "Failed requests / requests.", r.FailureRate)
	gauge("retrylab_recovered_rate", "Requests with retries that succeeded / requests with retries.", r.RecoveredRate)
	gauge("retrylab_amplification", "Attempts / requests.", r.Amplification)

	fam("retrylab_failed_attempts", "counter", "Failed attempts (RetryAttempt), by failure type.", "")
	for _, k := range anSortedKeys(a.Attempts.ByFailureType) {
		sample("retrylab_failed_attempts_total", []string{"failure_type", k}, float64(a.Attempts.ByFailureType[k]))
	}
	fam("retrylab_failed_attempts_by_status", "counter", "Failed attempts with an HTTP status, by status.", "")
	for _, k := range anSortedKeys(a.Attempts.ByStatus) {
		sample("retrylab_failed_attempts_by_status_total", []string{"status", k}, float64(a.Attempts.ByStatus[k]))
	}
	histogram := func(name, help string, h *trace.Histogram) {
		fam(name, "histogram", help, "seconds")
		var cum int64
		for i, b := range trace.HistogramBoundsMs {
			cum += h.Counts[i]
			sample(name+"_bucket", []string{"le", omLe(float64(b) / 1000)}, float64(cum))
		}
		cum += h.Counts[len(h.Counts)-1]
		sample(name+"_bucket", []string{"le", "+Inf"}, float64(cum))
		sample(name+"_sum", nil, float64(h.SumMs)/1000)
		sample(name+"_count", nil, float64(cum))
	}
	histogram("retrylab_retry_delay_seconds", "Waits before a retry (RetryAttempt with willRetry).", &a.DelayHist)
	histogram("retrylab_request_duration_seconds", "Request durations including every retry.", &a.DurationHist)

	e := a.Escalations
	fam("retrylab_escalations", "counter", "Escalations (RunEscalated), by path.", "")
	for _, p := range e.ByPath {
		sample("retrylab_escalations_total", []string{"from", p.From, "to", p.To}, float64(p.Count))
	}
	fam("retrylab_escalations_by_reason", "counter", "Escalations by reason.", "")
	for _, k := range anSortedKeys(e.ByReason) {
		sample("retrylab_escalations_by_reason_total", []string{"reason", k}, float64(e.ByReason[k]))
	}

	fam("retrylab_group_requests", "counter", "Requests per group of the --by dimensions.", "")
	for _, g := range a.Groups {
		sample("retrylab_group_requests_total", groupLabels(a, g), float64(g.Total))
	}
	fam("retrylab_group_retry_rate", "gauge", "Retry rate per group.", "")
	for _, g := range a.Groups {
		sample("retrylab_group_retry_rate", groupLabels(a, g), g.RetryRate)
	}
	fam("retrylab_group_failure_rate", "gauge", "Failure rate per group.", "")
	for _, g := range a.Groups {
		sample("retrylab_group_failure_rate", groupLabels(a, g), g.FailureRate)
	}

	for _, d := range trace.Registry {
		v, n := d.Value(a)
		om := d.OpenMetricsName()
		gauge(om, "Dashboard metric "+d.Name+".", v)
		gauge(om+"_samples", "Samples behind "+d.Name+".", float64(n))
	}
	analysisOpenMetricsExtra(a, fam, sample, counter, histogram)

	// Alerts may share a name (a default and an --alert on the same metric
	// both take the metric's name); a repeated series would make the whole
	// exposition invalid, so the second one is labelled name#2, and so on.
	alertLabel := make([]string, len(a.Alerts))
	used := map[string]int{}
	for i, al := range a.Alerts {
		used[al.Name]++
		alertLabel[i] = al.Name
		if n := used[al.Name]; n > 1 {
			alertLabel[i] = fmt.Sprintf("%s#%d", al.Name, n)
		}
	}
	fam("retrylab_alert_state", "gauge", "1 for each alert's current state (ok, warning, firing, insufficient_data), else 0.", "")
	states := []string{trace.StateOK, trace.StateWarning, trace.StateFiring, trace.StateInsufficientData}
	for i, al := range a.Alerts {
		for _, s := range states {
			v := 0.0
			if al.State == s {
				v = 1
			}
			sample("retrylab_alert_state", []string{"alert", alertLabel[i], "metric", al.Metric, "state", s}, v)
		}
	}
	fam("retrylab_alert_value", "gauge", "Each alert's metric value.", "")
	for i, al := range a.Alerts {
		sample("retrylab_alert_value", []string{"alert", alertLabel[i]}, al.Value)
	}
	fam("retrylab_alert_threshold", "gauge", "Each alert's threshold.", "")
	for i, al := range a.Alerts {
		sample("retrylab_alert_threshold", []string{"alert", alertLabel[i], "op", al.Op}, al.Threshold)
	}
	bw.WriteString("# EOF\n")
	return bw.Flush()
}

// groupLabels turns a group's dimensions into label pairs (failureType
// becomes failure_type, as label names are snake case).
func groupLabels(a *trace.Analysis, g trace.Group) []string {
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

// analysisOpenMetricsExtra writes the issue 9 families: seed 002's ticket
// metrics under the seed's own names (tickets_retried_total{category},
// tickets_retry_exhausted_total, the retry_delay_seconds histogram;
// retry_success_rate is a registry gauge), and the retrylab_* counts of
// seeds 003 and 004. Id lists (escalated runs, exhausted tickets) are not
// series: their counts are.
func analysisOpenMetricsExtra(a *trace.Analysis,
	fam func(name, typ, help, unit string), sample func(string, []string, float64),
	counter func(string, string, int64), histogram func(string, string, *trace.Histogram)) {
	byKey := func(name, help, label string, m map[string]int64) {
		fam(name, "counter", help, "")
		for _, k := range anSortedKeys(m) {
			sample(name+"_total", []string{label, k}, float64(m[k]))
		}
	}
	buckets := func(name, help, label string, bs []trace.Bucket) {
		fam(name, "counter", help, "")
		for _, b := range bs {
			sample(name+"_total", []string{label, b.Value}, float64(b.Count))
		}
	}
	t := a.Tickets
	byKey("tickets_retried", "Tickets retried at least once (RetryDecision shouldRetry true, or a retry TicketTransition), by category.", "category", t.RetriedByCategory)
	counter("tickets_retry_exhausted", "Tickets whose last RetryDecision has shouldRetry false.", t.Exhausted.Count)
	histogram("retry_delay_seconds", "Ticket retry delays (RetryDecision nextDelayMs with shouldRetry true).", &a.TicketDelayHist)
	counter("retrylab_retry_decisions", "RetryDecision events.", t.Decisions)
	byKey("retrylab_ticket_transitions", "TicketTransition events, by event.", "event", t.TransitionsByEvent)
	byKey("retrylab_ticket_transitions_by_state", "TicketTransition events, by the state entered.", "to", t.TransitionsByTo)

	buckets("retrylab_requests_by_retries", "Requests by their number of retries (10+ for ten and more).", "retries", a.Requests.RetriesPerRequest)
	o := a.Orchestrator
	counter("retrylab_judge_invocations", "JudgeInvoked events.", o.JudgeInvocations)
	counter("retrylab_candidates", "CandidateGenerated events.", o.Candidates)
	counter("retrylab_verifications", "VerificationFinished events.", o.Verifications)
	byKey("retrylab_runs_stopped", "RunStopped events, by reason.", "reason", o.RunStoppedByReason)
	fam("retrylab_escalated_runs", "gauge", "Runs with a RunEscalated.", "")
	sample("retrylab_escalated_runs", nil, float64(o.EscalatedRuns.Count))
	buckets("retrylab_runs_by_repair_iterations", "Runs with a RepairAttempted, by max(iteration) (10+ for ten and more).", "iterations", o.RepairIterations.Distribution)
	fam("retrylab_runs_above_repair_threshold", "gauge", "Runs whose max(iteration) is above the avg_repair_iterations threshold.", "")
	sample("retrylab_runs_above_repair_threshold", nil, float64(o.RepairIterations.Above.Count))

	rc := a.RetryCore
	byKey("retrylab_error_reports", "ErrorReport events, by failure type.", "failure_type", rc.ErrorReportsByFailureType)
	byKey("retrylab_error_reports_by_category", "ErrorReport events, by category.", "category", rc.ErrorReportsByCategory)
	byKey("retrylab_escalations_declined", "EscalationDeclined events, by the escalation's reason.", "reason", rc.EscalationsDeclinedByReason)
	byKey("retrylab_escalations_declined_by_why", "EscalationDeclined events, by why it was declined.", "why", rc.EscalationsDeclinedByWhy)
	counter("retrylab_error_context_retries", "RetryAttempt events with errorContext true.", rc.ErrorContextRetries)

	em := a.ErrorMessages
	fam("retrylab_error_messages", "counter", "Failed attempts by normalised errorMessage: the top ones, the rest as (other).", "")
	for _, m := range em.Top {
		sample("retrylab_error_messages_total", []string{"message", m.Message}, float64(m.Count))
	}
	if em.Other > 0 {
		sample("retrylab_error_messages_total", []string{"message", trace.OtherMessages}, float64(em.Other))
	}
	fam("retrylab_error_messages_by_model", "counter", "Failed attempts by model and normalised errorMessage: the top ones per model, the rest as (other).", "")
	for _, mm := range em.ByModel {
		for _, m := range mm.Top {
			sample("retrylab_error_messages_by_model_total", []string{"model", mm.Model, "message", m.Message}, float64(m.Count))
		}
		if mm.Other > 0 {
			sample("retrylab_error_messages_by_model_total", []string{"model", mm.Model, "message", trace.OtherMessages}, float64(mm.Other))
		}
	}
}
