package scenario

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseComparison(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Comparison
		wantErr string
	}{
		{in: "<= 1.5", want: Comparison{"<=", 1.5}},
		{in: ">=0.9", want: Comparison{">=", 0.9}},
		{in: "  < 2 ", want: Comparison{"<", 2}},
		{in: "> 0", want: Comparison{">", 0}},
		{in: "<= 1e3", want: Comparison{"<=", 1000}},
		{in: "1.5", wantErr: "does not start with"},
		{in: "=< 1.5", wantErr: "bounded, not matched"},
		{in: "~ 1.5", wantErr: "does not start with"},
		{in: "== 1", wantErr: "bounded, not matched"},
		{in: "!= 1", wantErr: "bounded, not matched"},
		{in: "<=", wantErr: "is not a number"},
		{in: "<= abc", wantErr: "is not a number"},
		{in: "<= NaN", wantErr: "not a finite number"},
		{in: ">= Inf", wantErr: "not a finite number"},
		{in: "<= 1e10", wantErr: "beyond"},
		{in: "", wantErr: "does not start with"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseComparison(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseComparison(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseComparison(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestComparisonHolds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    Comparison
		v    float64
		want bool
	}{
		{Comparison{"<=", 1.5}, 1.5, true},
		{Comparison{"<", 1.5}, 1.5, false},
		{Comparison{">=", 0.9}, 0.9, true},
		{Comparison{">", 0.9}, 0.9, false},
		{Comparison{">", 0.9}, 0.91, true},
		{Comparison{"<=", 0.3}, 0.31, false},
	} {
		if got := tc.c.Holds(tc.v); got != tc.want {
			t.Errorf("%s holds for %v = %v, want %v", tc.c, tc.v, got, tc.want)
		}
	}
}

func TestFleetLoad(t *testing.T) {
	t.Parallel()
	sc, err := ParseScenario("f.yaml", []byte(`name: f
fleet: {clients: 12, stagger: 200ms}
outage: {phases: [{for: 10s, mix: [{weight: 1, status: 529}]}]}
expect:
  fleet: {survived: 12, amplification: "<= 1.5", synchrony: "<= 0.3", recoveredWithin: 20s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Fleet == nil || sc.Fleet.Clients != 12 || sc.Fleet.Stagger.D() != 200*time.Millisecond || sc.FleetClients() != 12 {
		t.Errorf("fleet = %+v", sc.Fleet)
	}
	ef := sc.Expect.Fleet
	if ef == nil || *ef.Survived != 12 || *ef.Amplification != (Comparison{"<=", 1.5}) || *ef.Synchrony != (Comparison{"<=", 0.3}) || ef.RecoveredWithin.D() != 20*time.Second {
		t.Errorf("expect.fleet = %+v", ef)
	}
	if sc.Lines["expect.fleet"] != 5 {
		t.Errorf("expect.fleet line = %d, want 5", sc.Lines["expect.fleet"])
	}
}

func TestFleetLoadErrors(t *testing.T) {
	t.Parallel()
	// Each file starts with "name: f": its own lines start at 2. want is
	// the error's line, and words of its message or hint.
	tests := []struct {
		name, yaml string
		line       int
		want       string
	}{
		{"no clients", "fleet: {stagger: 1s}", 2, "a fleet needs clients"},
		{"zero clients", "fleet: {clients: 0}", 2, "a fleet has at least 1 client"},
		{"too many clients", "fleet: {clients: 1001}", 2, "at most 1000 clients"},
		{"stagger too long", "fleet: {clients: 2, stagger: 11m}", 2, "at most 10m0s"},
		{"unknown key", "fleet: {clients: 2, stager: 1s}", 2, "did you mean stagger?"},
		{"empty", "fleet:", 2, "fleet is empty"},
		{"expect without fleet", "expect: {fleet: {survived: 1}}", 2, "expect.fleet needs a fleet"},
		{"survived above clients", "fleet: {clients: 2}\nexpect: {fleet: {survived: 3}}", 3, "between 0 and the fleet's 2 clients"},
		{"not a string comparison", "fleet: {clients: 2}\nexpect: {fleet: {synchrony: 0.3}}", 3, `"0.3" does not start with`},
		{"comparison not a scalar", "fleet: {clients: 2}\nexpect: {fleet: {synchrony: [1]}}", 3, "want a comparison"},
		{"synchrony above 1", "fleet: {clients: 2}\nexpect: {fleet: {synchrony: '<= 2'}}", 3, "synchrony is a share"},
		{"amplification below 1", "fleet: {clients: 2}\nexpect: {fleet: {amplification: '<= 0.5'}}", 3, "1 or more"},
		{"recovery without outage", "fleet: {clients: 2}\nexpect: {fleet: {recoveredWithin: 5s}}", 3, "there is none"},
		{"proxy fault", "fleet: {clients: 2}\nattempts:\n  - reset: {}", 4, "needs the proxy to itself"},
		{"proxy fault in an outage", "fleet: {clients: 2}\noutage:\n  phases:\n    - for: 1s\n      mix:\n        - {weight: 1, drop: {afterBytes: 10}}", 7, "outage.phases[0].mix[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScenario("f.yaml", []byte("name: f\n"+tt.yaml))
			var le LoadErrors
			if !errors.As(err, &le) {
				t.Fatalf("error %v (%T); want LoadErrors", err, err)
			}
			for _, e := range le {
				if e.Line == tt.line && strings.Contains(e.Error()+" hint: "+e.Hint, tt.want) {
					return
				}
			}
			var got []string
			for _, e := range le {
				got = append(got, e.Error()+" hint: "+e.Hint)
			}
			t.Errorf("errors %q; want one on line %d with %q", got, tt.line, tt.want)
		})
	}
}

func FuzzParseComparison(f *testing.F) {
	for _, s := range []string{"<= 1.5", ">=0.9", "< -3", "> 1e9", "<=", "== 1", "<= NaN", " >= 0x1p-2 ", "<=\t1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseComparison(s)
		if err != nil {
			return
		}
		if math.IsNaN(c.Value) || math.IsInf(c.Value, 0) || math.Abs(c.Value) > MaxComparisonValue {
			t.Fatalf("ParseComparison(%q) = %v: not a finite bounded number", s, c)
		}
		back, err := ParseComparison(c.String())
		if err != nil || back != c {
			t.Fatalf("ParseComparison(%q) = %v, which reads back as %v, %v", s, c, back, err)
		}
		if c.Holds(c.Value) != (c.Op == "<=" || c.Op == ">=") {
			t.Fatalf("%v holds for its own value: %v", c, c.Holds(c.Value))
		}
	})
}
