package analyze

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// TestExactBounds holds ExactBounds to published Clopper–Pearson values
// (R's binom.test, and the closed forms at k = 0 and k = n).
func TestExactBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		k, n     int64
		conf     float64
		lo, hi   float64
		tolLo    float64
		closedHi bool
	}{
		// binom.test(20, 100)$conf.int: 0.1266556 0.2918427 (two-sided 95 %,
		// so one-sided 97.5 % each).
		{name: "R binom.test(20, 100)", k: 20, n: 100, conf: 0.975, lo: 0.126655552101955877, hi: 0.291842689088628076},
		// Computed with mpmath to 30 digits (the regularized incomplete
		// beta, bisected).
		{name: "20 of 100 at 95%", k: 20, n: 100, conf: 0.95, lo: 0.136661325245867250, hi: 0.277200249670913630},
		{name: "1 of 5", k: 1, n: 5, conf: 0.95, lo: 0.0102062183130114963, hi: 0.657408318001138617},
		{name: "120 of 400", k: 120, n: 400, conf: 0.95, lo: 0.262255979343632567},
		// k = n: the lower bound solves p^n = α; k = 0: (1−p)^n = α.
		{name: "1 of 1", k: 1, n: 1, conf: 0.95, lo: 0.05, hi: 1},
		{name: "20 of 20", k: 20, n: 20, conf: 0.95, lo: math.Pow(0.05, 1.0/20), hi: 1},
		{name: "0 of 20", k: 0, n: 20, conf: 0.95, lo: 0, hi: 1 - math.Pow(0.05, 1.0/20)},
		{name: "no samples", k: 0, n: 0, conf: 0.95, lo: 0, hi: 1},
		{name: "count above n is n", k: 7, n: 5, conf: 0.95, lo: math.Pow(0.05, 1.0/5), hi: 1},
		{name: "negative count is 0", k: -3, n: 5, conf: 0.95, lo: 0, hi: 1 - math.Pow(0.05, 1.0/5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := ExactBounds(tt.k, tt.n, tt.conf)
			if math.Abs(lo-tt.lo) > 1e-12 {
				t.Errorf("lower = %.17g, want %.17g", lo, tt.lo)
			}
			if tt.hi != 0 && math.Abs(hi-tt.hi) > 1e-12 {
				t.Errorf("upper = %.17g, want %.17g", hi, tt.hi)
			}
		})
	}
}

// binomTail is P(X ≥ k) for X ~ Binomial(n, p), summed term by term in log
// space: independent of the inverse incomplete beta the gate uses.
func binomTail(k, n int64, p float64) float64 {
	if k <= 0 {
		return 1
	}
	lgn, _ := math.Lgamma(float64(n) + 1)
	var s float64
	for j := k; j <= n; j++ {
		a, _ := math.Lgamma(float64(j) + 1)
		b, _ := math.Lgamma(float64(n-j) + 1)
		s += math.Exp(lgn - a - b + float64(j)*math.Log(p) + float64(n-j)*math.Log1p(-p))
	}
	return s
}

// binomUpper is P(X ≥ k | n, p) from the regularized incomplete beta.
func binomUpper(k, n int64, p float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	}
	return mathext.RegIncBeta(float64(k), float64(n-k+1), p)
}

// binomLower is P(X ≤ k | n, p).
func binomLower(k, n int64, p float64) float64 { return binomUpper(n-k, n, 1-p) }

// numTol is the slack allowed for the floating-point evaluation of a tail
// that sits exactly at α (a threshold of 0.05 at n = 1 fires on 1 of 1
// with probability exactly 0.05): a relative 1e-9, far below anything a
// sample could show.
const numTol = 1e-9

// TestGateKeepsItsErrorRate is the property the gate exists for: for every
// n from 1 to 1000 and thresholds across (0, 1), the smallest count that
// fires a > (or >=) alert has P(X ≥ k | p = threshold) ≤ 1 − confidence,
// and one count fewer would not (the gate is exact, not just safe); the
// same for < and <= with the lower tail. The default alerts' thresholds
// are checked at every n through EvaluateAlerts itself.
func TestGateKeepsItsErrorRate(t *testing.T) {
	t.Parallel()
	const maxN = 1000
	thresholds := []float64{0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 0.95, 0.999}
	rng := rand.New(rand.NewPCG(27, 2026))
	for range 4 {
		thresholds = append(thresholds, rng.Float64())
	}
	step := int64(1)
	if testing.Short() {
		step = 7
	}
	for _, conf := range []float64{0.95, 0.99} {
		alpha := 1 - conf
		for _, th := range thresholds {
			for _, op := range []string{">", ">=", "<", "<="} {
				for n := int64(1); n <= maxN; n += step {
					k := CriticalCount(op, th, n, conf)
					var at, before float64 // P(fire) at the threshold, and with one more count allowed
					if op == ">" || op == ">=" {
						at, before = binomUpper(k, n, th), binomUpper(k-1, n, th)
					} else {
						at, before = binomLower(k, n, th), binomLower(k+1, n, th)
						if k < 0 {
							at = 0
						}
					}
					if at > alpha*(1+numTol) {
						t.Fatalf("conf %v, rate %s %v, n %d: fires from count %d, which happens with probability %v at the threshold, more than %v", conf, op, th, n, k, at, alpha)
					}
					if before <= alpha*(1-numTol) && k >= 0 && k <= n {
						t.Fatalf("conf %v, rate %s %v, n %d: does not fire at the next count beyond %d, yet P = %v ≤ %v there: the gate is looser than exact", conf, op, th, n, k, before, alpha)
					}
				}
			}
		}
	}
}

// TestDefaultAlertsGate runs the property through EvaluateAlerts on the
// three default rate alerts, at every n up to 1000: the smallest firing
// count's tail at the threshold (summed independently) is at most 5 %.
func TestDefaultAlertsGate(t *testing.T) {
	t.Parallel()
	alerts := DefaultAlerts()
	for _, al := range alerts {
		if !isRateMetric(al.Metric) {
			continue
		}
		th := *al.Threshold
		for n := int64(1); n <= 1000; n++ {
			fires := func(k int64) bool {
				a := analysisWith(al.Metric, k, n)
				rs, err := EvaluateAlerts(a, []Alert{al}, 1)
				if err != nil {
					t.Fatal(err)
				}
				return rs[0].State == StateFiring
			}
			k := CriticalCount(al.Op, th, n, DefaultConfidence)
			if k <= n && !fires(k) || k > 0 && fires(k-1) {
				t.Fatalf("%s, n %d: EvaluateAlerts does not turn at the critical count %d", al.Name, n, k)
			}
			if p := binomTail(k, n, th); k <= n && p > 0.05*(1+numTol) {
				t.Fatalf("%s > %v, n %d: fires from %d of %d, probability %v at the threshold", al.Name, th, n, k, n, p)
			}
		}
	}
}

// TestGatePower: the clear cases the alerts exist for still fire.
func TestGatePower(t *testing.T) {
	t.Parallel()
	tests := []struct {
		metric string
		k, n   int64
	}{
		{"provider_retry_rate", 20, 20},   // every request retried
		{"provider_retry_rate", 120, 400}, // 30 % of 400 at 0.2
		{"diagnosis_rate", 100, 400},      // 25 % of 400 steps diagnosed at 0.1
		{"l2_escalation_rate", 8, 10},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %d of %d", tt.metric, tt.k, tt.n), func(t *testing.T) {
			rs, err := EvaluateAlerts(analysisWith(tt.metric, tt.k, tt.n), DefaultAlerts(), 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if r.Metric == tt.metric && r.State != StateFiring {
					t.Errorf("%s: %s (lower %v), want firing", r.Name, r.State, r.Lower)
				}
			}
		})
	}
}

// TestFalseFireRate measures what the issue measured of the Wilson gate:
// the probability that a default alert fires when the true rate is at its
// threshold. Each is at most 5 %.
func TestFalseFireRate(t *testing.T) {
	t.Parallel()
	for _, al := range DefaultAlerts() {
		if !isRateMetric(al.Metric) {
			continue
		}
		for _, n := range []int64{1, 2, 3, 6, 20, 100, 1000} {
			k := CriticalCount(al.Op, *al.Threshold, n, DefaultConfidence)
			if p := binomTail(k, n, *al.Threshold); p > 0.05*(1+numTol) {
				t.Errorf("%s at n = %d fires with probability %.4f at its threshold", al.Name, n, p)
			}
		}
	}
}

func isRateMetric(m string) bool {
	d, ok := LookupMetric(m)
	return ok && d.IsRate()
}

// analysisWith is an analysis whose metric is k of n.
func analysisWith(metric string, k, n int64) *Analysis {
	a := &Analysis{Confidence: DefaultConfidence}
	p := float64(k) / float64(n)
	switch metric {
	case "provider_retry_rate":
		a.Requests.Total, a.Metrics.ProviderRetryRate = n, p
	case "l2_escalation_rate":
		a.Counts.L2Runs, a.Metrics.L2EscalationRate = int(n), p
	case "diagnosis_rate":
		a.Counts.StepFinished, a.Metrics.DiagnosisRate = n, p
	default:
		panic("analysisWith: no metric " + metric)
	}
	return a
}

// TestTailBoundIsABound: the closed form 'trace rules' uses past its table
// is never below the exact tail, on counts around the gate and far from
// it, on both sides, small n and large.
func TestTailBoundIsABound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 27))
	for range 3000 {
		n := int64(1 + rng.IntN(20000))
		th := rng.Float64()
		op := []string{">", "<"}[rng.IntN(2)]
		// Counts within a few standard deviations of the gate, where it matters.
		sd := math.Sqrt(float64(n) * th * (1 - th))
		k := CriticalCount(op, th, n, 0.95) + int64(math.Round((rng.Float64()-0.5)*6*sd))
		k = max(0, min(k, n))
		exact := binomUpper(k, n, th)
		if op == "<" {
			exact = binomLower(k, n, th)
		}
		if b := TailBound(op, k, n, th); b < exact*(1-numTol) {
			t.Fatalf("TailBound(%s, %d, %d, %v) = %v, below the exact tail %v", op, k, n, th, b, exact)
		}
	}
}

// TestCriticalCounts: the walk agrees with the binary search at every n.
func TestCriticalCounts(t *testing.T) {
	t.Parallel()
	for _, op := range []string{">", ">=", "<", "<="} {
		for _, th := range []float64{0.001, 0.1, 0.2, 0.3, 0.5, 0.97} {
			cs := CriticalCounts(op, th, 600, 0.95)
			for n := int64(1); n < int64(len(cs)); n++ {
				if want := CriticalCount(op, th, n, 0.95); cs[n] != want {
					t.Fatalf("CriticalCounts(%s, %v)[%d] = %d, CriticalCount says %d", op, th, n, cs[n], want)
				}
			}
		}
	}
}
