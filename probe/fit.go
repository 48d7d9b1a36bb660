package probe

import (
	"fmt"
	"math"
	"slices"
)

// Fit is the backoff fitted to the waits of repeated exhaustion runs.
// A nil figure could not be told; Confidence and Inconclusive (keyed by
// the figure's JSON path) say how sure the others are and why the nil
// ones are nil.
type Fit struct {
	Backoff      Backoff
	family       family // the jitter form fitted, when one fits
	Nested       NestedLoops
	Confidence   map[string]Confidence
	Inconclusive []Inconclusive
	// FirstLo, FirstHi bound the first wait of the backoff as observed
	// (noise included): a Retry-After inside it cannot be told from it.
	FirstLo, FirstHi float64
}

const (
	figInitial    = "policy.backoff.initialMs"
	figMultiplier = "policy.backoff.multiplier"
	figMax        = "policy.backoff.maxMs"
	figJitter     = "policy.backoff.jitter"
	// growth is the smallest ratio between two levels that counts as growth
	// (a −25% jitter alone gives ratios from 0.75 to 1.33 around 1, but
	// levels are means over samples, which narrows that).
	growth = 1.25
	// noiseShare is the largest share of a wait the measured noise may
	// take before the wait cannot be used.
	noiseShare = 0.25
)

// FitBackoff fits min(initial × multiplier^k, max) × jitter to waits[s][k],
// the k-th wait of sample s (policy ms), with noise[s][k] the noise measured
// around it. A wait whose noise is more than a quarter of it is not used:
// it could not be told from one 25% off.
func FitBackoff(waits, noise [][]float64) Fit {
	f := Fit{Confidence: map[string]Confidence{}}
	waits, f.Nested = firstBurst(waits)
	levels, dropped, typical := levelsOf(waits, noise)
	switch {
	case len(levels) == 0 && dropped == 0:
		f.allInconclusive("no retry was seen in the exhaustion runs")
		return f
	case len(levels) == 0:
		f.allInconclusive(fmt.Sprintf("the noise measured on this machine around the first waits (%s) is more than a quarter of them, in every sample: a wait could not be told from one %.0f%% off", noiseRange(waits, noise), 100*noiseShare))
		return f
	}
	f.FirstLo, f.FirstHi = levels[0].min-typical, levels[0].max+typical
	mult, capAt := f.fitGrowth(levels)
	f.fitScale(levels, mult, capAt, typical)
	if dropped > 0 {
		c := f.Confidence[figInitial]
		c.Basis += fmt.Sprintf("; %d wait(s) left out, their measured noise being more than a quarter of them", dropped)
		f.Confidence[figInitial] = c
	}
	return f
}

func (f *Fit) allInconclusive(reason string) {
	for _, fig := range []string{figInitial, figMultiplier, figMax, figJitter} {
		f.inconclusive(fig, reason)
	}
}

// noiseRange describes the noise measured around the first waits.
func noiseRange(waits, noise [][]float64) string {
	lo, hi := math.Inf(1), 0.0
	for s := range waits {
		if len(waits[s]) > 0 {
			n := noiseAt(noise, s, 0)
			lo, hi = min(lo, n), max(hi, n)
		}
	}
	return fmt.Sprintf("%.0f–%.0f ms", lo, hi)
}

// noiseAt is the noise of wait k of sample s (the sample's last known one
// when its list is short; 0 when none).
func noiseAt(noise [][]float64, s, k int) float64 {
	if s >= len(noise) || len(noise[s]) == 0 {
		return 0
	}
	return noise[s][min(k, len(noise[s])-1)]
}

// level is the usable waits of one retry index k across samples.
type level struct {
	k              int
	vals           []float64
	raw, nz        []float64 // each value's observed wait and measured noise
	samples        []int     // the sample of each value
	mean, min, max float64
}

// levelsOf groups the usable waits by retry index (each less half its
// measured noise), up to the first index with none; dropped counts the waits left out for noise, typical is the
// median noise of those used.
func levelsOf(waits, noise [][]float64) (ls []level, dropped int, typical float64) {
	var used []float64
	for k := 0; ; k++ {
		l := level{k: k, min: math.Inf(1)}
		any := false
		for s, w := range waits {
			if k >= len(w) {
				continue
			}
			any = true
			n := noiseAt(noise, s, k)
			if n > noiseShare*w[k] {
				dropped++
				continue
			}
			used = append(used, n)
			// The noise is about twice the lateness that lengthened the
			// wait: take half of it off, the expected lateness.
			v := max(0, w[k]-n/2)
			l.vals, l.samples = append(l.vals, v), append(l.samples, s)
			l.raw, l.nz = append(l.raw, w[k]), append(l.nz, n)
			l.mean += v
			l.min, l.max = min(l.min, v), max(l.max, v)
		}
		if !any || len(l.vals) == 0 {
			if len(used) > 0 {
				typical = median(used)
			}
			return ls, dropped, typical
		}
		l.mean /= float64(len(l.vals))
		ls = append(ls, l)
	}
}

// fitGrowth finds the multiplier (median of the growth ratios between
// consecutive levels while they grow) and the first capped level (capAt =
// len(levels) when the cap was never reached).
func (f *Fit) fitGrowth(ls []level) (mult float64, capAt int) {
	capAt = len(ls)
	var ratios []float64
	for i := 0; i+1 < len(ls); i++ {
		r := ratioOf(ls[i].mean, ls[i+1].mean)
		if r < growth {
			capAt = i + 1
			break
		}
		ratios = append(ratios, r)
	}
	switch {
	case len(ls) == 1:
		f.inconclusive(figMultiplier, "the client retried once only: one wait cannot show how waits grow")
		f.inconclusive(figMax, "the client retried once only")
		return 1, 1
	case len(ratios) == 0:
		mult, capAt = 1, len(ls)
		f.Backoff.Multiplier = ptr(1.0)
		f.confident(figMultiplier, High, fmt.Sprintf("the waits do not grow (ratio %.2f between the first two)", ratioOf(ls[0].mean, ls[1].mean)))
	default:
		mult = median(ratios)
		basis := fmt.Sprintf("median ratio of consecutive mean waits over %d step(s), %d sample(s): %.2f", len(ratios), len(ls[0].vals), mult)
		if m, ok := roundMultiplier(mult); ok {
			mult = m
			basis += fmt.Sprintf(", read as %g (within the 10%% a mean of jittered waits varies by)", m)
		}
		f.Backoff.Multiplier = ptr(round(mult, 2))
		se := ratioSE(ls, capAt)
		basis += fmt.Sprintf("; relative standard error %.0f%%", 100*se)
		f.confident(figMultiplier, seLevel(se, len(ls[0].vals)), basis)
	}
	switch {
	case capAt == len(ls) && mult == 1:
		f.confident(figMax, Medium, "constant waits: no cap to reach")
	case capAt == len(ls):
		f.confident(figMax, Medium, fmt.Sprintf("never reached: the waits still grew at the last retry (%.0f ms)", ls[len(ls)-1].mean))
	}
	return mult, capAt
}

// ratioOf is b/a, the growth from a wait of a to one of b; 1 when a is 0
// (waits of 0 ms show no growth to divide).
func ratioOf(a, b float64) float64 {
	if a <= 0 {
		return 1
	}
	return b / a
}

// ratioSE is the relative standard error of the ratio of mean waits
// between consecutive levels before the cap (the largest over the steps):
// sqrt(cv0²/n0 + cv1²/n1), cv the coefficient of variation of a level.
func ratioSE(ls []level, capAt int) float64 {
	worst := 0.0
	for i := 0; i+1 < capAt && i+1 < len(ls); i++ {
		a, b := ls[i], ls[i+1]
		if len(a.vals) < 2 || len(b.vals) < 2 {
			return 1
		}
		if a.mean <= 0 || b.mean <= 0 {
			return 1
		}
		_, sa := meanSD(a.vals)
		_, sb := meanSD(b.vals)
		ca, cb := sa/a.mean, sb/b.mean
		worst = max(worst, math.Sqrt(ca*ca/float64(len(a.vals))+cb*cb/float64(len(b.vals))))
	}
	return worst
}

// seLevel grades an estimate from its relative standard error and the
// number of samples behind it.
func seLevel(se float64, n int) string {
	switch {
	case se < 0.04 && n >= 4:
		return High
	case se < 0.1:
		return Medium
	}
	return Low
}

// fitScale sets the initial delay, the cap and the jitter band: the waits
// before the cap, each divided by multiplier^k, are draws of initial ×
// jitter factor; the nominal initial is the round value at the top of
// their band (or at its centre), so a band reads "−25%" or "±10%".
func (f *Fit) fitScale(ls []level, mult float64, capAt int, noise float64) {
	var u []float64
	for _, l := range ls[:capAt] {
		for _, v := range l.vals {
			u = append(u, v/math.Pow(mult, float64(l.k)))
		}
	}
	lo, hi := slices.Min(u), slices.Max(u)
	lvl := Low
	switch {
	case len(u) >= 6:
		lvl = High
	case len(u) >= 3:
		lvl = Medium
	}
	ds := drawsOf(ls[:capAt], mult)
	initial, fam, margin, ok := fitFamily(ds)
	basis := ""
	switch {
	case ok:
		f.family = fam
		basis = fmt.Sprintf("nominal %.0f ms with %s jitter fits the draws best", initial, fam)
		if margin < 0.02 && lvl == High {
			lvl = Medium
			basis += fmt.Sprintf(" (another nominal fits almost as well: %.3f)", margin)
		}
		// The same draws, each allowed to be short by its noise: when
		// they fit another nominal as well, the noise hides which.
		if c2, fam2, _, ok2 := fitFamily(widened(ds, ls[:capAt], mult)); ok2 && lvl == High && c2 != initial {
			lvl = Medium
			basis += fmt.Sprintf(" (%.0f ms with %s jitter fits best if each wait was measured short by up to its noise: the end of an attempt is stamped late under load)", c2, fam2)
		}
	default:
		initial, basis = nominalOf(lo, hi, noise)
		basis += "; no known jitter form contains the draws"
		lvl = Low
	}
	f.Backoff.InitialMs = ptr(round(initial, 0))
	f.confident(figInitial, lvl, fmt.Sprintf("%d waits before the cap, scaled to the first retry: %.0f–%.0f ms; %s", len(u), lo, hi, basis))
	// The band of factors: the narrowest the waits allow, each late by
	// at most its measured noise.
	blo, bhi := band(ds, initial)
	fmin, fmax := blo/initial, bhi/initial
	if capAt < len(ls) {
		var plateau []float64
		for _, l := range ls[capAt:] {
			plateau = append(plateau, l.vals...)
		}
		top := slices.Max(plateau) / fmax
		capMs, _ := nominalOf(top, top, noise)
		f.Backoff.MaxMs = ptr(round(capMs, 0))
		for _, v := range plateau {
			fmin, fmax = min(fmin, v/capMs), max(fmax, v/capMs)
		}
		l := Medium
		if len(plateau) >= 3 {
			l = High
		}
		f.confident(figMax, l, fmt.Sprintf("the waits stopped growing at retry %d: %d wait(s) at %.0f–%.0f ms", capAt+1, len(plateau), slices.Min(plateau), slices.Max(plateau)))
	}
	f.Backoff.Jitter = &Jitter{MinFactor: round(fmin, 2), MaxFactor: round(fmax, 2), Kind: f.family.String()}
	jl := Low
	switch {
	case len(u) >= 8:
		jl = High
	case len(u) >= 4:
		jl = Medium
	}
	basis = fmt.Sprintf("observed ÷ nominal over %d waits", len(u))
	if (hi - lo) <= 2*noise+0.02*hi {
		basis += fmt.Sprintf("; the band is within the measured noise (%.0f ms): no jitter measurable", noise)
	}
	f.confident(figJitter, jl, basis)
}

// nominalOf picks the nominal wait of a band [lo, hi] of draws: the round
// value (1, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 8 × 10ⁿ ms) within 5% of hi (or
// below hi by up to 5% plus the measured noise, when that noise is under
// 10% of hi: lateness only lengthens a wait), else within 5% of the centre, else hi itself.
func nominalOf(lo, hi, noise float64) (float64, string) {
	if r, ok := roundNear(hi); ok {
		return r, "nominal: the round value at the top of the band"
	}
	if r, ok := roundNear(hi - noise); ok && noise <= 0.1*hi && hi-r <= 0.05*r+noise {
		return r, fmt.Sprintf("nominal: the round value at the top of the band, less the measured noise (%.0f ms)", noise)
	}
	if r, ok := roundNear((lo + hi) / 2); ok {
		return r, "nominal: the round value at the centre of the band"
	}
	return hi, "nominal: the top of the band (no round value near it)"
}

// roundMultiplier reads a measured multiplier as the usual one it is
// within 10% of (1.5, 2, 3, ...), if any.
func roundMultiplier(m float64) (float64, bool) {
	for _, c := range []float64{1.5, 2, 2.5, 3, 4, 5, 10} {
		if math.Abs(m-c) <= 0.1*c {
			return c, true
		}
	}
	return m, false
}

var roundSteps = []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 8, 10}

func roundNear(x float64) (float64, bool) {
	if x <= 0 {
		return 0, false
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	best := 0.0
	for _, s := range roundSteps {
		if c := s * p; math.Abs(c-x) < math.Abs(best-x) {
			best = c
		}
	}
	return best, math.Abs(best-x) <= 0.05*x
}

// firstBurst detects nested loops: within a sample, a wait less than half
// the one before it (both well above the noise) starts a new burst. A
// boundary the rule misses (an outer wait, with the client's own overhead,
// not under half the inner one before it) only joins two bursts, never
// splits one, so the inner loop is the shortest first burst of any
// sample, and every sample's first burst is cut to it (aider: 0.25s of
// its own loop plus 0.1–0.45s of its overhead after the SDK's 1s read as
// a boundary in 4 of 8 samples; the others found the next one, and the
// last sample's count stood). It returns the waits of each sample's first
// burst for the fit.
func firstBurst(waits [][]float64) ([][]float64, NestedLoops) {
	var nl NestedLoops
	out := make([][]float64, len(waits))
	for s, w := range waits {
		out[s] = w
		for k := 1; k < len(w); k++ {
			if w[k] < 0.5*w[k-1] {
				if !nl.Seen || k+1 < nl.Inner {
					nl.Inner = k + 1
				}
				nl.Seen = true
				break
			}
		}
	}
	if nl.Seen {
		for s, w := range out {
			out[s] = w[:min(len(w), nl.Inner-1)]
		}
	}
	return out, nl
}

func (f *Fit) inconclusive(fig, reason string) {
	f.Inconclusive = append(f.Inconclusive, Inconclusive{Figure: fig, Reason: reason})
}

func (f *Fit) confident(fig, level, basis string) {
	f.Confidence[fig] = Confidence{Level: level, Basis: basis}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func meanSD(xs []float64) (m, sd float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		sd += (x - m) * (x - m)
	}
	if len(xs) > 1 {
		sd = math.Sqrt(sd / float64(len(xs)-1))
	}
	return m, sd
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func ptr[T any](v T) *T { return &v }
