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
}

func (fm family) String() string {
	if fm.name == "proportional" {
		return fmt.Sprintf("proportional ±%.0f%%", 100*fm.fraction)
	}
	return fm.name
}

// fitFamily picks the round nominal wait c and the jitter form that
// explain the draws u (waits scaled to the first retry) best: every draw
// inside the form's band widened by 3% and the noise, and the lowest and
// highest draws where n uniform draws would put them (a gap of
// (b − a)/(n + 1) from each end). ok is false when no form contains the
// draws. margin is how much worse the best fit with another nominal is
// (0 when there is none): a small margin is a close call.
func fitFamily(u []float64, noise float64) (c float64, fm family, margin float64, ok bool) {
	lo, hi := slices.Min(u), slices.Max(u)
	n := float64(len(u))
	best, second := math.Inf(1), math.Inf(1)
	for _, cand := range roundValues(0.75*hi, 2.2*hi) {
		tol := 0.03 + noise/cand
		for _, f := range families {
			flo, fhi := lo/cand, hi/cand
			if flo < f.a-tol || fhi > f.b+tol {
				continue
			}
			g := (f.b - f.a) / (n + 1)
			score := math.Abs(flo-(f.a+g)) + math.Abs(fhi-(f.b-g))
			switch {
			case score < best:
				if cand != c {
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

// roundValues are the round values (1, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 8 ×
// 10ⁿ) in [lo, hi].
func roundValues(lo, hi float64) []float64 {
	if lo <= 0 || hi < lo {
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
