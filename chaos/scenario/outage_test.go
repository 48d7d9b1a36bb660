package scenario

import (
	"slices"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
)

const outageYAML = `name: outage
attempts:
  - status: 500
outage:
  seed: 7
  phases:
    - for: 90s
      mix:
        - {weight: 6, status: 529}
        - {weight: 1, drop: {afterBytes: 400}}
        - {weight: 3, ok: {}}
    - for: 30s
      mix: [{weight: 1, status: 429, retryAfter: 2}]
expect: {outcome: success}
`

func loadOutage(t *testing.T) *Scenario {
	t.Helper()
	sc, err := ParseScenario("outage.yaml", []byte(outageYAML))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestOutageLoad(t *testing.T) {
	t.Parallel()
	sc := loadOutage(t)
	o := sc.Outage
	if o == nil || o.Seed == nil || *o.Seed != 7 || len(o.Phases) != 2 {
		t.Fatalf("outage = %+v", o)
	}
	if got, want := o.Total(), 120*time.Second; got != want {
		t.Errorf("Total = %v, want %v", got, want)
	}
	var got []string
	for _, m := range o.Phases[0].Mix {
		got = append(got, fault.Describe(m.Fault.Kind))
	}
	if want := []string{"529", "drop after 400 bytes", "ok"}; !slices.Equal(got, want) {
		t.Errorf("phase 1 mix = %q, want %q", got, want)
	}
	if l := o.Phases[1].Mix[0].Fault.Line; l != 13 {
		t.Errorf("phase 2 entry line = %d, want 13", l)
	}
	if o.SeedOr(3) != 7 {
		t.Errorf("SeedOr ignores the outage's seed")
	}
	o.Seed = nil
	if o.SeedOr(3) != 3 {
		t.Errorf("SeedOr(3) without a seed = %d, want the run's 3", o.SeedOr(3))
	}
}

// TestOutageDrawPhase checks that the phase is chosen by the attempt's
// policy time since the outage began, half-open at each boundary, and
// that past the last phase the attempt is ok.
func TestOutageDrawPhase(t *testing.T) {
	t.Parallel()
	o := loadOutage(t).Outage
	for _, tc := range []struct {
		at        time.Duration
		phase     int
		wantNames []string // the kinds the phase can give
	}{
		{0, 1, []string{"status", "drop", "ok"}},
		{90*time.Second - 1, 1, []string{"status", "drop", "ok"}},
		{90 * time.Second, 2, []string{"status"}},
		{120*time.Second - 1, 2, []string{"status"}},
		{120 * time.Second, 0, []string{"ok"}},
		{time.Hour, 0, []string{"ok"}},
	} {
		for n := 1; n <= 20; n++ {
			f, phase, entry := o.Draw(7, n, tc.at)
			if phase != tc.phase || !slices.Contains(tc.wantNames, f.Name()) {
				t.Errorf("Draw(7, %d, %v) = %s phase %d, want phase %d, one of %q", n, tc.at, f.Name(), phase, tc.phase, tc.wantNames)
			}
			if (phase == 0) != (entry == 0) {
				t.Errorf("Draw(7, %d, %v): phase %d entry %d", n, tc.at, phase, entry)
			}
		}
	}
}

// TestOutageDrawReproducible checks that the draws are a function of the
// seed and the attempt's number: the same seed gives the same sequence,
// another seed another, and the weights hold over many draws.
func TestOutageDrawReproducible(t *testing.T) {
	t.Parallel()
	o := loadOutage(t).Outage
	seq := func(seed int64) []int {
		var out []int
		for n := 1; n <= 200; n++ {
			_, _, e := o.Draw(seed, n, time.Second)
			out = append(out, e)
		}
		return out
	}
	a, b := seq(7), seq(7)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed gave two sequences")
	}
	for _, other := range []int64{8, -7, 0, 1 << 40} {
		if slices.Equal(a, seq(other)) {
			t.Errorf("seeds 7 and %d gave the same sequence", other)
		}
	}
	// Attempt n's draw does not depend on the attempts before it.
	for n := 1; n <= 200; n++ {
		if _, _, e := o.Draw(7, n, 0); e != a[n-1] {
			t.Fatalf("attempt %d drew entry %d at 0s, %d at 1s", n, e, a[n-1])
		}
	}
	// Weights 6:1:3 over 10 000 draws (seeded: the counts are fixed).
	count := make([]int, 4)
	for n := 1; n <= 10000; n++ {
		_, _, e := o.Draw(7, n, 0)
		count[e]++
	}
	for e, want := range map[int]int{1: 6000, 2: 1000, 3: 3000} {
		if d := count[e] - want; d < -300 || d > 300 {
			t.Errorf("entry %d drawn %d times of 10000, want about %d", e, count[e], want)
		}
	}
}

// TestMetFault checks that attempts[] comes first, then the outage's draw
// as the journal records it, and that WithMet makes the list the checks
// read.
func TestMetFault(t *testing.T) {
	t.Parallel()
	sc := loadOutage(t)
	for _, tc := range []struct {
		n, phase, entry int
		want            string
	}{
		{1, 0, 0, "500"},
		{1, 1, 1, "500"}, // attempts[] wins
		{2, 1, 1, "529"},
		{2, 1, 2, "drop after 400 bytes"},
		{3, 2, 1, "429 retry-after=2"},
		{4, 0, 0, "ok"},
		{4, 3, 1, "ok"}, // no such phase
		{4, 1, 9, "ok"}, // no such entry
	} {
		if got := fault.Describe(sc.MetFault(tc.n, tc.phase, tc.entry).Kind); got != tc.want {
			t.Errorf("MetFault(%d, %d, %d) = %q, want %q", tc.n, tc.phase, tc.entry, got, tc.want)
		}
	}
	met := []Fault{sc.MetFault(1, 0, 0), sc.MetFault(2, 1, 1)}
	w := sc.WithMet(met)
	if w.Outage != nil || len(w.Attempts) != 2 || w.Attempts[1].Name() != "status" || sc.Outage == nil || len(sc.Attempts) != 1 {
		t.Errorf("WithMet = %+v (scenario now %+v)", w, sc)
	}
	plain := &Scenario{}
	if plain.WithMet(met) != plain {
		t.Error("WithMet changed a scenario without an outage")
	}
}

// FuzzOutage: whatever the file, an outage the loader accepts has phases
// of positive length with mixes of positive weights, and Draw stays inside
// them.
func FuzzOutage(f *testing.F) {
	f.Add([]byte(outageYAML), int64(7), uint16(3), int64(95_000))
	f.Add([]byte("outage: {phases: [{for: 1s, mix: [{weight: 2, ok: {}}, {weight: 1, stall: {afterEvents: 1}}]}]}\nexpect: {}"), int64(-1), uint16(1), int64(0))
	f.Add([]byte("outage: {phases: [{for: 1s, mix: [{weight: 1, status: 0}]}]}"), int64(0), uint16(2), int64(999_999_999))
	f.Fuzz(func(t *testing.T, data []byte, seed int64, n uint16, atNs int64) {
		sc, err := ParseScenario("fuzz.yaml", data)
		if err != nil || sc.Outage == nil {
			return
		}
		o := sc.Outage
		if len(o.Phases) == 0 {
			t.Fatal("an outage without phases loaded")
		}
		for _, p := range o.Phases {
			if p.For <= 0 || len(p.Mix) == 0 {
				t.Fatalf("phase %+v loaded", p)
			}
			for _, m := range p.Mix {
				if m.Weight < 1 || m.Weight > MaxMixWeight {
					t.Fatalf("weight %d loaded", m.Weight)
				}
			}
		}
		_, phase, entry := o.Draw(seed, int(n), time.Duration(atNs))
		if phase < 0 || phase > len(o.Phases) || (phase == 0) != (entry == 0) || phase > 0 && entry > len(o.Phases[phase-1].Mix) {
			t.Fatalf("Draw = phase %d entry %d of %d phases", phase, entry, len(o.Phases))
		}
	})
}
