package probe

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// factors are fixed draws of the SDKs' jitter (1 − 0.25·u), so the tests
// are deterministic.
var factors = []float64{0.98, 0.81, 0.93, 0.77, 0.88, 0.995, 0.84, 0.9, 0.79, 0.96, 0.86, 0.92}

// synth returns samples of min(initial × mult^k, cap) × factor + late for
// k < retries.
func synth(samples, retries int, initial, mult, capMs float64, jitter bool, late float64) [][]float64 {
	var out [][]float64
	i := 0
	for s := 0; s < samples; s++ {
		var w []float64
		for k := 0; k < retries; k++ {
			d := initial * math.Pow(mult, float64(k))
			if capMs > 0 {
				d = min(d, capMs)
			}
			if jitter {
				d *= factors[i%len(factors)]
				i++
			}
			w = append(w, d+late)
		}
		out = append(out, w)
	}
	return out
}

func repeatNoise(waits [][]float64, v float64) [][]float64 {
	out := make([][]float64, len(waits))
	for s, w := range waits {
		for range w {
			out[s] = append(out[s], v)
		}
	}
	return out
}

func within(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = unknown, want %g", what, want)
		return
	}
	if math.Abs(*got-want) > 0.15*want {
		t.Errorf("%s = %g, want %g ± 15%%", what, *got, want)
	}
}

func TestFitBackoff(t *testing.T) {
	tests := []struct {
		name         string
		waits        [][]float64
		noise        float64
		initial      float64
		mult         float64
		capMs        float64 // 0: never reached (nil)
		jmin, jmax   float64 // expected band, ± 0.06
		inconclusive []string
	}{
		{name: "anthropic-node: 2 retries, 0.5s × 2^n, −25%", waits: synth(4, 2, 500, 2, 8000, true, 2), noise: 5,
			initial: 500, mult: 2, jmin: 0.77, jmax: 1.0},
		{name: "agent.py: 1, 2, 4, 8s, no jitter", waits: synth(3, 4, 1000, 2, 0, false, 4), noise: 8,
			initial: 1000, mult: 2, jmin: 1, jmax: 1},
		{name: "capped at 8s after 0.5s × 2^n", waits: synth(3, 7, 500, 2, 8000, true, 2), noise: 5,
			initial: 500, mult: 2, capMs: 8000, jmin: 0.77, jmax: 1.0},
		{name: "multiplier 3, no jitter", waits: synth(2, 3, 200, 3, 0, false, 1), noise: 3,
			initial: 200, mult: 3, jmin: 1, jmax: 1},
		{name: "constant 2s", waits: synth(3, 4, 2000, 1, 0, false, 3), noise: 5,
			initial: 2000, mult: 1, jmin: 1, jmax: 1},
		{name: "noise as large as the waits: inconclusive", waits: synth(3, 3, 100, 2, 0, false, 4), noise: 60,
			inconclusive: []string{figInitial, figMultiplier, figMax, figJitter}},
		{name: "one retry: no multiplier", waits: synth(3, 1, 1000, 2, 0, false, 4), noise: 5,
			initial: 1000, jmin: 1, jmax: 1, inconclusive: []string{figMultiplier, figMax}},
		{name: "no retry at all", waits: [][]float64{{}, {}}, noise: 5,
			inconclusive: []string{figInitial, figMultiplier, figMax, figJitter}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := FitBackoff(tt.waits, repeatNoise(tt.waits, tt.noise))
			var got []string
			for _, in := range f.Inconclusive {
				got = append(got, in.Figure)
			}
			if len(got) != len(tt.inconclusive) {
				t.Fatalf("inconclusive = %v, want %v", f.Inconclusive, tt.inconclusive)
			}
			for i := range got {
				if got[i] != tt.inconclusive[i] {
					t.Errorf("inconclusive[%d] = %s, want %s", i, got[i], tt.inconclusive[i])
				}
			}
			if tt.initial > 0 {
				within(t, "initialMs", f.Backoff.InitialMs, tt.initial)
			}
			if tt.mult > 0 {
				within(t, "multiplier", f.Backoff.Multiplier, tt.mult)
			}
			if tt.capMs > 0 {
				within(t, "maxMs", f.Backoff.MaxMs, tt.capMs)
			} else if f.Backoff.MaxMs != nil {
				t.Errorf("maxMs = %g, want null (never reached)", *f.Backoff.MaxMs)
			}
			if tt.jmax > 0 {
				j := f.Backoff.Jitter
				if j == nil || math.Abs(j.MinFactor-tt.jmin) > 0.06 || math.Abs(j.MaxFactor-tt.jmax) > 0.06 {
					t.Errorf("jitter = %+v, want about %g–%g", j, tt.jmin, tt.jmax)
				}
			}
			for fig := range f.Confidence {
				for _, in := range f.Inconclusive {
					if in.Figure == fig {
						t.Errorf("%s is both inconclusive and confident", fig)
					}
				}
			}
		})
	}
}

func TestNestedLoops(t *testing.T) {
	// Codex-like: 3 attempts at 200, 400ms, then the outer loop waits 5s
	// and starts again at 200ms.
	w := [][]float64{{200, 400, 5000, 200, 400}, {201, 402, 5001, 202, 401}}
	f := FitBackoff(w, repeatNoise(w, 3))
	if !f.Nested.Seen || f.Nested.Inner != 4 {
		t.Errorf("nested = %+v, want seen with bursts cut at wait 4", f.Nested)
	}
}

func TestRoundNear(t *testing.T) {
	tests := []struct {
		in   float64
		want float64
		ok   bool
	}{{497, 500, true}, {1012, 1000, true}, {740, 750, true}, {8100, 8000, true}, {430, 400, false}}
	for _, tt := range tests {
		got, ok := roundNear(tt.in)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("roundNear(%g) = %g, %t; want %g, %t", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestFitWaitsMeasuredShort: langchain-anthropic (the anthropic SDK's
// 500 ms minus up to 25%, 375–500 ms) probed at load 22 on 2 cores. The
// mock stamps an attempt's end when the proxy's close reaches it, late
// under load, so its waits read 370–458 ms: 400 ms ±10% fits them, and
// was said with confidence high, 20% off the source. Allowed to be short
// by their noise, they fit 500 ms with the SDK's jitter: the figure stays
// (the probe never guesses) but is said medium, with why.
func TestFitWaitsMeasuredShort(t *testing.T) {
	prov, obs, err := LoadJournal(filepath.Join("testdata", "short-waits-load22.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := Infer(prov, obs)
	c := p.Confidence["policy.backoff.initialMs"]
	if c.Level == High || !strings.Contains(c.Basis, "500 ms with sdk jitter fits best if each wait was measured short") {
		t.Errorf("initialMs %v said %s: %s", show(p.Policy.Backoff.InitialMs), c.Level, c.Basis)
	}
	// Waits that fit one nominal either way keep their confidence: the
	// SDKs probed on a quiet machine.
	for _, f := range []string{"anthropic-python.json", "openai-go.json"} {
		prov, obs := readJournal(t, f)
		if c := Infer(prov, obs).Confidence["policy.backoff.initialMs"]; c.Level != High {
			t.Errorf("%s: initialMs said %s: %s", f, c.Level, c.Basis)
		}
	}
}

// TestFirstBurst: a boundary the rule misses joins two bursts, never
// splits one: the inner loop is the shortest first burst of any sample,
// and every sample is cut to it (aider: 4 of 8 samples found the boundary
// after 3 attempts, the others after 10, and the last sample's 10 stood).
func TestFirstBurst(t *testing.T) {
	tests := []struct {
		name      string
		waits     [][]float64
		wantInner int
		want      [][]float64
	}{
		{"no drop: one loop", [][]float64{{500, 1000}, {450, 900}}, 0, [][]float64{{500, 1000}, {450, 900}}},
		{"every sample finds it", [][]float64{{200, 400, 800, 1600, 200, 400}, {210, 390, 790, 1650, 230}}, 5,
			[][]float64{{200, 400, 800, 1600}, {210, 390, 790, 1650}}},
		{"aider: samples 2 and 4 miss the first boundary", [][]float64{
			{445, 769, 341, 385, 810, 681, 499, 836, 1490, 492},
			{466, 1029, 693, 463, 896, 575, 404, 915, 1222, 500},
			{446, 909, 426, 420},
			{506, 883, 619, 464, 1004, 659, 471, 1037, 1364, 403}}, 3,
			[][]float64{{445, 769}, {466, 1029}, {446, 909}, {506, 883}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, nl := firstBurst(tt.waits)
			if nl.Inner != tt.wantInner || nl.Seen != (tt.wantInner > 0) {
				t.Errorf("firstBurst() = %+v, want inner %d", nl, tt.wantInner)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("first bursts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
