package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNextCeiling(t *testing.T) {
	tests := []struct {
		name          string
		lo, hi, reach int64
		want          []int64
	}{
		{"the battery's bracket, reach below its top: reach is the last value", 3000, 3_600_000, 88_000, []int64{9000, 29_000, 88_000}},
		{"inside the reach: the values split the bracket in four", 29_000, 88_000, 88_000, []int64{38_000, 51_000, 67_000}},
		{"narrow: whole seconds collapse", 59_000, 61_000, 88_000, []int64{60_000}},
		{"adjacent seconds: nothing between", 59_000, 60_000, 88_000, nil},
		{"the reach at or below lo: nothing the budget allows", 3000, 3_600_000, 3000, nil},
		{"no reach", 3000, 3_600_000, 0, nil},
		{"empty bracket", 5000, 5000, 88_000, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, nextCeiling(tt.lo, tt.hi, tt.reach, CeilingPoints)); diff != "" {
				t.Errorf("nextCeiling(%d, %d, %d) mismatch (-want +got):\n%s", tt.lo, tt.hi, tt.reach, diff)
			}
		})
	}
}

func TestCeilingReach(t *testing.T) {
	tests := []struct {
		budget time.Duration
		scale  float64
		want   int64
	}{
		{2 * time.Minute, 1, 88_000},  // (120 − 10) / 1.25
		{3 * time.Minute, 1, 136_000}, // openai-go's 120s is within reach
		{3 * time.Minute, 0.5, 272_000},
		{11 * time.Second, 1, 0},
	}
	for _, tt := range tests {
		if got := CeilingReach(tt.budget, tt.scale); got != tt.want {
			t.Errorf("CeilingReach(%s, %g) = %d, want %d", tt.budget, tt.scale, got, tt.want)
		}
		if r := CeilingReach(tt.budget, tt.scale); r > 0 && CeilingDeadline(r, tt.scale, tt.budget) > tt.budget {
			t.Errorf("the deadline of the reach %d is past --budget %s", r, tt.budget)
		}
	}
}

func TestNextCeilingRound(t *testing.T) {
	wide := RetryAfter{CeilingBracketMs: []int64{3000, 3_600_000}}
	tests := []struct {
		name          string
		ra            RetryAfter
		reach         int64
		round, rounds int
		want          []int64
		why           string
	}{
		{"off", wide, 88_000, 1, 0, nil, "off"},
		{"no bracket: the battery did not bracket it", RetryAfter{}, 88_000, 1, 3, nil, ""},
		{"first round", wide, 88_000, 1, 3, []int64{9000, 29_000, 88_000}, ""},
		{"rounds used up", RetryAfter{CeilingBracketMs: []int64{51_000, 67_000}}, 88_000, 3, 2, nil, "stopped after 2 round(s)"},
		{"pinned to 10%", RetryAfter{CeilingBracketMs: []int64{59_000, 62_000}}, 88_000, 3, 3, nil, "done after 2 round(s)"},
		{"the budget reaches no further", RetryAfter{CeilingBracketMs: []int64{88_000, 3_600_000}}, 88_000, 2, 3, nil, "--budget allows Retry-After probes up to 88s"},
		{"not monotone", RetryAfter{CeilingBracketMs: []int64{30_000, 9000}}, 88_000, 2, 3, nil, "not monotone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := NextCeilingRound(tt.ra, tt.reach, tt.round, tt.rounds)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("values mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(why, tt.why) || (tt.why == "" && why != "") {
				t.Errorf("why = %q, want it to say %q", why, tt.why)
			}
		})
	}
}

// ceilingClient is a synthetic client's answer to a 429 with a Retry-After
// of v ms: honoured below its ceiling, else its backoff or giving up.
type ceilingClient struct {
	honours func(v int64) bool
	above   string // "backoff" or "gave up"
	// mixedAt, when set, is a value the client ignores although it
	// honours larger ones (a client that is not monotone).
	mixedAt int64
}

func (c ceilingClient) observe(f Fault, round int) Observation {
	o := Observation{Fault: f.Name, Served: 1, NoiseMs: 5, DeadlineMs: 120_000, Round: round}
	if round > 0 {
		o.RetryAfterMs = f.RetryAfterMs
	}
	v := f.RetryAfterMs
	switch {
	case c.honours(v) && v != c.mixedAt:
		o.Attempts, o.End, o.WaitsMs = 2, EndSucceeded, []float64{float64(v) + 4}
	case c.above == "gave up":
		o.Attempts, o.End = 1, EndGaveUp
	default:
		o.Attempts, o.End, o.WaitsMs = 2, EndSucceeded, []float64{470}
	}
	return o
}

// battery is what the synthetic client shows the battery's Retry-After
// probes and the exhaustion (500ms × 2^n − 25%, 2 retries).
func (c ceilingClient) battery(prov Provider) []Observation {
	var obs []Observation
	for _, name := range []string{"429 retry-after 3", "429 retry-after 3600"} {
		f, _ := prov.Fault(name)
		obs = append(obs, c.observe(f, 0))
	}
	for s, w := range synth(4, 2, 500, 2, 8000, true, 2) {
		obs = append(obs, Observation{Fault: prov.Exhaust.Name, Sample: s + 1, Served: 10, Attempts: 3,
			End: EndGaveUp, WaitsMs: w, NoiseMs: 4, DeadlineMs: 120_000})
	}
	return obs
}

// TestCeilingBisection runs the bisection's decisions against synthetic
// clients, round by round as battery.Runner does, and checks the
// bracket, ceilingMs and its confidence, or why it stays inconclusive.
func TestCeilingBisection(t *testing.T) {
	prov, _ := LookupProvider("openai")
	tests := []struct {
		name    string
		client  ceilingClient
		budget  time.Duration
		rounds  int
		lo, hi  int64  // the final bracket
		ceiling *int64 // nil: inconclusive
		level   string
		why     string // in the reason (inconclusive) or basis
	}{
		{"the Vercel AI SDK: used when < 60s, else its backoff",
			ceilingClient{honours: func(v int64) bool { return v < 60_000 }, above: "backoff"},
			2 * time.Minute, 3, 58_000, 63_000, ptr(int64(63_000)), High, "58s honoured, 63s ignored"},
		{"openai-go: up to 2 minutes, above it gives up",
			ceilingClient{honours: func(v int64) bool { return v <= 120_000 }, above: "gave up"},
			3 * time.Minute, 3, 116_000, 126_000, ptr(int64(126_000)), High, "126s: gave up at once"},
		{"openai-go with the default budget: out of reach",
			ceilingClient{honours: func(v int64) bool { return v <= 120_000 }, above: "gave up"},
			2 * time.Minute, 3, 88_000, 3_600_000, nil, "", "--budget allows Retry-After probes up to 88s"},
		{"one round only: a bracket too wide to report",
			ceilingClient{honours: func(v int64) bool { return v < 20_000 }, above: "backoff"},
			2 * time.Minute, 1, 9000, 29_000, nil, "", "stopped after 1 round(s)"},
		{"two rounds: a bracket reported with medium confidence",
			ceilingClient{honours: func(v int64) bool { return v < 20_000 }, above: "backoff"},
			2 * time.Minute, 2, 16_000, 22_000, ptr(int64(22_000)), Medium, "16s honoured, 22s ignored"},
		{"off: the battery's bracket only",
			ceilingClient{honours: func(v int64) bool { return v < 60_000 }, above: "backoff"},
			2 * time.Minute, 0, 3000, 3_600_000, nil, "", "off (--ceiling-rounds 0)"},
		{"not monotone: said so, never pinned",
			ceilingClient{honours: func(v int64) bool { return v < 60_000 }, above: "backoff", mixedAt: 9000},
			2 * time.Minute, 3, 29_000, 9000, nil, "", "not monotone: honoured up to 29s but not 9s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := tt.client.battery(prov)
			p := Infer(prov, obs)
			reach := CeilingReach(tt.budget, 1)
			why := ""
			for round := 1; ; round++ {
				var values []int64
				values, why = NextCeilingRound(p.Policy.RetryAfter, reach, round, tt.rounds)
				if len(values) == 0 {
					break
				}
				for _, v := range values {
					f := CeilingFault(prov, v)
					if dl := CeilingDeadline(v, 1, tt.budget); dl > tt.budget {
						t.Errorf("%s: deadline %s past --budget %s", f.Name, dl, tt.budget)
					}
					obs = append(obs, tt.client.observe(f, round))
				}
				p = Infer(prov, obs)
			}
			p.NoteCeilingStop(why)
			ra := p.Policy.RetryAfter
			if diff := cmp.Diff([]int64{tt.lo, tt.hi}, ra.CeilingBracketMs); diff != "" {
				t.Errorf("bracket mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.ceiling, ra.CeilingMs); diff != "" {
				t.Errorf("ceilingMs mismatch (-want +got):\n%s", diff)
			}
			const fig = "policy.retryAfter.ceilingMs"
			text := p.Confidence[fig].Basis
			if tt.ceiling == nil {
				for _, in := range p.Inconclusive {
					if in.Figure == fig {
						text = in.Reason
					}
				}
			} else if got := p.Confidence[fig].Level; got != tt.level {
				t.Errorf("confidence %q, want %q (%s)", got, tt.level, text)
			}
			if !strings.Contains(text, tt.why) {
				t.Errorf("the ceiling's basis or reason %q does not say %q", text, tt.why)
			}
		})
	}
}

// TestCeilingNotBracketed: the battery must bracket the ceiling before it
// is bisected; each way it does not is said.
func TestCeilingNotBracketed(t *testing.T) {
	prov, _ := LookupProvider("openai")
	tests := []struct {
		name   string
		client ceilingClient
		why    string
	}{
		{"3600s still waited at the deadline", ceilingClient{honours: func(int64) bool { return true }}, "no ceiling below the probe's deadline"},
		{"3s not honoured", ceilingClient{honours: func(int64) bool { return false }, above: "backoff"}, "no small Retry-After in seconds was seen honoured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := tt.client.battery(prov)
			if tt.client.honours(3_600_000) { // a client that waits is stopped at the deadline
				obs[1] = Observation{Fault: obs[1].Fault, Served: 1, Attempts: 1, End: EndStopped, DeadlineMs: 15_000}
			}
			p := Infer(prov, obs)
			if vs, _ := NextCeilingRound(p.Policy.RetryAfter, 88_000, 1, 3); vs != nil {
				t.Errorf("bisects %v, want nothing", vs)
			}
			if p.Policy.RetryAfter.CeilingBracketMs != nil {
				t.Errorf("bracket %v, want none", p.Policy.RetryAfter.CeilingBracketMs)
			}
			if i := slicesIndexFigure(p.Inconclusive, "policy.retryAfter.ceilingMs"); i < 0 || !strings.Contains(p.Inconclusive[i].Reason, tt.why) {
				t.Errorf("inconclusive %+v, want it to say %q", p.Inconclusive, tt.why)
			}
		})
	}
}

func slicesIndexFigure(ins []Inconclusive, fig string) int {
	for i, in := range ins {
		if in.Figure == fig {
			return i
		}
	}
	return -1
}

// TestRoundInside: the value written for a bracket [lo, hi) is inside it.
func TestRoundInside(t *testing.T) {
	for _, tt := range []struct{ lo, hi, want int64 }{
		{58000, 63000, 60000}, {116000, 126000, 120000}, {3000, 3600000, 600000},
		{7000, 8000, 7000}, {7000, 7500, 7000}, {61000, 62000, 61000},
	} {
		if got := roundInside(tt.lo, tt.hi); got != tt.want || got < tt.lo || got >= tt.hi {
			t.Errorf("roundInside(%d, %d) = %d, want %d", tt.lo, tt.hi, got, tt.want)
		}
	}
}
