package probe

import (
	"fmt"
	"math"
	"slices"
)

// family is a known jitter form: the band [a, b] of wait ÷ nominal it
// draws from (uniformly), and its name in the policy YAML.
type family struct {
	name     string  // none, sdk, equal, full, proportional
	a, b     float64 // the band
	fraction float64 // proportional only
}

// families are the jitter forms of the retry core (retry.Jitter), with the
// proportional fractions clients use; decorrelated jitter is not a band of
// the nominal wait and is not recognised.
var families = []family{
	{name: "none", a: 1, b: 1},
	{name: "sdk", a: 0.75, b: 1},
	{name: "equal", a: 0.5, b: 1},
	{name: "full", a: 0, b: 1},
	{name: "proportional", a: 0.9, b: 1.1, fraction: 0.1},
	{name: "proportional", a: 0.8, b: 1.2, fraction: 0.2},
	{name: "proportional", a: 0.75, b: 1.25, fraction: 0.25},
	{name: "proportional", a: 0.7, b: 1.3, fraction: 0.3}, // Gemini CLI
	{name: "additive", a: 1, b: 1.25, fraction: 0.25},
	{name: "additive", a: 1, b: 2, fraction: 1},
}

func (fm family) String() string {
	switch fm.name {
	case "proportional":
		return fmt.Sprintf("proportional ±%.0f%%", 100*fm.fraction)
	case "additive":
		return fmt.Sprintf("additive +%.0f%%", 100*fm.fraction)
	}
	return fm.name
}

// draw is one wait scaled to the first retry, as the interval its true
// value lies in: lateness only lengthens a wait, and by at most the noise
// measured around it, so the nominal × jitter draw is in [lo, hi].
type draw struct{ lo, hi float64 }

// drawsOf are the waits before the cap as draws.
func drawsOf(ls []level, mult float64) []draw {
	var ds []draw
	for _, l := range ls {
		sc := math.Pow(mult, float64(l.k))
		for i, w := range l.raw {
			ds = append(ds, draw{lo: max(0, w-l.nz[i]) / sc, hi: w / sc})
		}
	}
	return ds
}

// widened are the draws as a wait measured short would have them: the
// mock stamps an attempt's end when the proxy's close reaches it, late
// under load, so a server gap may also fall short of the client's wait by
// about the noise measured around it (measured: the Python SDKs' 375–500
// ms read as 370–458 ms at load 22 on 2 cores, their 500 ms as 400 ms).
func widened(ds []draw, ls []level, mult float64) []draw {
	out := slices.Clone(ds)
	i := 0
	for _, l := range ls {
		sc := math.Pow(mult, float64(l.k))
		for j := range l.raw {
			out[i].hi += l.nz[j] / sc
			i++
		}
	}
	return out
}

// band is the narrowest band [lo, hi] that holds a point of every draw's
// interval: a single point (the one nearest c) when they all overlap.
func band(ds []draw, c float64) (lo, hi float64) {
	minHi, maxLo := math.Inf(1), 0.0
	for _, d := range ds {
		minHi, maxLo = min(minHi, d.hi), max(maxLo, d.lo)
	}
	if maxLo <= minHi {
		p := min(max(c, maxLo), minHi)
		return p, p
	}
	return minHi, maxLo
}

// fitFamily picks the round nominal wait c and the jitter form that
// explain the draws best: every draw's interval reaching into the form's
// band widened by 3%, and the lowest and highest draws where n uniform
// draws would put them (a gap of (b − a)/(n + 1) from each end), each as
// near as its interval allows. On a tie the narrower band (in ms) wins: a
// band the noise hides is not called jitter; two forms of one band (1–2 s
// is 1 s + up to 100% or 2 s with equal jitter) keep the lower nominal. ok
// is false when no form contains the draws. margin is how much worse the
// best fit with another nominal is (0 when there is none): a small margin
// is a close call.
func fitFamily(ds []draw) (c float64, fm family, margin float64, ok bool) {
	minLo, minHi, maxLo, maxHi := math.Inf(1), math.Inf(1), 0.0, 0.0
	for _, d := range ds {
		minLo, minHi = min(minLo, d.lo), min(minHi, d.hi)
		maxLo, maxHi = max(maxLo, d.lo), max(maxHi, d.hi)
	}
	n := float64(len(ds))
	best, second := math.Inf(1), math.Inf(1)
	const eps = 1e-9
	for _, cand := range roundValues(0.45*maxLo, 2.2*maxHi) {
		for _, f := range families {
			if maxLo/cand > f.b+0.03 || minHi/cand < f.a-0.03 {
				continue
			}
			g := (f.b - f.a) / (n + 1)
			// In units of the form's longest wait, so that two forms of one
			// band score alike.
			score := (dist(f.a+g, minLo/cand, minHi/cand) + dist(f.b-g, maxLo/cand, maxHi/cand)) / f.b
			switch {
			case score < best-eps || (score < best+eps && ok && (f.b-f.a)*cand < (fm.b-fm.a)*c-eps):
				if cand != c && score < best-eps {
					second = best
				}
				best, c, fm, ok = score, cand, f, true
			case score < second && cand != c:
				second = score
			}
		}
	}
	if ok && !math.IsInf(second, 1) {
		margin = second - best
	}
	return c, fm, margin, ok
}

// dist is how far x is from the interval [lo, hi] (0 inside).
func dist(x, lo, hi float64) float64 {
	switch {
	case x < lo:
		return lo - x
	case x > hi:
		return x - hi
	}
	return 0
}

// roundValues are the round values (1, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 8 ×
// 10ⁿ) in [lo, hi].
func roundValues(lo, hi float64) []float64 {
	// Below a microsecond a wait is 0 (and 10^⌊log10 lo⌋ may be 0 itself,
	// which would never grow); an infinite hi would never end.
	if lo <= 0 || hi < lo || math.IsInf(hi, 0) || math.IsNaN(hi) {
		return nil
	}
	if lo = max(lo, 1e-3); hi < lo {
		return nil
	}
	var out []float64
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for _, s := range roundSteps[:len(roundSteps)-1] {
			if v := s * p; v >= lo && v <= hi {
				out = append(out, v)
			}
		}
	}
	return out
}
