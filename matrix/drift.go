package matrix

import (
	"math"
	"slices"
	"strings"
)

// Diff sets each entry's Changes of m against old, client by client (by
// name): every cell whose value changed, its version too. A client new in
// m has one change, "client" from "absent"; one gone is not in m to
// carry it (Removed lists them).
func Diff(old, m *Matrix) (removed []string) {
	for i := range m.Clients {
		e := &m.Clients[i]
		e.Changes = nil
		o := old.Find(e.Name)
		if o == nil {
			e.Changes = []Change{{Column: "client", Before: "absent", After: e.Version}}
			continue
		}
		if o.Version != e.Version {
			e.Changes = append(e.Changes, Change{Column: "version", Before: o.Version, After: e.Version})
		}
		before, after := o.Cells(), e.Cells()
		for j := range after {
			b, a := before[j], after[j]
			if (b.Value != a.Value || b.State != a.State) && !withinNoise(b, a) {
				e.Changes = append(e.Changes, Change{Column: a.Key, Before: show(b), After: show(a), BeforeNum: b.Num, AfterNum: a.Num})
			}
		}
	}
	for _, o := range old.Clients {
		if m.Find(o.Name) == nil {
			removed = append(removed, o.Name)
		}
	}
	return removed
}

// NoiseShare is how far apart two measured numbers of a cell may be and
// still be the same figure: the probe's timed figures (waits, survival)
// move by the machine's load from one probe to the next, and a drift
// report of noise would hide the changes that matter.
const NoiseShare = 0.10

// withinNoise reports whether two known numeric cells differ by no more
// than NoiseShare of the larger (an "at least" figure against a figure is
// a change).
func withinNoise(b, a Cell) bool {
	if b.State != Known || a.State != Known || b.Num == nil || a.Num == nil ||
		strings.HasPrefix(b.Value, ">=") != strings.HasPrefix(a.Value, ">=") {
		return false
	}
	x, y := *b.Num, *a.Num
	return math.Abs(x-y) <= NoiseShare*math.Max(math.Abs(x), math.Abs(y))
}

// show is a cell as a change says it: its value, or its state.
func show(c Cell) string {
	if c.State == Known {
		if c.Value == "" {
			return "none"
		}
		return c.Value
	}
	return c.State
}

// Changed reports whether column key of e changed.
func (e *Entry) Changed(key string) bool {
	return slices.ContainsFunc(e.Changes, func(c Change) bool { return c.Column == key })
}
