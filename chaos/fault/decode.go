package fault

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/internal/yamldiag"
)

// Decoder is the scenario loader, as a kind's Decode uses it: it decodes
// YAML nodes the way every other field of a scenario is decoded and records
// problems at their file, line and field.
type Decoder interface {
	// Fields checks that n is a mapping of known keys, none given twice,
	// reporting each problem; it returns the key nodes it accepted, in
	// order, and whether n is a mapping.
	Fields(n *yaml.Node, path string, known []string) ([]*yaml.Node, bool)
	// Decode decodes n into v, a pointer, as the loader decodes a field of
	// v's type (yaml tags, durations, bounds on numbers).
	Decode(n *yaml.Node, v any, path string)
	// Add records a problem at n in the field path path.
	Add(n *yaml.Node, path, msg, hint string)
}

// Mapping is one fault mapping of a scenario file, as a kind's Decode sees
// it.
type Mapping struct {
	d     Decoder
	path  string
	keys  map[string]*yaml.Node // key → key node
	vals  map[string]*yaml.Node // key → value node
	named []string
}

// Decode decodes the fault mapping n (at path, e.g. "attempts[2]"): every
// kind whose keys it holds decodes them; more than one kind is a problem,
// and so is a key no kind knows. It returns the kind the mapping names (nil
// for ok).
func Decode(d Decoder, n *yaml.Node, path string) Kind {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	keys, ok := d.Fields(n, path, Keys())
	if !ok {
		return nil
	}
	m := &Mapping{d: d, path: path, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}}
	for _, k := range keys {
		m.keys[k.Value] = k
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i] == k {
				m.vals[k.Value] = n.Content[i+1]
			}
		}
	}
	defs := Defs()
	for _, def := range defs {
		if m.Has(def.Kind.Name()) {
			m.named = append(m.named, def.Kind.Name())
		}
	}
	if len(m.named) > 1 {
		d.Add(n, path, fmt.Sprintf("one attempt has %d fault kinds (%s)", len(m.named), strings.Join(m.named, ", ")),
			"give each attempt one kind; add another list item for the next attempt")
	}
	var kind Kind
	for _, def := range defs {
		if !m.Has(def.Kind.Name()) && !slices.ContainsFunc(def.Keys, m.Has) {
			continue
		}
		if k := def.Decode(m); k != nil && kind == nil {
			kind = k
		}
	}
	return kind
}

// Has reports whether the mapping holds key.
func (m *Mapping) Has(key string) bool { _, ok := m.vals[key]; return ok }

// Value is key's value node (nil when absent).
func (m *Mapping) Value(key string) *yaml.Node { return m.vals[key] }

// Key is key's own node (nil when absent), for problems about the key.
func (m *Mapping) Key(key string) *yaml.Node { return m.keys[key] }

// Path is the field path of key, e.g. "attempts[2].retryAfter".
func (m *Mapping) Path(key string) string { return yamldiag.Join(m.path, key) }

// Named lists the kinds the mapping names, in Order.
func (m *Mapping) Named() []string { return m.named }

// Decode decodes key's value into v (a pointer) when the mapping holds key.
func (m *Mapping) Decode(key string, v any) {
	if n := m.vals[key]; n != nil {
		m.d.Decode(n, v, m.Path(key))
	}
}

// Errorf records a problem at node n in the field path field; hint says
// what to do about it.
func (m *Mapping) Errorf(n *yaml.Node, field, hint, format string, args ...any) {
	m.d.Add(n, field, fmt.Sprintf(format, args...), hint)
}
