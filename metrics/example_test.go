package metrics_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/retrylab/retrylab/metrics"
	"github.com/retrylab/retrylab/trace"
)

func ExampleCollector() {
	// Register the Collector with a registry (promhttp.HandlerFor(reg, ...)
	// serves it) and have it observe the trace.Writer the retry core writes
	// through: here one that writes nowhere else.
	c := metrics.New(metrics.Options{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	tw := trace.NewWriter(io.Discard, "run-1")
	tw.Observe(c)

	// What retry.Retrier writes for a request that succeeded on its second
	// attempt.
	tw.Emit(trace.TypeRetryAttempt, trace.RetryAttempt{Provider: "anthropic", Model: "claude-haiku-4-5",
		FailureType: "overloaded", Status: 529, WillRetry: true, DelayMs: 2000})
	tw.Emit(trace.TypeProviderRequestFinished, trace.ProviderRequestFinished{Provider: "anthropic",
		Model: "claude-haiku-4-5", Success: true, Retries: 1, DurationMs: 2300})

	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch {
			case m.GetCounter() != nil && m.GetCounter().GetValue() > 0:
				fmt.Println(mf.GetName(), labels(m.GetLabel()), m.GetCounter().GetValue())
			case m.GetHistogram() != nil:
				fmt.Println(mf.GetName(), labels(m.GetLabel()), "count", m.GetHistogram().GetSampleCount(), "sum", m.GetHistogram().GetSampleSum())
			}
		}
	}
	// Output:
	// retrylab_failed_attempts_total provider=anthropic model=claude-haiku-4-5 failure_type=overloaded status=529 1
	// retrylab_requests_total provider=anthropic model=claude-haiku-4-5 1
	// retrylab_requests_with_retries_total provider=anthropic model=claude-haiku-4-5 1
	// retrylab_retries_total provider=anthropic model=claude-haiku-4-5 1
	// retrylab_retry_delay_seconds provider=anthropic model=claude-haiku-4-5 count 1 sum 2
}

// labels prints label pairs in the Collector's label order.
func labels(ls []*dto.LabelPair) string {
	order := map[string]int{"provider": 0, "model": 1, "failure_type": 2, "status": 3}
	out := make([]string, len(ls))
	for _, l := range ls {
		out[order[l.GetName()]] = l.GetName() + "=" + l.GetValue()
	}
	return strings.Join(out, " ")
}
