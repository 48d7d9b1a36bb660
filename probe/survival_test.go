package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// run is a survival run of kind key: attempts arriving at arr (policy ms),
// ending as end, with noise around each wait.
func run(key string, sample int, end string, noise float64, arr ...float64) Observation {
	o := Observation{Fault: key, Outage: key, Sample: sample, Served: 10, Attempts: len(arr), End: end, ArrivalsMs: arr, NoiseMs: noise, DeadlineMs: 60000}
	for i := 1; i < len(arr); i++ {
		o.WaitsMs = append(o.WaitsMs, arr[i]-arr[i-1])
	}
	return o
}

func check(key, side string, ms int64, end string, attempts int) Observation {
	return Observation{Fault: key, Outage: key, Check: side, OutageMs: ms, Attempts: attempts, End: end, DeadlineMs: 30000}
}

// TestInferSurvival: the figure of each kind from its runs (the last
// attempt's arrival), its bounds and confidence, a lower bound when the
// client outlasted the probe, 0 when it does not retry, and the checks'
// verdict; a kind that cannot be told is inconclusive with the reason.
func TestInferSurvival(t *testing.T) {
	prov, _ := LookupProvider("anthropic")
	tests := []struct {
		name   string
		obs    []Observation
		want   *Survival
		level  string // "": inconclusive
		reason string // in the basis or the inconclusive reason
	}{
		{name: "no retries: 0, whatever the outage",
			obs:  []Observation{run("529", 1, EndGaveUp, 4, 0), run("529", 2, EndGaveUp, 4, 0)},
			want: &Survival{Ms: 0, Low: 0, High: ptr(int64(0)), SamplesMs: []int64{0, 0}}, level: High,
			reason: "does not retry a 529 failure"},
		{name: "not exhausted, but the decision probe shows no retry",
			obs:  []Observation{{Fault: "529", Served: 1, Attempts: 1, End: EndGaveUp}},
			want: &Survival{High: ptr(int64(0)), SamplesMs: []int64{0}}, level: High, reason: "(decision probe)"},
		{name: "one retry after 1s, two runs that agree",
			obs:  []Observation{run("529", 1, EndGaveUp, 4, 0, 1000), run("529", 2, EndGaveUp, 4, 0, 1010)},
			want: &Survival{Ms: 1005, Low: 996, High: ptr(int64(1014)), SamplesMs: []int64{1000, 1010}}, level: High,
			reason: "mean of 2 run(s)"},
		{name: "one run only: low confidence (the jitter's spread not seen)",
			obs:  []Observation{run("529", 1, EndGaveUp, 0, 0, 500, 1500, 3500)},
			want: &Survival{Ms: 3500, Low: 3500, High: ptr(int64(3500)), SamplesMs: []int64{3500}}, level: Low,
			reason: "one run only"},
		{name: "jittered schedule: the mean, bounds from the extremes and their noise (root of the sum of squares)",
			obs: []Observation{run("529", 1, EndGaveUp, 3, 0, 400, 1300, 3100), run("529", 2, EndGaveUp, 3, 0, 500, 1500, 3500),
				run("529", 3, EndGaveUp, 3, 0, 450, 1400, 3300), run("529", 4, EndGaveUp, 3, 0, 480, 1450, 3300)},
			want: &Survival{Ms: 3300, Low: 3095, High: ptr(int64(3505)), SamplesMs: []int64{3100, 3500, 3300, 3300}}, level: High},
		{name: "full jitter: the bounds too far apart for high confidence",
			obs:  []Observation{run("529", 1, EndGaveUp, 3, 0, 100, 400, 900), run("529", 2, EndGaveUp, 3, 0, 900, 2700, 6200)},
			want: &Survival{Ms: 3550, Low: 895, High: ptr(int64(6205)), SamplesMs: []int64{900, 6200}}, level: Low,
			reason: "apart (jitter or noise)"},
		{name: "retries past the probe's failures: a lower bound only, said so",
			obs: []Observation{run("529", 1, EndSucceeded, 0, 0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000),
				run("529", 2, EndSucceeded, 0, 0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10100)},
			want:  &Survival{Ms: 10100, Low: 10100, AtLeast: true, SamplesMs: []int64{10000, 10100}},
			level: Low, reason: "a lower bound only"},
		{name: "still retrying at the deadline: a lower bound",
			obs:   []Observation{run("529", 1, EndStopped, 0, 0, 30000, 60000)},
			want:  &Survival{Ms: 60000, Low: 60000, AtLeast: true, SamplesMs: []int64{60000}},
			level: Low, reason: "at least 1m"},
		{name: "checked: the shorter outage survived, the longer not",
			obs: []Observation{run("529", 1, EndGaveUp, 0, 0, 1000, 3000), run("529", 2, EndGaveUp, 0, 0, 1000, 3000),
				check("529", CheckShorter, 2550, EndSucceeded, 3), check("529", CheckLonger, 3450, EndGaveUp, 3)},
			want: &Survival{Ms: 3000, Low: 3000, High: ptr(int64(3000)), SamplesMs: []int64{3000, 3000},
				Check: &SurvivalCheck{ShorterMs: 2550, ShorterSurvived: ptr(true), LongerMs: 3450, LongerSurvived: ptr(false)}},
			level: High, reason: "longer outage of 3.45s: gave up"},
		{name: "a check that disagrees: unconfirmed, confidence low",
			obs: []Observation{run("529", 1, EndGaveUp, 0, 0, 1000, 3000), run("529", 2, EndGaveUp, 0, 0, 1000, 3000),
				check("529", CheckShorter, 2550, EndSucceeded, 3), check("529", CheckLonger, 3450, EndSucceeded, 4)},
			want: &Survival{Ms: 3000, Low: 3000, High: ptr(int64(3000)), SamplesMs: []int64{3000, 3000},
				Check:       &SurvivalCheck{ShorterMs: 2550, ShorterSurvived: ptr(true), LongerMs: 3450, LongerSurvived: ptr(true)},
				Unconfirmed: "an outage of 3.45s (1.15× the high bound) was survived"},
			level: Low, reason: "unconfirmed"},
		{name: "a check stopped at its deadline: not told, said",
			obs: []Observation{run("529", 1, EndGaveUp, 0, 0, 1000, 3000), run("529", 2, EndGaveUp, 0, 0, 1000, 3000),
				check("529", CheckLonger, 3450, EndStopped, 2)},
			want: &Survival{Ms: 3000, Low: 3000, High: ptr(int64(3000)), SamplesMs: []int64{3000, 3000},
				Check: &SurvivalCheck{LongerMs: 3450, Note: "longer check not told: still retrying when stopped at 30s (2 attempts)"}},
			level: High, reason: "still retrying when stopped"},
		{name: "still waiting after its first attempt: says nothing",
			obs:    []Observation{run("529", 1, EndStopped, 0, 0)},
			reason: "still waiting after its first attempt when stopped at 60s"},
		{name: "runs that disagree on retrying: inconclusive",
			obs:    []Observation{run("529", 1, EndGaveUp, 0, 0), run("529", 2, EndGaveUp, 0, 0, 1000)},
			reason: "1 of 2 gave up at once"},
		{name: "no run: inconclusive",
			reason: "no run served a steady 529 outage"},
		{name: "runs not run: inconclusive with why",
			obs:    []Observation{{Fault: "529", Outage: "529", Sample: 1, End: EndNotRun, Note: "interrupted"}},
			reason: "not run: interrupted"},
		{name: "a journal without arrivals: inconclusive",
			obs:    []Observation{{Fault: "529", Outage: "529", Sample: 1, Served: 10, Attempts: 3, End: EndGaveUp}},
			reason: "holds 0 arrival(s) for 3 attempts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Infer(prov, tt.obs)
			got := p.Policy.SurvivesOutageMs["529"]
			if tt.want != nil {
				tt.want.Confidence = tt.level
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("survivesOutageMs.529 (-want +got):\n%s", diff)
			}
			c, ok := p.Confidence["policy.survivesOutageMs.529"]
			text := c.Basis
			if tt.level == "" {
				if ok {
					t.Errorf("confidence %+v for an inconclusive figure", c)
				}
				for _, in := range p.Inconclusive {
					if in.Figure == "policy.survivesOutageMs.529" {
						text = in.Reason
					}
				}
			} else if c.Level != tt.level {
				t.Errorf("confidence %s, want %s (%s)", c.Level, tt.level, c.Basis)
			}
			if !strings.Contains(text, tt.reason) {
				t.Errorf("basis or reason %q does not say %q", text, tt.reason)
			}
		})
	}
}

// TestInferSurvivalKinds: the formats without 529 read their overload
// from the exhaustion runs (503, no runs of their own), and a kind's
// decision probe served --repeat times (--per-fault) is one of its runs.
func TestInferSurvivalKinds(t *testing.T) {
	prov, _ := LookupProvider("openai")
	var keys []string
	for _, k := range OutageKinds(prov) {
		keys = append(keys, k.Key)
	}
	if diff := cmp.Diff([]string{"503", "429", "drop"}, keys); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	exh := run(prov.Exhaust.Name, 1, EndGaveUp, 0, 0, 500, 1500)
	exh.Outage = ""
	per := run("429", 0, EndGaveUp, 0, 0, 700)
	per.Outage = ""
	p := Infer(prov, []Observation{exh, per})
	if s := p.Policy.SurvivesOutageMs["503"]; s == nil || s.Ms != 1500 {
		t.Errorf("503 from the exhaustion: %+v", s)
	}
	if s := p.Policy.SurvivesOutageMs["429"]; s == nil || s.Ms != 700 {
		t.Errorf("429 from its --per-fault decision probe: %+v", s)
	}
	if s, ok := p.Policy.SurvivesOutageMs["drop"]; !ok || s != nil {
		t.Errorf("drop: %+v, want null", s)
	}
}

// TestSurvivalChecks: one outage just shorter than the low bound and one
// just longer than the high, each with a deadline for the outage and the
// client's schedule after it; none for a client that does not retry; the
// shorter alone for a lower bound; a side that does not fit in the
// budget is not run, and why is said.
func TestSurvivalChecks(t *testing.T) {
	prov, _ := LookupProvider("anthropic")
	p := &Profile{Confidence: map[string]Confidence{}, Policy: Policy{SurvivesOutageMs: map[string]*Survival{
		"529":  {Ms: 10000, Low: 9000, High: ptr(int64(11000))},
		"429":  {Ms: 40000, Low: 40000, AtLeast: true},
		"drop": {High: ptr(int64(0))},
	}}}
	type got struct {
		Key, Side string
		Ms        int64
		Deadline  time.Duration
	}
	var gs []got
	plans, why := SurvivalChecks(p, prov, time.Minute, 0.5)
	for _, c := range plans {
		gs = append(gs, got{c.Kind.Key, c.Side, c.OutageMs, c.Deadline})
	}
	want := []got{
		// (7650 + 12650) × 0.5 + 10s; (12650 + 12650) × 0.5 + 10s.
		{"529", CheckShorter, 7650, 20 * time.Second}, {"529", CheckLonger, 12650, 23 * time.Second},
		// (34000 + 40000) × 0.5 + 10s.
		{"429", CheckShorter, 34000, 47 * time.Second},
	}
	if diff := cmp.Diff(want, gs); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	if !strings.Contains(why["429"], "lower bound only") || !strings.Contains(why["drop"], "does not retry") {
		t.Errorf("why not: %v", why)
	}
	plans, why = SurvivalChecks(p, prov, 35*time.Second, 1)
	if len(plans) != 1 || plans[0].Side != CheckShorter || plans[0].Kind.Key != "529" || !strings.Contains(why["529"], "more than --budget 35s") {
		t.Errorf("a 35s budget: %+v, %v", plans, why)
	}
	p.NoteSurvivalChecks(why)
	if c := p.Policy.SurvivesOutageMs["529"].Check; c == nil || !strings.Contains(c.Note, "longer not run") {
		t.Errorf("the figure does not say why the longer check did not run: %+v", c)
	}
}

func TestFormatDur(t *testing.T) {
	for ms, want := range map[int64]string{0: "0ms", 850: "850ms", 4200: "4.2s", 59_999: "60s", 158_000: "2m38s", 3_900_000: "1h05m"} {
		if got := FormatDur(ms); got != want {
			t.Errorf("FormatDur(%d) = %q, want %q", ms, got, want)
		}
	}
}

// TestInferSurvivalWideJitter: runs that agree do not make the figure of a
// client whose backoff jitter is wide (full jitter) sure: each run's
// outage is a draw, and two may agree by chance.
func TestInferSurvivalWideJitter(t *testing.T) {
	prov, _ := LookupProvider("anthropic")
	obs := []Observation{run("529", 1, EndGaveUp, 0, 0, 1000, 3000), run("529", 2, EndGaveUp, 0, 0, 1000, 3010)}
	for _, tt := range []struct {
		jitter *Jitter
		want   string
	}{{nil, High}, {&Jitter{MinFactor: 0.75, MaxFactor: 1}, High}, {&Jitter{MinFactor: 0.02, MaxFactor: 1}, Low}} {
		p := &Profile{Confidence: map[string]Confidence{}, Policy: Policy{Backoff: Backoff{Jitter: tt.jitter}}}
		p.inferSurvival(prov, obs, nil, nil)
		s := p.Policy.SurvivesOutageMs["529"]
		if s == nil || s.Confidence != tt.want || p.Confidence["policy.survivesOutageMs.529"].Level != tt.want {
			t.Errorf("jitter %+v: %+v, want confidence %s", tt.jitter, s, tt.want)
		}
	}
}

// TestInferSurvivalNothingMeasured: a client that never reached the mock,
// or one not deterministic enough to profile, has every survival figure
// null, each inconclusive with the profile's reason.
func TestInferSurvivalNothingMeasured(t *testing.T) {
	prov, _ := LookupProvider("anthropic")
	obs := []Observation{{Fault: "400", Served: 1, End: EndGaveUp, Client: "exit status 1", Stderr: "no API key"},
		{Fault: "529", Outage: "529", Sample: 1, Served: 10, End: EndGaveUp, Client: "exit status 1"}}
	p := Infer(prov, obs)
	if p.Unreached == "" {
		t.Fatal("not unreached")
	}
	for _, k := range OutageKinds(prov) {
		if s, ok := p.Policy.SurvivesOutageMs[k.Key]; !ok || s != nil {
			t.Errorf("%s: %+v (present %v), want null", k.Key, s, ok)
		}
		found := false
		for _, in := range p.Inconclusive {
			found = found || in.Figure == survivalFig(k.Key) && in.Reason == p.Unreached
		}
		if !found {
			t.Errorf("%s: no inconclusive entry with the reason %q: %+v", k.Key, p.Unreached, p.Inconclusive)
		}
	}
}
