package analyze

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// withRetries is an analysis of n requests of which k had retries.
func withRetries(k, n int64) *Analysis {
	a := &Analysis{Schema: Schema}
	a.Requests.Total = n
	a.Requests.WithRetries = k
	if n > 0 {
		a.Metrics.ProviderRetryRate = float64(k) / float64(n)
	}
	return a
}

func rowOf(t *testing.T, c *Comparison, name string) CompareRow {
	t.Helper()
	for _, r := range c.Rows {
		if r.Metric == name {
			return r
		}
	}
	t.Fatalf("no row %q", name)
	return CompareRow{}
}

func TestCompareRetryRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		base, cur   *Analysis
		maxIncrease map[string]float64
		want        string
	}{
		{"doubled on 2000 requests", withRetries(100, 2000), withRetries(200, 2000), nil, VerdictRegression},
		{"doubled but within max-increase", withRetries(100, 2000), withRetries(200, 2000), map[string]float64{"provider_retry_rate": 0.06}, VerdictOK},
		{"doubled and past max-increase", withRetries(100, 2000), withRetries(200, 2000), map[string]float64{"provider_retry_rate": 0.04}, VerdictRegression},
		{"same rate", withRetries(100, 2000), withRetries(104, 2000), nil, VerdictOK},
		{"halved", withRetries(200, 2000), withRetries(100, 2000), nil, VerdictImproved},
		{"doubled on 20 requests", withRetries(2, 20), withRetries(4, 20), nil, VerdictTooFew},
		{"few events", withRetries(1, 1000), withRetries(3, 1000), nil, VerdictTooFew},
		{"empty", withRetries(0, 0), withRetries(0, 0), nil, VerdictTooFew},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(tt.base, tt.cur, CompareOptions{MaxIncrease: tt.maxIncrease})
			r := rowOf(t, c, "provider_retry_rate")
			if r.Verdict != tt.want {
				t.Fatalf("verdict %s (%s), want %s", r.Verdict, r.Reason, tt.want)
			}
			if (c.Regressions > 0) != (tt.want == VerdictRegression) {
				t.Fatalf("regressions = %d with verdict %s", c.Regressions, r.Verdict)
			}
		})
	}
}

func TestCompareRowsFollowMetricNames(t *testing.T) {
	t.Parallel()
	c := Compare(withRetries(1, 10), withRetries(1, 10), CompareOptions{})
	names := CompareRowNames()
	if len(c.Rows) != len(names) {
		t.Fatalf("%d rows, want %d", len(c.Rows), len(names))
	}
	for i, r := range c.Rows {
		if r.Metric != names[i] {
			t.Fatalf("row %d is %q, want %q", i, r.Metric, names[i])
		}
	}
}

// binomial draws the number of successes of n trials of probability p.
func binomial(rng *rand.Rand, n int64, p float64) int64 {
	var k int64
	for range n {
		if rng.Float64() < p {
			k++
		}
	}
	return k
}

// TestCompareNoiseSmallSamples: the same true rate on samples below the
// minimum never fails, whatever the draw.
func TestCompareNoiseSmallSamples(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 1))
	for i := range 2000 {
		n1, n2 := 1+rng.Int64N(29), 1+rng.Int64N(29)
		p := rng.Float64()
		c := Compare(withRetries(binomial(rng, n1, p), n1), withRetries(binomial(rng, n2, p), n2), CompareOptions{})
		if c.Regressions != 0 {
			t.Fatalf("draw %d: n=%d,%d p=%.3f: %d regressions: %+v", i, n1, n2, p, c.Regressions, rowOf(t, c, "provider_retry_rate"))
		}
	}
}

// TestCompareNoiseFalsePositiveRate: with the same true rate and samples
// large enough to test, the test flags at most about alpha of the draws.
func TestCompareNoiseFalsePositiveRate(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 2))
	const draws = 2000
	flagged := 0
	for range draws {
		n := 30 + rng.Int64N(300)
		p := 0.05 + 0.4*rng.Float64()
		c := Compare(withRetries(binomial(rng, n, p), n), withRetries(binomial(rng, n, p), n), CompareOptions{Alpha: 0.05})
		if c.Regressions != 0 {
			flagged++
		}
	}
	// Binomial(2000, 0.05) has mean 100 and sd < 10: 140 is 4 sd out.
	if flagged > 140 {
		t.Fatalf("%d of %d same-rate draws flagged at alpha 0.05", flagged, draws)
	}
	t.Logf("%d of %d same-rate draws flagged at alpha 0.05", flagged, draws)
}

// TestCompareRealRegressionPower: a doubled retry rate on 2,000 requests is
// flagged in nearly every draw.
func TestCompareRealRegressionPower(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 3))
	missed := 0
	for range 200 {
		c := Compare(withRetries(binomial(rng, 2000, 0.05), 2000), withRetries(binomial(rng, 2000, 0.10), 2000), CompareOptions{})
		if c.Regressions == 0 {
			missed++
		}
	}
	if missed > 2 {
		t.Fatalf("a doubled retry rate missed in %d of 200 draws", missed)
	}
	t.Logf("a doubled retry rate missed in %d of 200 draws", missed)
}

func TestCompareDistribution(t *testing.T) {
	t.Parallel()
	base, cur := withRetries(0, 100), withRetries(0, 100)
	for range 100 {
		base.DelayHist.add(300)
		cur.DelayHist.add(1500)
	}
	base.Attempts.DelayMs = Delays{Count: 100, Total: 30000, P50: 300, P90: 300, P99: 300, Max: 300}
	cur.Attempts.DelayMs = Delays{Count: 100, Total: 150000, P50: 1500, P90: 1500, P99: 1500, Max: 1500}
	c := Compare(base, cur, CompareOptions{})
	if r := rowOf(t, c, "delay_ms"); r.Verdict != VerdictRegression || r.Base != 300 || r.Current != 1500 {
		t.Fatalf("delay_ms: %+v", r)
	}
	if r := rowOf(t, c, "delay_ms_p90"); r.Verdict != VerdictNotTested || r.Delta != 1200 {
		t.Fatalf("delay_ms_p90: %+v", r)
	}
	c = Compare(base, base, CompareOptions{})
	if r := rowOf(t, c, "delay_ms"); r.Verdict != VerdictOK {
		t.Fatalf("same delays: %+v", r)
	}
	// From an analysis JSON file: no histogram, no test.
	jb, jc := *base, *cur
	jb.DelayHist, jc.DelayHist = Histogram{}, Histogram{}
	if r := rowOf(t, Compare(&jb, &jc, CompareOptions{}), "delay_ms"); r.Verdict != VerdictNotTested {
		t.Fatalf("no histogram: %+v", r)
	}
	// A percentile with a --max-increase.
	c = Compare(base, cur, CompareOptions{MaxIncrease: map[string]float64{"delay_ms_p90": 1000}})
	if r := rowOf(t, c, "delay_ms_p90"); r.Verdict != VerdictRegression {
		t.Fatalf("delay_ms_p90 past max: %+v", r)
	}
}

func TestParseMaxIncrease(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "x", "=1", "provider_retry_rate=", "provider_retry_rate=-1", "provider_retry_rate=NaN", "nope=0.1"} {
		if _, _, err := ParseMaxIncrease(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
	if n, v, err := ParseMaxIncrease("provider_retry_rate=0.05"); err != nil || n != "provider_retry_rate" || v != 0.05 {
		t.Fatalf("got %q %v %v", n, v, err)
	}
}

func FuzzParseMaxIncrease(f *testing.F) {
	f.Add("provider_retry_rate=0.05")
	f.Add("delay_ms_p90=1e3")
	f.Fuzz(func(t *testing.T, s string) {
		n, v, err := ParseMaxIncrease(s)
		if err == nil && (n == "" || v < 0 || v != v) {
			t.Fatalf("%q: accepted %q=%v", s, n, v)
		}
	})
}

// FuzzCompareAnalysisJSON: whatever two analysis documents hold, reading
// them never panics, and the comparison encodes as JSON (no NaN or Inf).
func FuzzCompareAnalysisJSON(f *testing.F) {
	f.Add([]byte(`{"schema":"retrylab.analysis/v1","requests":{"total":2000},"metrics":{"provider_retry_rate":0.05}}`),
		[]byte(`{"schema":"retrylab.analysis/v1","requests":{"total":2000},"metrics":{"provider_retry_rate":0.1}}`))
	f.Add([]byte(`{"schema":"retrylab.analysis/v1","requests":{"total":-3},"metrics":{"provider_retry_rate":1e308}}`),
		[]byte(`{"schema":"retrylab.analysis/v1","requests":{"total":9223372036854775807},"metrics":{"provider_retry_rate":-1e308},"attempts":{"delayMs":{"count":1,"total":-9223372036854775808,"p50":9223372036854775807}}}`))
	f.Add([]byte(`{"v":1}`), []byte(`{"schema":"retrylab.analysis/v1","groups":[{"total":"x"}]}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var sides [2]*Analysis
		for i, data := range [][]byte{a, b} {
			an, ok, err := ReadAnalysisJSON(data)
			if !ok || err != nil {
				an = &Analysis{Schema: Schema}
			}
			sides[i] = an
		}
		c := Compare(sides[0], sides[1], CompareOptions{})
		if _, err := json.Marshal(c); err != nil {
			t.Fatalf("comparison does not encode: %v", err)
		}
		n := 0
		for _, r := range c.Rows {
			if r.Verdict == VerdictRegression {
				n++
			}
		}
		if n != c.Regressions {
			t.Fatalf("%d regression rows, Regressions %d", n, c.Regressions)
		}
	})
}

// TestCompareDirectionFromRegistry: the registry says which way a metric
// regresses; a drop of a recovered or success rate is the regression.
func TestCompareDirectionFromRegistry(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"provider_retry_rate": "increase_is_bad", "recovered_rate": "decrease_is_bad",
		"retry_success_rate": "decrease_is_bad", "verification_pass_rate": "decrease_is_bad",
		"candidate_validity_rate": "decrease_is_bad", "time_to_recovery_p50": "increase_is_bad",
		"delay_ms_p50": "increase_is_bad",
	} {
		if got := newRow(name, 0.5, 0.4, 100, 100).Direction; got != want {
			t.Errorf("%s: direction %s, want %s", name, got, want)
		}
	}
}
