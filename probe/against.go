package probe

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/retrylab/retrylab/internal/regfile"
)

// Change is one difference between an earlier profile and this one.
type Change struct {
	Figure string `json:"figure"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// MaxProfileBytes bounds a profile LoadProfile reads: a profile is a few
// KiB, and a device such as /dev/zero never ends.
const MaxProfileBytes = 16 << 20

// LoadProfile reads a profile written by `chaos probe --format json`: a
// regular file of at most MaxProfileBytes (a FIFO, a device or a folder is
// a *regfile.NotRegularError at once, never opened in a way that blocks).
func LoadProfile(path string) (*Profile, error) {
	data, err := regfile.ReadFile(path, MaxProfileBytes)
	if err != nil {
		return nil, err
	}
	var p Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: not a probe profile: %w", path, err)
	}
	if p.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, p.Schema, Schema)
	}
	return &p, nil
}

// Compare says what changed from before to after: every decision that
// flipped, and every figure that moved by more than the probe's accuracy
// (15%) or became known or unknown. Figures the probe cannot tell in one of
// the two are listed as such, not as changes of value.
func Compare(before, after *Profile) []Change {
	out := []Change{}
	old := map[string]FaultResult{}
	for _, f := range before.Faults {
		if f.Sample <= 1 {
			old[f.Fault] = f
		}
	}
	for _, f := range after.Faults {
		o, ok := old[f.Fault]
		if !ok || f.Sample > 1 {
			continue
		}
		if tri(o.Retried) != tri(f.Retried) {
			out = append(out, Change{Figure: "retries " + f.Fault, Before: tri(o.Retried), After: tri(f.Retried)})
		}
	}
	b, a := before.Policy, after.Policy
	cmpInt := func(fig string, x, y *int) {
		if fmtPtr(x) != fmtPtr(y) {
			out = append(out, Change{Figure: fig, Before: fmtPtr(x), After: fmtPtr(y)})
		}
	}
	cmpF := func(fig string, x, y *float64) {
		if (x == nil) != (y == nil) || (x != nil && math.Abs(*x-*y) > 0.15*math.Abs(*x)) {
			out = append(out, Change{Figure: fig, Before: fmtPtr(x), After: fmtPtr(y)})
		}
	}
	cmpInt("policy.maxRetries", b.MaxRetries, a.MaxRetries)
	cmpF("policy.backoff.initialMs", b.Backoff.InitialMs, a.Backoff.InitialMs)
	cmpF("policy.backoff.multiplier", b.Backoff.Multiplier, a.Backoff.Multiplier)
	cmpF("policy.backoff.maxMs", b.Backoff.MaxMs, a.Backoff.MaxMs)
	for _, x := range []struct {
		fig  string
		x, y *bool
	}{{"policy.retryAfter.seconds", b.RetryAfter.Seconds, a.RetryAfter.Seconds},
		{"policy.retryAfter.ms", b.RetryAfter.Ms, a.RetryAfter.Ms},
		{"policy.retryAfter.httpDate", b.RetryAfter.HTTPDate, a.RetryAfter.HTTPDate}} {
		if tri(x.x) != tri(x.y) {
			out = append(out, Change{Figure: x.fig, Before: tri(x.x), After: tri(x.y)})
		}
	}
	if b.RetryAfter.Large != a.RetryAfter.Large {
		out = append(out, Change{Figure: "policy.retryAfter.large", Before: b.RetryAfter.Large, After: a.RetryAfter.Large})
	}
	cmpF("policy.retryAfter.ceilingMs", floatOf(b.RetryAfter.CeilingMs), floatOf(a.RetryAfter.CeilingMs))
	return append(out, compareSurvival(b.SurvivesOutageMs, a.SurvivesOutageMs)...)
}

// compareSurvival lists the survival figures that moved by more than 15%,
// became (un)known, or turned into or from a lower bound: only the kinds
// both profiles hold (a profile written before the figure existed has
// none, and that is no change of the client).
func compareSurvival(before, after map[string]*Survival) []Change {
	var out []Change
	for _, k := range survivalKeys(after) {
		x, ok := before[k]
		if !ok {
			continue
		}
		y := after[k]
		bs, as := survivalValue(x), survivalValue(y)
		moved := x != nil && y != nil && x.AtLeast == y.AtLeast && math.Abs(float64(y.Ms-x.Ms)) > 0.15*float64(x.Ms)
		if bs != as && (moved || (x == nil) != (y == nil) || x != nil && y != nil && x.AtLeast != y.AtLeast) {
			out = append(out, Change{Figure: survivalFig(k), Before: bs, After: as})
		}
	}
	return out
}

func survivalValue(s *Survival) string {
	switch {
	case s == nil:
		return "unknown"
	case s.AtLeast:
		return fmt.Sprintf("at least %d", s.Ms)
	}
	return fmt.Sprint(s.Ms)
}

func survivalKeys(m map[string]*Survival) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func floatOf(v *int64) *float64 {
	if v == nil {
		return nil
	}
	return ptr(float64(*v))
}

func tri(b *bool) string {
	if b == nil {
		return "unknown"
	}
	return yesNo(*b)
}

func fmtPtr[T any](p *T) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprint(*p)
}
