package probe

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/retry/policyfile"
)

// shape gives one probe's observation: i is its index in the battery.
type shape func(f Fault, i int) Observation

// every is the battery (decision probes, 4 exhaustion samples, a round
// of ceiling probes) observed with one shape.
func every(prov Provider, sh shape) []Observation {
	var obs []Observation
	for i, f := range prov.Faults {
		obs = append(obs, sh(f, i))
	}
	for s := 1; s <= 4; s++ {
		o := sh(prov.Exhaust, len(prov.Faults)+s)
		o.Sample = s
		obs = append(obs, o)
	}
	for i, v := range []int64{5000, 30000, 90000} {
		o := sh(CeilingFault(prov, v), 100+i)
		o.Round, o.RetryAfterMs = 1, v
		obs = append(obs, o)
	}
	return obs
}

// inferAll runs everything a profile goes through after Infer (the
// preset conformance, the policy file and its parse, --against, the
// JSON) and fails on an error; a panic fails the test by itself.
func inferAll(t *testing.T, prov Provider, obs []Observation) *Profile {
	t.Helper()
	p := Infer(prov, obs)
	p.Conformance = Conform(p, prov)
	if _, err := json.Marshal(p); err != nil {
		t.Fatalf("the profile is not JSON: %v", err)
	}
	text := PolicyYAML(p, prov)
	if _, err := policyfile.Parse([]byte(text), "probed.yaml"); err != nil {
		t.Fatalf("the policy does not parse: %v\n%s", err, text)
	}
	Compare(p, p)
	Compare(p, &Profile{})
	Compare(&Profile{}, p)
	for k, sv := range p.Policy.SurvivesOutageMs {
		if sv != nil && (sv.Low < 0 || sv.Ms < 0 || sv.High != nil && (*sv.High < sv.Ms || sv.Low > sv.Ms) || sv.AtLeast && sv.High != nil) {
			t.Fatalf("survivesOutageMs.%s not a figure: %+v", k, sv)
		}
	}
	plans, _ := SurvivalChecks(p, prov, time.Minute, 1)
	for _, c := range plans {
		if c.OutageMs <= 0 || c.Deadline > time.Minute {
			t.Fatalf("check %+v", c)
		}
	}
	return p
}

// TestInferDegenerate runs Infer over every degenerate shape an
// observation can take (issue: chaos probe panicked in inferLarge on a
// client that never reached the mock, o.WaitsMs[0] with 0 attempts). None
// may panic, each profile must be JSON, its policy must parse, and a
// client that never reached the mock is said so, with what it showed, for
// every figure.
func TestInferDegenerate(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name string
		sh   shape
		// unreached: the profile's Unreached must hold these.
		unreached []string
	}{
		{"exits at once with a status", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndGaveUp, Client: "exit status 3", Stderr: "boom: no key"}
		}, []string{"never reached the mock", "exit status 3", "stderr: boom: no key"}},
		{"exits 0 at once (true)", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndSucceeded, Client: "exit status 0"}
		}, []string{"never reached the mock: exit status 0"}},
		{"killed at the deadline before any request (sleep 300)", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndStopped, DeadlineMs: 10000, Client: "killed after 10s: still running at the deadline"}
		}, []string{"never reached the mock: killed after 10s"}},
		{"nothing said of how it ended", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndGaveUp}
		}, []string{"never reached the mock"}},
		{"the warm-up request only, then exit 1", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndGaveUp, WarmUpOnly: true, Client: "exit status 1"}
		}, []string{"the client sent its warm-up request only, no probed one: exit status 1"}},
		{"one attempt, gave up", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndGaveUp, Attempts: 1}
		}, nil},
		{"one attempt, killed at the deadline", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndStopped, Attempts: 1, DeadlineMs: 15000}
		}, nil},
		{"retried but no wait journaled", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndSucceeded, Attempts: 3}
		}, nil},
		{"waits but no attempt", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndGaveUp, WaitsMs: []float64{500, 1000}}
		}, []string{"never reached the mock"}},
		{"waits of 0", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndGaveUp, Attempts: 4, WaitsMs: []float64{0, 0, 0}}
		}, nil},
		{"a wait of 0 then growth", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndGaveUp, Attempts: 4, WaitsMs: []float64{0, 500, 1000}}
		}, nil},
		{"not finite, negative and huge figures", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndGaveUp, Attempts: 5, WaitsMs: []float64{nan, -inf, -3, 1e300},
				NoiseMs: nan, WaitNoiseMs: []float64{inf}, DateLeadMs: nan, FirstAttemptMs: -1, RetryAfterMs: -5}
		}, nil},
		{"noise per wait shorter and longer than the waits", func(f Fault, i int) Observation {
			o := Observation{Fault: f.Name, End: EndGaveUp, Attempts: 3, WaitsMs: []float64{500, 1000}, NoiseMs: 4}
			if i%2 == 0 {
				o.WaitNoiseMs = []float64{4}
			} else {
				o.WaitNoiseMs = []float64{4, 4, 4, 4}
			}
			return o
		}, nil},
		{"negative attempts", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndGaveUp, Attempts: -2, WaitsMs: []float64{10}}
		}, []string{"never reached the mock"}},
		{"every probe not run (interrupted)", func(f Fault, i int) Observation {
			return Observation{Fault: f.Name, End: EndNotRun, Note: "interrupted"}
		}, nil},
		{"a mix, one of each by turn", func(f Fault, i int) Observation {
			shapes := []Observation{
				{End: EndGaveUp, Client: "exit status 1"},
				{End: EndStopped, Attempts: 1},
				{End: EndSucceeded, Attempts: 2, WaitsMs: []float64{480}},
				{End: EndGaveUp, Attempts: 3, WaitsMs: []float64{500, 1000}, WaitNoiseMs: []float64{900}},
				{End: EndNotRun},
				{End: EndSucceeded, Attempts: 2},
			}
			o := shapes[i%len(shapes)]
			o.Fault = f.Name
			return o
		}, nil},
	}
	for _, name := range ProviderNames() {
		prov, _ := LookupProvider(name)
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				p := inferAll(t, prov, every(prov, c.sh))
				if len(c.unreached) == 0 {
					if p.Unreached != "" {
						t.Errorf("Unreached = %q, want none", p.Unreached)
					}
					return
				}
				for _, want := range c.unreached {
					if !strings.Contains(p.Unreached, want) {
						t.Errorf("Unreached = %q, want it to hold %q", p.Unreached, want)
					}
				}
				if len(p.Confidence) > 0 {
					t.Errorf("figures told of a client that never reached the mock: %v", p.Confidence)
				}
				for _, in := range p.Inconclusive {
					if in.Reason != p.Unreached {
						t.Errorf("%s: reason %q, want %q", in.Figure, in.Reason, p.Unreached)
					}
				}
				if p.Policy.MaxRetries != nil || p.Policy.Backoff.InitialMs != nil || p.Policy.RetryAfter.Large != "" {
					t.Errorf("figures set: %+v", p.Policy)
				}
				for _, fr := range p.Faults {
					if fr.Retried != nil || !strings.Contains(fr.Note, c.unreached[0]) {
						t.Errorf("%s: retried %v, note %q", fr.Fault, fr.Retried, fr.Note)
					}
				}
			})
		}
	}
}

// FuzzInfer runs Infer, Conform, PolicyYAML and Compare over observations
// built from random bytes: any count of attempts (negative too), ends,
// waits (NaN, infinities, negative, huge), noise lists of any length,
// ceiling rounds. Nothing may panic or loop, the profile must be JSON and
// its policy must parse.
func FuzzInfer(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0})
	f.Add([]byte{1, 20, 3, 2, 2, 10, 20, 1, 5, 0, 4, 9})
	f.Add([]byte{2, 200, 0, 255, 3, 250, 251, 252, 3, 253, 254, 0})
	f.Add([]byte("any bytes at all, read as observations"))
	f.Fuzz(func(t *testing.T, data []byte) {
		names := ProviderNames()
		r := byteReader(data)
		prov, _ := LookupProvider(names[int(r.next())%len(names)])
		var obs []Observation
		for len(obs) < 24 && r.more() {
			obs = append(obs, r.observation(prov))
		}
		inferAll(t, prov, obs)
	})
}

// byteReader reads fuzz bytes as figures; past the end it reads zeros.
type byteReader []byte

func (r *byteReader) more() bool { return len(*r) > 0 }

func (r *byteReader) next() byte {
	if len(*r) == 0 {
		return 0
	}
	b := (*r)[0]
	*r = (*r)[1:]
	return b
}

// ms reads a figure in ms: the special values at the top of the byte
// range, else a wait from 0 to about 60 s on a quadratic scale.
func (r *byteReader) ms() float64 {
	switch b := r.next(); b {
	case 255:
		return math.NaN()
	case 254:
		return math.Inf(1)
	case 253:
		return math.Inf(-1)
	case 252:
		return -1
	case 251:
		return 1e300
	case 250:
		return math.SmallestNonzeroFloat64
	default:
		return float64(b) * float64(b)
	}
}

func (r *byteReader) list(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = r.ms()
	}
	return out
}

func (r *byteReader) observation(prov Provider) Observation {
	all := append(append([]Fault{}, prov.Faults...), prov.Exhaust)
	f := all[int(r.next())%len(all)]
	ends := []string{EndSucceeded, EndGaveUp, EndStopped, EndNotRun}
	o := Observation{Fault: f.Name, Attempts: int(int8(r.next())) % 40, End: ends[int(r.next())%len(ends)]}
	o.WaitsMs = r.list(int(r.next() % 12))
	o.WaitNoiseMs = r.list(int(r.next() % 12))
	o.NoiseMs, o.DateLeadMs = r.ms(), r.ms()-3000
	o.FirstAttemptMs, o.DeadlineMs = int64(r.ms()), int64(r.ms())
	switch b := r.next(); {
	case f.Name == prov.Exhaust.Name:
		o.Sample = int(b % 8)
	case b%4 == 0:
		o.Round, o.RetryAfterMs = int(b%3)+1, int64(r.next())*1000
		o.Fault = CeilingFault(prov, o.RetryAfterMs).Name
	case b%4 == 1:
		// A survival run, or a check of it.
		ks := OutageKinds(prov)
		k := ks[int(r.next())%len(ks)]
		o.Fault, o.Outage, o.Served = k.Fault.Name, k.Key, int(r.next()%12)
		switch r.next() % 3 {
		case 1:
			o.Check, o.OutageMs = CheckShorter, int64(r.ms())
		case 2:
			o.Check, o.OutageMs = CheckLonger, int64(r.ms())
		}
	}
	o.ArrivalsMs = r.list(int(r.next() % 12))
	if o.Attempts == 0 && r.next()%2 == 0 {
		o.Client, o.Stderr = "exit status 3", "boom"
	}
	return o
}
