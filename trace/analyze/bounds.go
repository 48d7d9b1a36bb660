package analyze

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/mathext"
)

// DefaultConfidence is the one-sided confidence of the bounds and alerts
// when none is given (--confidence).
const DefaultConfidence = 0.95

// ExactBounds returns the one-sided Clopper–Pearson (exact binomial)
// bounds of a proportion seen as k successes in n trials, each at one-sided
// confidence conf: lower is the smallest p with P(X ≥ k | n, p) ≥ 1 − conf
// (0 when k is 0), upper the largest p with P(X ≤ k | n, p) ≥ 1 − conf (1
// when k is n). Unlike the Wilson score bound, whose error exceeds
// 1 − conf at small n, each bound errs with probability at most 1 − conf
// for every n: a rate alert gated on one fires at most that often when the
// true rate sits at its threshold. k is clamped to [0, n]; n <= 0 gives
// [0, 1]. conf must be in (0, 1).
func ExactBounds(k, n int64, conf float64) (lower, upper float64) {
	if n <= 0 {
		return 0, 1
	}
	k = max(0, min(k, n))
	alpha := 1 - conf
	kf, nf := float64(k), float64(n)
	lower, upper = 0, 1
	if k > 0 {
		// P(X ≥ k | p) = I_p(k, n−k+1): lower is its α quantile.
		lower = mathext.InvRegIncBeta(kf, nf-kf+1, alpha)
	}
	if k < n {
		// P(X ≤ k | p) = 1 − I_p(k+1, n−k): upper is its 1−α quantile.
		upper = mathext.InvRegIncBeta(kf+1, nf-kf, 1-alpha)
	}
	return lower, upper
}

// RateBounds is ExactBounds of the proportion p over n samples: its count
// of successes is p·n rounded (p is a ratio of whole counts, or read back
// from the analysis JSON), clamped to [0, n]. conf 0 means
// DefaultConfidence.
func RateBounds(p float64, n int64, conf float64) (lower, upper float64) {
	if conf == 0 {
		conf = DefaultConfidence
	}
	return ExactBounds(rateCount(p, n), n, conf)
}

// rateCount is the whole count behind the proportion p of n samples.
func rateCount(p float64, n int64) int64 {
	if n <= 0 || math.IsNaN(p) || p <= 0 {
		return 0
	}
	if p >= 1 {
		return n
	}
	return min(int64(math.Round(p*float64(n))), n)
}

// rateFires reports whether a rate alert of op and threshold t fires on k
// of n samples at one-sided confidence conf: the lower bound past t for >
// and >=, the upper bound for < and <=. It is the one gate EvaluateAlerts
// and CriticalCount share.
func rateFires(op string, k, n int64, t, conf float64) bool {
	lo, hi := ExactBounds(k, n, conf)
	if op == "<" || op == "<=" {
		return compare(op, hi, t)
	}
	return compare(op, lo, t)
}

// CriticalCount returns, for a rate alert of op and threshold t at
// one-sided confidence conf over n samples (n ≥ 1), the count at which its
// gate turns: for > and >= the smallest count k that fires (n+1 when none
// does), for < and <= the largest (−1 when none does). The gate is
// monotone in k, so an alert fires exactly on the counts at or past it:
// 'retrylab trace rules' compares a window's count with this, so that
// Prometheus fires on the counts analyze fires on.
func CriticalCount(op string, t float64, n int64, conf float64) int64 {
	if conf == 0 {
		conf = DefaultConfidence
	}
	// The gate is monotone in k: for > and >= it fires from some count on,
	// for < and <= up to some count. first is the first count at which it
	// is past that turn (n+1 when it never is).
	below := op == "<" || op == "<="
	first := int64(sort.Search(int(n)+1, func(k int) bool { return rateFires(op, int64(k), n, t, conf) != below }))
	if below {
		return first - 1 // the largest firing count, −1 when none fires
	}
	return first
}

// TailBound returns a closed-form upper bound on the probability that a
// rate alert of op and threshold t fires on k of n samples when the true
// rate is t: on P(X ≥ k | n, t) for > and >=, on P(X ≤ k | n, t) for < and
// <=. It is what 'retrylab trace rules' evaluates in PromQL, which has no
// incomplete beta, past the counts it tabulates exactly: an alert whose
// TailBound is below 1 − confidence has its exact gate firing too, so the
// rules never fire where analyze would not. It is +Inf where it does not
// apply (k on the near side of n·t).
//
// For > (the other side mirrors it with k → n−k, t → 1−t): the ratio of
// successive terms of the binomial upper tail, (n−j)t / ((j+1)(1−t)),
// falls with j, so the tail is at most its first term over 1 − r with
// r = (n−k)t / ((k+1)(1−t)), when r < 1. By Robbins' bounds on Stirling's
// formula, for 0 < k < n the first term is at most
// sqrt(n / (2π k (n−k))) · exp(−n·KL(k/n ‖ t)). At k = n the tail is t^n
// exactly. Near the gate, at large n, the bound exceeds the tail by about
// a quarter (φ(z)/z against the normal tail at z ≈ 1.645), so it turns a
// fraction of a standard deviation later than the exact gate.
func TailBound(op string, k, n int64, t float64) float64 {
	if op == "<" || op == "<=" {
		k, t = n-k, 1-t
	}
	switch {
	case n <= 0 || k <= 0 || k > n || t <= 0 || t >= 1:
		return math.Inf(1)
	case k == n:
		return math.Exp(float64(n) * math.Log(t))
	}
	kf, nf := float64(k), float64(n)
	r := (nf - kf) * t / ((kf + 1) * (1 - t))
	if r >= 1 {
		return math.Inf(1)
	}
	q := kf / nf
	kl := q*math.Log(q/t) + (1-q)*math.Log((1-q)/(1-t))
	return math.Sqrt(nf/(2*math.Pi*kf*(nf-kf))) * math.Exp(-nf*kl) / (1 - r)
}

// CriticalCounts returns CriticalCount(op, t, n, conf) for every n from 0
// to maxN (index n; at 0 it is 1 for > and >=, −1 for < and <=). It walks n
// upwards, the count moving on by a step at a time, so that a table of
// many n costs a few gate evaluations per n.
func CriticalCounts(op string, t float64, maxN int64, conf float64) []int64 {
	if conf == 0 {
		conf = DefaultConfidence
	}
	out := make([]int64, maxN+1)
	below := op == "<" || op == "<="
	c := int64(1)
	if below {
		c = -1
	}
	out[0] = c
	for n := int64(1); n <= maxN; n++ {
		// Both counts only grow with n: a bound of k of n+1 is past one of
		// k of n on the side the gate looks at.
		if below {
			for c+1 <= n && rateFires(op, c+1, n, t, conf) {
				c++
			}
		} else {
			for c <= n && !rateFires(op, c, n, t, conf) {
				c++
			}
		}
		out[n] = c
	}
	return out
}
