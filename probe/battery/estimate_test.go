package battery

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/probe"
)

// probes makes n probes of the fault named name with deadline d.
func probes(prov probe.Provider, name string, n int, d time.Duration) []Probe {
	f, ok := prov.Fault(name)
	if !ok {
		panic(name)
	}
	out := make([]Probe, n)
	for i := range out {
		out[i] = Probe{Fault: f, Deadline: d}
	}
	return out
}

// survival makes ps survival runs of kind key.
func survival(ps []Probe, key string) []Probe {
	for i := range ps {
		ps[i].Outage, ps[i].Sample = key, i+1
	}
	return ps
}

func TestEstimate(t *testing.T) {
	prov, _ := probe.LookupProvider("anthropic")
	exh := prov.Exhaust.Name
	claude := probe.Policy{MaxRetries: ptr(10), Backoff: probe.Backoff{InitialMs: ptr(500.0), Multiplier: ptr(2.0), MaxMs: ptr(32000.0),
		Jitter: &probe.Jitter{MinFactor: 1, MaxFactor: 1.25}}}
	sdk := probe.Policy{MaxRetries: ptr(2), Backoff: probe.Backoff{InitialMs: ptr(500.0), Multiplier: ptr(2.0), Jitter: &probe.Jitter{MinFactor: 0.75, MaxFactor: 1}}}
	tests := []struct {
		name     string
		ps       []Probe
		o        Options
		parallel int
		prior    *probe.Policy
		wantMs   int64
		expected *int64   // ExpectedExhaustionMs
		unknown  []string // each in one of Unknown, in order
	}{
		{name: "all at once: the longest deadline, twice (the exhaustion again)",
			ps:       slices2(probes(prov, "400", 1, 5*time.Second), probes(prov, exh, 2, 5*time.Second)),
			o:        Options{Samples: 2, Budget: 5 * time.Second, NoWarmUp: true},
			parallel: 8, wantMs: 7000 + 7000,
			unknown: []string{"policy.maxRetries and policy.backoff.maxMs, if the client is still retrying its 10 failures at --budget 5s"}},
		{name: "with the warm-up: the pilot (the 400, alone) first, then the same",
			ps:       slices2(probes(prov, "hang", 1, 15*time.Second), probes(prov, "400", 1, 5*time.Second), probes(prov, exh, 2, 5*time.Second)),
			o:        Options{Samples: 2, Budget: 5 * time.Second},
			parallel: 8, wantMs: 7000 + 17000 + 7000},
		{name: "a start grace: each deadline after up to the grace of start-up, the pilot's too",
			ps:       slices2(probes(prov, "400", 1, 5*time.Second), probes(prov, exh, 2, 5*time.Second)),
			o:        Options{Samples: 2, Budget: 5 * time.Second, StartGrace: 10 * time.Second},
			parallel: 8, wantMs: 17000 + 17000 + 17000},
		{name: "more scenarios than slots: Graham's bound, Σ/P + (1 − 1/P) × longest",
			ps:       probes(prov, "400", 5, 10*time.Second),
			o:        Options{Samples: 2, Budget: 10 * time.Second, NoWarmUp: true},
			parallel: 2, wantMs: 5*12000/2 + 12000/2 + 12000},
		{name: "one slot: the sum",
			ps:       probes(prov, "400", 3, 10*time.Second),
			o:        Options{Samples: 1, Budget: 10 * time.Second, NoWarmUp: true},
			parallel: 1, wantMs: 3*12000 + 12000},
		{name: "the hang and the large Retry-After: their deadline, and the ceiling's rounds at the budget's reach",
			ps:       slices2(probes(prov, "hang", 1, 15*time.Second), probes(prov, "429 retry-after 3600", 1, 15*time.Second), probes(prov, exh, 4, 2*time.Minute)),
			o:        Options{Samples: 4, Budget: 2 * time.Minute, CeilingRounds: 3, NoWarmUp: true},
			parallel: 4,
			// battery: (17 + 17 + 4 × 122)/4 + 122 × 3/4; again: 122; ceiling: 3 × 122 (88s × 1.25 + 10s = 120s).
			wantMs: (17000+17000+4*122000)/4 + 122000*3/4 + 122000 + 3*122000,
			unknown: []string{"its 10 failures at --budget 2m0s", "policy.timeoutMs, if the client waits on a hung attempt longer than 15s",
				"policy.retryAfter.ceilingMs, if it is above 88s"}},
		{name: "ceiling off: no rounds, said",
			ps:       slices2(probes(prov, "429 retry-after 3600", 1, 15*time.Second), probes(prov, exh, 2, time.Minute)),
			o:        Options{Samples: 2, Budget: time.Minute, NoWarmUp: true},
			parallel: 4, wantMs: 62000 + 62000,
			unknown: []string{"--budget 1m0s", "not bisected (--ceiling-rounds 0)"}},
		{name: "a budget too short to bisect the ceiling",
			ps:       slices2(probes(prov, "429 retry-after 3600", 1, 10*time.Second), probes(prov, exh, 2, 10*time.Second)),
			o:        Options{Samples: 2, Budget: 10 * time.Second, CeilingRounds: 3, NoWarmUp: true},
			parallel: 4, wantMs: 12000 + 12000,
			unknown: []string{"--budget 10s", "--budget 10s is too short to bisect it"}},
		{name: "survival runs: two checks per kind after the battery, each stopped within the budget",
			ps:       slices2(probes(prov, "400", 1, 5*time.Second), survival(probes(prov, "529", 2, 5*time.Second), "529")),
			o:        Options{Samples: 2, Budget: 5 * time.Second, NoWarmUp: true},
			parallel: 8, wantMs: 7000 + 7000 + 7000,
			unknown: []string{"--budget 5s"}},
		{name: "an earlier profile whose exhaustion outlasts the budget (Claude Code: 10 retries, 32s cap)",
			ps:       probes(prov, exh, 4, 2*time.Minute),
			o:        Options{Samples: 4, Budget: 2 * time.Minute, NoWarmUp: true},
			parallel: 4, prior: &claude, wantMs: 2 * 122000,
			// (0.5 + 1 + 2 + 4 + 8 + 16 + 32 × 4)s × 1.25
			expected: ptr(int64(199375)),
			unknown:  []string{"the earlier profile's waits add up to 3m19s: more than the budget: raise --budget"}},
		{name: "an earlier profile well within it (the SDKs: 2 retries)",
			ps:       probes(prov, exh, 4, 2*time.Minute),
			o:        Options{Samples: 4, Budget: 2 * time.Minute, NoWarmUp: true},
			parallel: 4, prior: &sdk, wantMs: 2 * 122000, expected: ptr(int64(1500)),
			unknown: []string{"add up to 2s: within it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Provider = prov
			e := estimate(tt.ps, tt.o, tt.parallel, tt.prior)
			if e.EstimatedMs != tt.wantMs {
				t.Errorf("EstimatedMs = %d, want %d (%s)", e.EstimatedMs, tt.wantMs, e.Bound)
			}
			if diff := cmp.Diff(tt.expected, e.ExpectedExhaustionMs); diff != "" {
				t.Errorf("ExpectedExhaustionMs mismatch (-want +got):\n%s", diff)
			}
			all := strings.Join(e.Unknown, "\n")
			for _, u := range tt.unknown {
				if !strings.Contains(all, u) {
					t.Errorf("Unknown does not say %q:\n%s", u, all)
				}
			}
			if e.Scenarios != len(tt.ps) || e.Parallel > len(tt.ps) || e.Bound == "" {
				t.Errorf("scenarios %d, parallel %d, bound %q", e.Scenarios, e.Parallel, e.Bound)
			}
		})
	}
}

// TestEstimateBoundsPlan: the estimate of a real plan is at least its
// longest deadline and at most every deadline run one after another.
func TestEstimateBoundsPlan(t *testing.T) {
	prov, _ := probe.LookupProvider("openai")
	o := Options{Provider: prov, CeilingRounds: DefaultCeilingRounds}
	ps, err := plan(o, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	e := estimate(ps, o, 4, nil)
	var sum time.Duration
	for _, p := range ps {
		sum += p.Deadline + scenarioOverhead
	}
	if got := time.Duration(e.EstimatedMs) * time.Millisecond; got < time.Duration(e.LongestMs)*time.Millisecond || got > sum+(4+3*3)*(defaultBudget+scenarioOverhead) {
		t.Errorf("estimate %s outside [%dms, %s]: %s", got, e.LongestMs, sum, e.Bound)
	}
}

func TestElapsedWriter(t *testing.T) {
	start := time.Unix(1000, 0)
	now := start
	var buf bytes.Buffer
	w := &elapsedWriter{w: &buf, start: start, now: func() time.Time { return now }, est: 3*time.Minute + 40*time.Second}
	now = start.Add(42 * time.Second)
	for _, s := range []string{"[probe-400] start", "ing\n[probe-429] PASS\n", "[probe-5"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	now = start.Add(61 * time.Second)
	w.Write([]byte("03] PASS\n"))
	want := "[0:42 of ≤ 3:40] [probe-400] starting\n[0:42 of ≤ 3:40] [probe-429] PASS\n[1:01 of ≤ 3:40] [probe-503] PASS\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("progress mismatch (-want +got):\n%s", diff)
	}
}

func TestElapsedWriterIdle(t *testing.T) {
	start := time.Unix(1000, 0)
	now := start
	var buf bytes.Buffer
	w := &elapsedWriter{w: &buf, start: start, now: func() time.Time { return now }, est: 5 * time.Minute}
	for _, step := range []struct {
		at   time.Duration
		line string // written at that time, if any
	}{{at: 10 * time.Second}, {at: 31 * time.Second}, {at: 40 * time.Second, line: "[probe-ceiling-1-38s] PASS\n"}, {at: 69 * time.Second}, {at: 71 * time.Second}} {
		now = start.Add(step.at)
		if step.line != "" {
			w.Write([]byte(step.line))
		}
		w.idle(30 * time.Second)
	}
	want := "[0:31 of ≤ 5:00] still probing: no progress line for 0:31 (a client waiting out a backoff or a Retry-After)\n" +
		"[0:40 of ≤ 5:00] [probe-ceiling-1-38s] PASS\n" +
		"[1:11 of ≤ 5:00] still probing: no progress line for 0:31 (a client waiting out a backoff or a Retry-After)\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("progress mismatch (-want +got):\n%s", diff)
	}
}

func slices2(parts ...[]Probe) []Probe {
	var out []Probe
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
