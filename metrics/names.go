package metrics

// The names of the Collector's metrics (client_golang adds no suffix: a
// counter's name ends in _total). They are those of `retrylab trace
// analyze --format openmetrics`.
const (
	MetricRequests            = "retrylab_requests_total"
	MetricRequestsWithRetries = "retrylab_requests_with_retries_total"
	MetricRequestsFailed      = "retrylab_requests_failed_total"
	MetricRetries             = "retrylab_retries_total"
	MetricFailedAttempts      = "retrylab_failed_attempts_total"
	MetricRetryDelay          = "retrylab_retry_delay_seconds"
	MetricEscalations         = "retrylab_escalations_total"
	MetricStepsFinished       = "retrylab_steps_finished_total"
	MetricDiagnosesStarted    = "retrylab_diagnoses_started_total"
	MetricL2Runs              = "retrylab_l2_runs_total"
	MetricL2RunsEscalated     = "retrylab_l2_runs_escalated_total"
	MetricRepairIterations    = "retrylab_repair_iterations"
)

// Names lists every metric family the Collector exports.
var Names = []string{
	MetricRequests, MetricRequestsWithRetries, MetricRequestsFailed, MetricRetries,
	MetricFailedAttempts, MetricRetryDelay, MetricEscalations, MetricStepsFinished,
	MetricDiagnosesStarted, MetricL2Runs, MetricL2RunsEscalated, MetricRepairIterations,
}
