package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/retrylab/retrylab/metrics"
)

const rulesUsage = `Usage: retrylab trace rules [flags]

Prints a Prometheus rule file that gives, over --window, the alert verdicts
of 'retrylab trace analyze' on the counters of retrylab's metrics.Collector
(docs/prometheus.md): for each metric the alerts use, recording rules of its
numerator, its samples and its value (rates also both counts rounded to
whole numbers, k and n), then one alerting rule per alert, named as the
alert, that fires exactly when analyze would say firing on the same counts:
at least minSamples samples, and for a rate its one-sided exact binomial
(Clopper–Pearson) bound past the threshold. PromQL has no beta quantile, so
a rate alert compares k with the critical count analyze's gate turns at for
the window's n, written out for n up to --exact-up-to; past it, a
closed-form tail bound that never fires where analyze would not (it may
turn a fraction of a standard deviation later). A mean
(avg_repair_iterations) fires on its value. Each alert has a severity label
(the alert's, else warning) and a summary annotation. Without --alerts,
seed 003's four alerts: provider_retry_rate > 0.20, l2_escalation_rate >
0.30, avg_repair_iterations > 3 and diagnosis_rate > 0.10.

Metrics with Prometheus counters (for --alert and alerts files; --alert adds
to the defaults or to --alerts, as for analyze):
  %METRICS%

Flags:
%s
Example:
  retrylab trace rules --window 6h > retrylab-rules.yml
  promtool check rules retrylab-rules.yml

Exit codes: 0 written, 2 bad usage (bad flag, --alert, alerts file or window,
or an alert on a metric without counters).
`

func traceRules(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage := strings.Replace(rulesUsage, "%METRICS%", strings.Join(metrics.RuleMetrics(), ", "), 1)
	fs := newFlags("trace rules", usage)
	alertFlags := fs.StringArray("alert", nil, "add an alert METRIC OP VALUE, e.g. 'provider_retry_rate>0.2' (repeatable)")
	alertsFile := fs.String("alerts", "", "read alerts from this YAML `FILE` instead of the defaults")
	window := fs.String("window", "1h", "the range the counts are taken over, a Prometheus `DURATION` (30m, 1h, 1d)")
	minSamples := fs.Int("min-samples", 1, "alerts with fewer samples (and no minSamples of their own) never fire")
	confidence := fs.Float64("confidence", 0.95, "one-sided confidence of the exact (Clopper–Pearson) bounds the rate alerts are gated on (0.5 < F < 1)")
	exactUpTo := fs.Int("exact-up-to", metrics.DefaultExactUpTo, "the largest window sample count `N` whose exact critical counts are written out (1 to 1000000)")
	if err := parseFlags(fs, args, "run 'retrylab trace rules --help'", stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("trace rules reads no traces: give alerts with --alerts or --alert", "unexpected argument %q", fs.Arg(0))
	}
	w, err := model.ParseDuration(*window)
	if err != nil || w <= 0 {
		return usageErrorf("give a Prometheus duration such as 30m, 1h or 1d", "bad --window %q", *window)
	}
	if !(*confidence > 0.5 && *confidence < 1) {
		return usageErrorf("use a value such as 0.95 or 0.99", "--confidence %v is out of range (want 0.5 < F < 1)", *confidence)
	}
	if *exactUpTo < 1 || *exactUpTo > metrics.MaxExactUpTo {
		return usageErrorf("use a count from 1 to 1000000: the largest number of requests (or runs, or steps) one window holds", "--exact-up-to %d is out of range", *exactUpTo)
	}
	if *minSamples < 0 {
		return usageErrorf("use 0 or more", "--min-samples %d is negative", *minSamples)
	}
	alerts, err := analyzeAlerts(ctx, *alertsFile, *alertFlags)
	if err != nil {
		return err
	}
	err = metrics.Rules(stdout, alerts, metrics.RuleOptions{Window: time.Duration(w), MinSamples: *minSamples, Confidence: *confidence, ExactUpTo: *exactUpTo})
	var um *metrics.UnsupportedMetricError
	if errors.As(err, &um) {
		return usageErrorf(um.Hint(), "%s", printable(um.Error()))
	}
	return err
}
