package probe

import (
	"strings"
	"testing"
)

// TestFitLeavesOutNoisyWaits: a sample whose first wait met a burst of
// load (noise more than a quarter of the wait) is left out of that level;
// the others still give the figures, and the basis says so.
func TestFitLeavesOutNoisyWaits(t *testing.T) {
	waits := synth(4, 2, 500, 2, 8000, true, 2)
	noise := repeatNoise(waits, 5)
	noise[0][0] = 300 // the first sample's first wait: unusable
	waits[0][0] += 250
	f := FitBackoff(waits, noise)
	if len(f.Inconclusive) != 0 {
		t.Fatalf("inconclusive = %+v", f.Inconclusive)
	}
	within(t, "initialMs", f.Backoff.InitialMs, 500)
	within(t, "multiplier", f.Backoff.Multiplier, 2)
	if c := f.Confidence[figInitial]; !strings.Contains(c.Basis, "1 wait(s) left out") {
		t.Errorf("basis = %q, want it to say a wait was left out", c.Basis)
	}
}

// TestObservationNoise: the per-wait noise from chaos, when there, stands
// for each wait; else the run's.
func TestObservationNoise(t *testing.T) {
	o := Observation{WaitsMs: []float64{500, 1000}, NoiseMs: 40}
	if got := o.waitNoise(); len(got) != 2 || got[0] != 40 || got[1] != 40 {
		t.Errorf("waitNoise = %v, want [40 40]", got)
	}
	o.WaitNoiseMs = []float64{130, 10}
	if got := o.firstNoise(); got != 130 {
		t.Errorf("firstNoise = %g, want 130", got)
	}
}

// TestInferFallbacks: a model switch between attempts is a fallback; none
// in many attempts says so with confidence; no model recorded: inconclusive.
func TestInferFallbacks(t *testing.T) {
	prov, _ := LookupProvider("anthropic")
	tests := []struct {
		name   string
		models []string
		want   []string
		inconc bool
	}{
		{"switch", []string{"claude-haiku-4-5", "claude-haiku-4-5", "claude-sonnet-4-5"},
			[]string{"claude-haiku-4-5 → claude-sonnet-4-5 (after 503 until it gives up, attempt 2)"}, false},
		{"none", []string{"m", "m", "m"}, []string{}, false},
		{"unrecorded", nil, []string{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Observation{Fault: prov.Exhaust.Name, Sample: 1, Attempts: len(tt.models), End: EndGaveUp, Models: tt.models}
			p := Infer(prov, []Observation{o})
			if len(p.Policy.Fallbacks) != len(tt.want) {
				t.Fatalf("fallbacks = %q, want %q", p.Policy.Fallbacks, tt.want)
			}
			for i := range tt.want {
				if p.Policy.Fallbacks[i] != tt.want[i] {
					t.Errorf("fallbacks[%d] = %q, want %q", i, p.Policy.Fallbacks[i], tt.want[i])
				}
			}
			_, conf := p.Confidence["policy.fallbacks"]
			if conf == tt.inconc {
				t.Errorf("confidence present = %t, want %t", conf, !tt.inconc)
			}
		})
	}
}

// TestFitLoadedNodeSDK is a regression test from a probe of
// @anthropic-ai/sdk 1.12.0 at load average 14 on 2 cores: some first waits
// were late by 100–140 ms (their measured noise says so). The nominal
// initial wait and the multiplier still come out within 15%.
func TestFitLoadedNodeSDK(t *testing.T) {
	waits := [][]float64{{515, 930}, {637, 893}, {439, 823}, {408, 876}, {544, 802}, {494, 851}, {536, 868}, {573, 758}}
	noise := [][]float64{{60, 30}, {230, 40}, {40, 30}, {30, 30}, {120, 30}, {50, 30}, {110, 40}, {130, 30}}
	f := FitBackoff(waits, noise)
	within(t, "initialMs", f.Backoff.InitialMs, 500)
	within(t, "multiplier", f.Backoff.Multiplier, 2)
}

// TestFitLoadedOpenAINodeSDK is a regression test from a probe of openai
// 6.49.0 under load: with the old rule (the round value at the centre of
// the band) its nominal came out 400 ms. The jitter form that fits the
// draws best says 500 ms, −25%.
func TestFitLoadedOpenAINodeSDK(t *testing.T) {
	waits := [][]float64{{712, 842}, {457, 884}, {387, 937}, {515, 816}, {461, 948}, {476, 919}, {489, 956}, {461, 969}}
	noise := [][]float64{{1234, 369}, {12, 43}, {35, 22}, {106, 236}, {246, 186}, {228, 192}, {224, 47}, {303, 190}}
	f := FitBackoff(waits, noise)
	within(t, "initialMs", f.Backoff.InitialMs, 500)
	within(t, "multiplier", f.Backoff.Multiplier, 2)
	if f.Backoff.Jitter == nil || f.Backoff.Jitter.Kind != "sdk" {
		t.Errorf("jitter = %+v, want the sdk form", f.Backoff.Jitter)
	}
}

func TestFitFamily(t *testing.T) {
	tests := []struct {
		name string
		u    []float64
		want float64
		kind string
	}{
		{"sdk", []float64{490, 380, 465, 400, 440, 497, 420, 450}, 500, "sdk"},
		{"none", []float64{1003, 1010, 998, 1004}, 1000, "none"},
		{"proportional 10%", []float64{1850, 2150, 2010, 1900, 2190, 1820, 2080, 1960}, 2000, "proportional ±10%"},
		{"full", []float64{120, 900, 450, 30, 700, 980, 260, 610}, 1000, "full"},
		{"additive 25% (Claude Code)", []float64{505, 610, 560, 520, 595, 540, 580, 620}, 500, "additive +25%"},
		{"additive 100% (LangChain.js)", []float64{1080, 1900, 1450, 1200, 1700, 1990, 1330, 1600}, 1000, "additive +100%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ds []draw
			for _, v := range tt.u {
				ds = append(ds, draw{lo: v - 5, hi: v})
			}
			c, fm, _, ok := fitFamily(ds)
			if !ok || c != tt.want || fm.String() != tt.kind {
				t.Errorf("fitFamily = %g, %s, %t; want %g, %s", c, fm, ok, tt.want, tt.kind)
			}
		})
	}
}
