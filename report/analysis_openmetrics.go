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
	histogram := func(name, help string, h trace.Histogram) {
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
	histogram("retrylab_retry_delay_seconds", "Waits before a retry (RetryAttempt with willRetry).", a.DelayHist)
	histogram("retrylab_request_duration_seconds", "Request durations including every retry.", a.DurationHist)

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

	for _, name := range trace.MetricNames {
		v, n, _, _ := a.Metric(name)
		gauge("retrylab_"+name, "Dashboard metric "+name+".", v)
		gauge("retrylab_"+name+"_samples", "Samples behind "+name+".", float64(n))
	}

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
