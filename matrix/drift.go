package matrix

import "slices"

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
			if b.Value != a.Value || b.State != a.State {
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
