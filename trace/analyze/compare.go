package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// CompareSchema is the "schema" of a Comparison.
const CompareSchema = "retrylab.compare/v1"

// Verdicts of a compared row.
const (
	VerdictRegression = "regression" // significant (and past --max-increase when given)
	VerdictOK         = "ok"         // tested, no regression
	VerdictNotTested  = "not_tested" // no test applies (not a rate, or no raw samples)
	VerdictTooFew     = "too_few"    // a test applies but samples are below the minimum
	VerdictImproved   = "improved"   // significant change in the good direction
)

// CompareOptions control Compare.
type CompareOptions struct {
	// Alpha is the significance level of the one-sided tests (default 0.05).
	Alpha float64
	// MinSamples is the fewest samples on each side for a test to run
	// (default 30); below, a row is too_few and never a regression.
	MinSamples int64
	// MaxIncrease maps a row's metric name to the largest absolute increase
	// (in the bad direction) that is not a regression.
	MaxIncrease map[string]float64
}

// Comparison is the result of Compare (schema retrylab.compare/v1).
type Comparison struct {
	Schema      string       `json:"schema"`
	Alpha       float64      `json:"alpha"`
	MinSamples  int64        `json:"minSamples"`
	Base        CompareSide  `json:"base"`
	Current     CompareSide  `json:"current"`
	Rows        []CompareRow `json:"rows"`
	Regressions int          `json:"regressions"`
}

// CompareSide describes one side of a comparison.
type CompareSide struct {
	// From is "traces" (run folders or trace files were analysed) or
	// "analysis" (an analysis JSON file was read: no histograms, and the
	// samples of metrics whose denominators it does not carry are 0).
	From     string `json:"from"`
	Files    int    `json:"files"`
	Runs     int    `json:"runs"`
	Requests int64  `json:"requests"`
}

func sideOf(a *Analysis) CompareSide {
	from := "traces"
	if a.FromJSON {
		from = "analysis"
	}
	return CompareSide{From: from, Files: a.Inputs.Files, Runs: a.Inputs.Runs, Requests: a.Requests.Total}
}

// CompareRow is one metric side by side.
type CompareRow struct {
	Metric      string   `json:"metric"`
	Kind        string   `json:"kind"`      // rate, mean, percentile, distribution
	Direction   string   `json:"direction"` // increase_is_bad or decrease_is_bad
	Base        float64  `json:"base"`
	Current     float64  `json:"current"`
	Delta       float64  `json:"delta"` // current - base
	BaseN       int64    `json:"baseSamples"`
	CurrentN    int64    `json:"currentSamples"`
	Test        string   `json:"test"`        // two_proportion_z, mann_whitney_binned, none
	Z           *float64 `json:"z,omitempty"` // test statistic, oriented so that > 0 is bad
	P           *float64 `json:"p,omitempty"` // one-sided p-value of a bad change
	MaxIncrease *float64 `json:"maxIncrease,omitempty"`
	Verdict     string   `json:"verdict"`
	Reason      string   `json:"reason"`
}

// higherIsBetter reports whether a decrease of the metric is the
// regression: the registry's HigherIsBetter metrics (recovered, success,
// validity and pass rates). Every other metric — failure and retry rates,
// escalation rates, repair iterations, delays, durations, times to
// recovery — regresses when it increases.
func higherIsBetter(name string) bool {
	d, ok := LookupMetric(name)
	return ok && d.HigherIsBetter
}

// CompareRowNames lists the rows Compare produces, in order: every metric
// of MetricNames, then the delay and duration percentiles and the two
// distributions. --max-increase takes these names.
func CompareRowNames() []string {
	names := slices.Clone(MetricNames)
	for _, d := range []string{"delay_ms", "duration_ms"} {
		names = append(names, d+"_p50", d+"_p90", d+"_p99", d)
	}
	return names
}

// Compare sets the metrics of base and current side by side.
//
// The rule, per row:
//   - a rate (Analysis.Metric says rate) is tested with a one-sided
//     two-proportion z-test (pooled), in its bad direction; it runs only when
//     both sides have at least MinSamples samples and the pooled proportion
//     gives at least 5 expected successes and 5 expected failures on each
//     side (the normal approximation's rule of thumb); else too_few;
//   - a distribution (delay_ms, duration_ms) is tested with a one-sided
//     Mann–Whitney U test on the histogram buckets (ties within a bucket,
//     tie-corrected normal approximation), when both sides carry histograms
//     (trace input; an analysis JSON file has none) and MinSamples samples;
//   - a distribution row shows the mean (ms; 0 for durations read from an
//     analysis JSON file, which holds no mean duration);
//   - a percentile or a mean (avg_repair_iterations) is not tested: only its
//     delta is shown;
//   - a row is a regression when its test is significant (p < Alpha) and,
//     when a MaxIncrease is given for it, the change in the bad direction
//     exceeds it; a row without a test is a regression only when a
//     MaxIncrease is given for it, both sides have MinSamples samples, and
//     the change exceeds it.
func Compare(base, cur *Analysis, opts CompareOptions) *Comparison {
	if opts.Alpha <= 0 || opts.Alpha >= 1 {
		opts.Alpha = 0.05
	}
	if opts.MinSamples <= 0 {
		opts.MinSamples = 30
	}
	c := &Comparison{Schema: CompareSchema, Alpha: opts.Alpha, MinSamples: opts.MinSamples, Rows: []CompareRow{},
		Base: sideOf(base), Current: sideOf(cur)}
	for _, name := range MetricNames {
		bv, bn, rate, ok1 := base.Metric(name)
		cv, cn, _, ok2 := cur.Metric(name)
		if !ok1 || !ok2 {
			continue
		}
		r := newRow(name, bv, cv, bn, cn)
		if rate {
			r.Kind = "rate"
			r.Test = "two_proportion_z"
			z, ok := twoProportionZ(bv, bn, cv, cn, opts.MinSamples)
			if ok {
				if r.Direction == "decrease_is_bad" {
					z = -z
				}
				r.setP(z, upperTail(z))
			}
		} else {
			r.Kind = "mean"
		}
		c.add(r, opts)
	}
	pcts := []struct {
		name string
		b, c Quantiles
		bn   int64
		cn   int64
		bh   Histogram
		ch   Histogram
		// the mean, shown on the distribution row
		bmean, cmean float64
	}{
		{"delay_ms", Quantiles{base.Attempts.DelayMs.P50, base.Attempts.DelayMs.P90, base.Attempts.DelayMs.P99, base.Attempts.DelayMs.Max},
			Quantiles{cur.Attempts.DelayMs.P50, cur.Attempts.DelayMs.P90, cur.Attempts.DelayMs.P99, cur.Attempts.DelayMs.Max},
			base.Attempts.DelayMs.Count, cur.Attempts.DelayMs.Count, base.DelayHist, cur.DelayHist,
			meanOf(base.Attempts.DelayMs.Total, base.Attempts.DelayMs.Count), meanOf(cur.Attempts.DelayMs.Total, cur.Attempts.DelayMs.Count)},
		{"duration_ms", base.Requests.DurationMs, cur.Requests.DurationMs, base.Requests.Total, cur.Requests.Total, base.DurationHist, cur.DurationHist,
			meanOf(base.DurationHist.SumMs, base.DurationHist.total()), meanOf(cur.DurationHist.SumMs, cur.DurationHist.total())},
	}
	for _, p := range pcts {
		for _, q := range []struct {
			s    string
			b, c int64
		}{{"p50", p.b.P50, p.c.P50}, {"p90", p.b.P90, p.c.P90}, {"p99", p.b.P99, p.c.P99}} {
			r := newRow(p.name+"_"+q.s, float64(q.b), float64(q.c), p.bn, p.cn)
			r.Kind = "percentile"
			c.add(r, opts)
		}
		r := newRow(p.name, p.bmean, p.cmean, p.bn, p.cn)
		r.Kind = "distribution"
		r.Test = "mann_whitney_binned"
		bt, ct := p.bh.total(), p.ch.total()
		switch {
		case base.FromJSON || cur.FromJSON || bt == 0 && p.bn > 0 || ct == 0 && p.cn > 0:
			r.Test = "none" // an analysis JSON file: no raw samples
		case bt >= opts.MinSamples && ct >= opts.MinSamples:
			if z, ok := mannWhitneyZ(&p.bh, &p.ch); ok {
				r.setP(z, upperTail(z))
			}
		}
		c.add(r, opts)
	}
	return c
}

func meanOf(sum, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return round6(float64(sum) / float64(n))
}

// finite is f, or 0 for NaN and ±Inf (which JSON cannot carry).
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

func newRow(name string, b, c float64, bn, cn int64) CompareRow {
	b, c = finite(b), finite(c)
	r := CompareRow{Metric: name, Base: b, Current: c, Delta: finite(sig(c-b, 12)), BaseN: bn, CurrentN: cn,
		Test: "none", Direction: "increase_is_bad"}
	if higherIsBetter(name) {
		r.Direction = "decrease_is_bad"
	}
	return r
}

func (r *CompareRow) setP(z, p float64) {
	z = round6(z)
	p = sig(p, 4)
	r.Z, r.P = &z, &p
}

// round6 keeps the JSON output stable across platforms' last-bit float
// differences.
func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// badChange is the change in the bad direction (positive = worse).
func (r *CompareRow) badChange() float64 {
	if r.Direction == "decrease_is_bad" {
		return -r.Delta
	}
	return r.Delta
}

func (c *Comparison) add(r CompareRow, opts CompareOptions) {
	max, hasMax := opts.MaxIncrease[r.Metric]
	if hasMax {
		r.MaxIncrease = &max
	}
	enough := r.BaseN >= opts.MinSamples && r.CurrentN >= opts.MinSamples
	fmtP := func() string { return strconv.FormatFloat(*r.P, 'g', 3, 64) }
	switch {
	case r.Test != "none" && r.P == nil:
		r.Verdict = VerdictTooFew
		r.Reason = fmt.Sprintf("not tested: too few samples (base %d, current %d; the minimum is %d each, and 5 expected events each way for a rate)", r.BaseN, r.CurrentN, opts.MinSamples)
	case r.P != nil && *r.P < opts.Alpha && hasMax && r.badChange() <= max:
		r.Verdict = VerdictOK
		r.Reason = fmt.Sprintf("significant (p=%s) but the increase %s is within --max-increase %s", fmtP(), fmtNum(r.badChange()), fmtNum(max))
	case r.P != nil && *r.P < opts.Alpha:
		r.Verdict = VerdictRegression
		r.Reason = fmt.Sprintf("significant increase: p=%s < alpha %s", fmtP(), fmtNum(opts.Alpha))
		if r.Direction == "decrease_is_bad" {
			r.Reason = fmt.Sprintf("significant decrease: p=%s < alpha %s", fmtP(), fmtNum(opts.Alpha))
		}
		if hasMax {
			r.Reason += fmt.Sprintf(", and the change %s is past --max-increase %s", fmtNum(r.badChange()), fmtNum(max))
		}
	case r.P != nil && 1-*r.P < opts.Alpha:
		r.Verdict = VerdictImproved
		r.Reason = fmt.Sprintf("significant improvement (p=%s)", strconv.FormatFloat(1-*r.P, 'g', 3, 64))
	case r.P != nil:
		r.Verdict = VerdictOK
		r.Reason = fmt.Sprintf("no significant change (p=%s)", fmtP())
	case hasMax && !enough:
		r.Verdict = VerdictTooFew
		r.Reason = fmt.Sprintf("not tested: too few samples for --max-increase (base %d, current %d; minimum %d)", r.BaseN, r.CurrentN, opts.MinSamples)
	case hasMax && r.badChange() > max:
		r.Verdict = VerdictRegression
		r.Reason = fmt.Sprintf("not tested statistically; the change %s is past --max-increase %s", fmtNum(r.badChange()), fmtNum(max))
	case hasMax:
		r.Verdict = VerdictOK
		r.Reason = fmt.Sprintf("not tested statistically; within --max-increase %s", fmtNum(max))
	default:
		r.Verdict = VerdictNotTested
		switch r.Kind {
		case "distribution":
			r.Reason = "not tested: no raw samples (an analysis JSON file holds no histogram)"
		case "percentile":
			r.Reason = "not tested: delta only (see the distribution row)"
		default:
			r.Reason = "not tested: not a proportion; delta only"
		}
	}
	if r.Verdict == VerdictRegression {
		c.Regressions++
	}
	c.Rows = append(c.Rows, r)
}

// sig rounds f to d significant digits.
func sig(f float64, d int) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', d, 64), 64)
	return v
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', 4, 64) }

// twoProportionZ is the pooled two-proportion z statistic of p2 (n2) over
// p1 (n1): positive when p2 is larger. ok is false when the test does not
// apply (samples below min, or fewer than 5 expected events either way).
func twoProportionZ(p1 float64, n1 int64, p2 float64, n2 int64, min int64) (z float64, ok bool) {
	if n1 < min || n2 < min || n1 <= 0 || n2 <= 0 {
		return 0, false
	}
	x1 := math.Round(clamp01(p1) * float64(n1))
	x2 := math.Round(clamp01(p2) * float64(n2))
	f1, f2 := float64(n1), float64(n2)
	p := (x1 + x2) / (f1 + f2)
	for _, n := range []float64{f1, f2} {
		if n*p < 5 || n*(1-p) < 5 {
			return 0, false
		}
	}
	se := math.Sqrt(p * (1 - p) * (1/f1 + 1/f2))
	if se == 0 {
		return 0, false
	}
	return (x2/f2 - x1/f1) / se, true
}

func clamp01(p float64) float64 {
	if math.IsNaN(p) {
		return 0
	}
	return math.Max(0, math.Min(1, p))
}

func (h *Histogram) total() int64 {
	var t int64
	for _, c := range h.Counts {
		t += c
	}
	return t
}

// mannWhitneyZ is the tie-corrected normal approximation of the
// Mann–Whitney U statistic of cur over base, on binned values (every value
// in a bucket is a tie): positive when cur tends to be larger.
func mannWhitneyZ(base, cur *Histogram) (float64, bool) {
	n1, n2 := float64(base.total()), float64(cur.total())
	if n1 == 0 || n2 == 0 {
		return 0, false
	}
	n := n1 + n2
	var below, rankSum2, ties float64
	for i := range base.Counts {
		b, c := float64(base.Counts[i]), float64(cur.Counts[i])
		t := b + c
		if t == 0 {
			continue
		}
		mid := below + (t+1)/2 // mean rank of the bucket
		rankSum2 += c * mid
		ties += t*t*t - t
		below += t
	}
	u2 := rankSum2 - n2*(n2+1)/2
	mu := n1 * n2 / 2
	v := n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1)))
	if v <= 0 { // every value in one bucket: no difference to see
		return 0, true
	}
	return (u2 - mu) / math.Sqrt(v), true
}

// upperTail is 1-Φ(z), accurate far in the tail.
func upperTail(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// ParseMaxIncrease parses "metric=0.05" for --max-increase.
func ParseMaxIncrease(s string) (string, float64, error) {
	name, val, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", 0, fmt.Errorf("--max-increase %q: want METRIC=VALUE, e.g. provider_retry_rate=0.05", s)
	}
	if !slices.Contains(CompareRowNames(), name) {
		return "", 0, fmt.Errorf("--max-increase %q: unknown metric %q (known: %s)", s, name, strings.Join(CompareRowNames(), ", "))
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return "", 0, fmt.Errorf("--max-increase %q: %q is not a non-negative number", s, val)
	}
	return name, f, nil
}

// MaxAnalysisJSON is the largest analysis JSON file ReadAnalysisJSON reads.
const MaxAnalysisJSON = 64 << 20

// ReadAnalysisJSON decodes an analysis JSON document (schema
// retrylab.analysis/v1, as `trace analyze --format json` writes it). ok is
// false, with no error, when data is not one JSON object of that schema
// (a trace file, say); err is set when it is that schema but malformed.
func ReadAnalysisJSON(data []byte) (a *Analysis, ok bool, err error) {
	var head struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(data, &head) != nil || head.Schema != Schema {
		return nil, false, nil
	}
	a = &Analysis{}
	if err := json.Unmarshal(data, a); err != nil {
		return nil, true, fmt.Errorf("an analysis JSON (%s) that does not decode: %w", Schema, err)
	}
	a.FromJSON = true
	a.Confidence = DefaultConfidence
	for _, name := range MetricNames {
		v, n, rate, _ := a.Metric(name)
		switch {
		case n < 0:
			return nil, true, fmt.Errorf("the samples of %s are negative (%d)", name, n)
		case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
			return nil, true, fmt.Errorf("metrics.%s is %v, not a non-negative number", name, v)
		case rate && v > 1:
			return nil, true, fmt.Errorf("metrics.%s is %v, a rate above 1", name, v)
		}
	}
	d := a.Attempts.DelayMs
	if d.Count < 0 || d.Total < 0 || d.P50 < 0 || d.P90 < 0 || d.P99 < 0 || d.Max < 0 {
		return nil, true, fmt.Errorf("attempts.delayMs holds a negative value")
	}
	q := a.Requests.DurationMs
	if q.P50 < 0 || q.P90 < 0 || q.P99 < 0 || q.Max < 0 {
		return nil, true, fmt.Errorf("requests.durationMs holds a negative value")
	}
	return a, true, nil
}
