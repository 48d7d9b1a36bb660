package analyze

// MetricKind says how a metric is computed, and so how alerts treat it.
type MetricKind string

// Metric kinds.
const (
	// KindRate is a proportion of samples in [0, 1]: it has an exact
	// (Clopper–Pearson) interval, and alerts compare one of its bounds with the threshold.
	KindRate MetricKind = "rate"
	// KindMean is an average over its samples: no interval, alerts compare
	// the value.
	KindMean MetricKind = "mean"
	// KindQuantile is a nearest-rank percentile over its samples: no
	// interval, alerts compare the value.
	KindQuantile MetricKind = "quantile"
)

// MetricDef is one entry of the metric registry: everything the analyzer,
// the alert parser, the renderers and `retrylab trace analyze --help` need
// to know of a metric. A new metric is one entry of Registry.
type MetricDef struct {
	Name string     // the name alerts and Metrics' JSON use
	Kind MetricKind // rate, mean or quantile
	// Unit is "" for plain numbers and rates, "seconds" for durations (an
	// alert threshold is then in seconds; --alert also accepts 30s, 500ms).
	Unit string
	// Samples says what the sample count n is, for people.
	Samples string
	// Help is one sentence saying what the metric is.
	Help string
	// OMName is the OpenMetrics gauge name ("retrylab_" + Name unless the
	// seed names it).
	OMName string
	// Value returns the metric's value and its sample count.
	Value func(*Analysis) (value float64, samples int64)
	// HigherIsBetter marks a metric whose decrease is the regression
	// (recovered and success rates); `trace compare` reads it.
	HigherIsBetter bool
}

// IsRate reports whether the metric is a proportion with an exact (Clopper–Pearson) interval.
func (d MetricDef) IsRate() bool { return d.Kind == KindRate }

// Registry lists every metric, in the order outputs show them. Metric,
// MetricNames, ParseAlert, LoadAlerts, the report renderers and the CLI's
// help all read it.
var Registry = []MetricDef{
	{Name: "provider_retry_rate", Kind: KindRate, Samples: "requests",
		Help:  "Requests with retries > 0 / requests (ProviderRequestFinished).",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.ProviderRetryRate, a.Requests.Total }},
	{Name: "provider_failure_rate", Kind: KindRate, Samples: "requests",
		Help:  "Requests with success false / requests.",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.ProviderFailureRate, a.Requests.Total }},
	{Name: "escalation_rate", Kind: KindRate, Samples: "runs",
		Help:  "Runs with a RunEscalated / runs.",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.EscalationRate, int64(a.Inputs.Runs) }},
	{Name: "l2_escalation_rate", Kind: KindRate, Samples: "runs with L2 activity",
		Help:  "Runs with a RunEscalated from L2 / runs with L2 activity.",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.L2EscalationRate, int64(a.Counts.L2Runs) }},
	{Name: "avg_repair_iterations", Kind: KindMean, Samples: "runs with a RepairAttempted",
		Help:  "Mean over runs with a RepairAttempted of max(iteration).",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.AvgRepairIterations, int64(a.Counts.RepairRuns) }},
	{Name: "diagnosis_rate", Kind: KindRate, Samples: "StepFinished events",
		Help:  "DiagnosisStarted / StepFinished.",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.DiagnosisRate, a.Counts.StepFinished }},
	{Name: "judge_invocation_rate", Kind: KindRate, Samples: "runs with L3 activity",
		Help:  "Runs with a JudgeInvoked / runs with L3 activity (CandidateGenerated, JudgeInvoked, JudgeDecided, DiagnosisStarted/Completed, or a RunEscalated to L3).",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.JudgeInvocationRate, int64(a.Orchestrator.L3Runs) }},
	{Name: "candidate_validity_rate", HigherIsBetter: true, Kind: KindRate, Samples: "CandidateGenerated events",
		Help:  "CandidateGenerated with valid true / CandidateGenerated.",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.CandidateValidityRate, a.Orchestrator.Candidates }},
	{Name: "verification_pass_rate", HigherIsBetter: true, Kind: KindRate, Samples: "VerificationFinished events",
		Help: "VerificationFinished with passed (or success) true / VerificationFinished.",
		Value: func(a *Analysis) (float64, int64) {
			return a.Metrics.VerificationPassRate, a.Orchestrator.Verifications
		}},
	{Name: "recovered_rate", HigherIsBetter: true, Kind: KindRate, OMName: "retrylab_requests_recovered_rate", Samples: "requests that failed at least once",
		Help:  "Requests that failed at least once and then succeeded (retries > 0, success) / requests that failed at least once (retries > 0 or success false).",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.RecoveredRate, a.Recovery.FailedOnce }},
	{Name: "time_to_recovery_mean", Kind: KindMean, Unit: "seconds", Samples: "recovered requests",
		Help:  "Mean time to recovery in seconds, over recovered requests only.",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.TimeToRecoveryMean, a.Recovery.Recovered }},
	{Name: "time_to_recovery_p50", Kind: KindQuantile, Unit: "seconds", Samples: "recovered requests",
		Help:  "Median time to recovery in seconds, over recovered requests only.",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.TimeToRecoveryP50, a.Recovery.Recovered }},
	{Name: "time_to_recovery_p90", Kind: KindQuantile, Unit: "seconds", Samples: "recovered requests",
		Help:  "90th percentile of the time to recovery in seconds.",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.TimeToRecoveryP90, a.Recovery.Recovered }},
	{Name: "time_to_recovery_p99", Kind: KindQuantile, Unit: "seconds", Samples: "recovered requests",
		Help:  "99th percentile of the time to recovery in seconds.",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.TimeToRecoveryP99, a.Recovery.Recovered }},
	{Name: "retry_success_rate", HigherIsBetter: true, Kind: KindRate, OMName: "retry_success_rate", Samples: "tickets retried",
		Help:  "Tickets that succeeded after a retry / tickets retried (seed 002).",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.RetrySuccessRate, int64(a.Tickets.Retried) }},
	{Name: "ticket_exhausted_rate", Kind: KindRate, Samples: "tickets with a RetryDecision",
		Help:  "Tickets whose last RetryDecision has shouldRetry false / tickets with a RetryDecision.",
		Value: func(a *Analysis) (float64, int64) { return a.Metrics.TicketExhaustedRate, int64(a.Tickets.Tickets) }},
}

// MetricNames lists the metrics alerts may use, in Registry order.
var MetricNames = func() []string {
	names := make([]string, len(Registry))
	for i, d := range Registry {
		names[i] = d.Name
	}
	return names
}()

// LookupMetric returns the registry entry of a metric name.
func LookupMetric(name string) (MetricDef, bool) {
	for _, d := range Registry {
		if d.Name == name {
			return d, true
		}
	}
	return MetricDef{}, false
}

// OpenMetricsName returns the metric's OpenMetrics gauge name.
func (d MetricDef) OpenMetricsName() string {
	if d.OMName != "" {
		return d.OMName
	}
	return "retrylab_" + d.Name
}

// Metric returns a metric's value, its sample count n, and whether it is a
// rate (a proportion with an exact (Clopper–Pearson) interval). ok is false for an unknown
// name. See Registry for each metric's samples.
func (a *Analysis) Metric(name string) (value float64, samples int64, rate, ok bool) {
	d, ok := LookupMetric(name)
	if !ok {
		return 0, 0, false, false
	}
	v, n := d.Value(a)
	return v, n, d.IsRate(), true
}
