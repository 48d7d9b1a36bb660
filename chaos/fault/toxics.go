package fault

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/internal/yamldiag"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// Toxics puts the scenario's raw Toxiproxy toxics on the proxy before the
// attempt connects, with toxicity 1.0 unless the scenario says otherwise;
// the mock answers ok and the toxics do the rest. They may hold the request
// back, so a connection that closes without one is the attempt.
type Toxics []Toxic

func init() { Register(Def{Kind: Toxics{}, Order: 70, Decode: decodeToxics}) }

// MaxDuration bounds every duration of a scenario file
// (chaos.MaxScenarioDuration), and so the toxics' times.
const MaxDuration = 24 * time.Hour

// ToxicTypes are the toxic types Toxiproxy v2 knows.
var ToxicTypes = []string{"bandwidth", "latency", "limit_data", "noop", "reset_peer", "slicer", "slow_close", "timeout"}

func decodeToxics(m *Mapping) Kind {
	var ts Toxics
	m.Decode("toxics", (*[]Toxic)(&ts))
	seq := m.Value("toxics")
	for i, tx := range ts {
		if seq == nil || i >= len(seq.Content) {
			break
		}
		validateToxic(m, seq.Content[i], tx, fmt.Sprintf("%s[%d]", m.Path("toxics"), i))
	}
	if len(ts) == 0 {
		return nil // toxics: [] is nothing: ok
	}
	return ts
}

// validateToxic checks one raw toxic: its type, attributes, stream and
// toxicity.
func validateToxic(m *Mapping, tn *yaml.Node, tx Toxic, tp string) {
	tm := yamldiag.Fields(tn)
	validateToxicAttrs(m, tn, tm["attributes"], tx.Type, tx.Attributes, tp)
	if !slices.Contains(ToxicTypes, tx.Type) {
		hint := "toxic types: " + strings.Join(ToxicTypes, ", ")
		if s := yamldiag.Closest(tx.Type, ToxicTypes); s != "" {
			hint = "did you mean " + s + "?"
		}
		node := tm["type"]
		if node == nil {
			node = tn
		}
		m.Errorf(node, yamldiag.Join(tp, "type"), hint, "unknown toxic type %q", tx.Type)
	}
	switch tx.Stream {
	case "", "upstream", "downstream":
	default:
		m.Errorf(tm["stream"], yamldiag.Join(tp, "stream"), "stream is upstream or downstream", "unknown stream %q", tx.Stream)
	}
	if tx.Toxicity > 1 {
		m.Errorf(tm["toxicity"], yamldiag.Join(tp, "toxicity"), "toxicity is a probability; leave it out for 1.0", "toxicity %v is above 1", tx.Toxicity)
	}
}

// ToxicAttr is an attribute a Toxiproxy toxic accepts: a whole number in
// [Min, Max], in Unit. Required ones have no useful default (0 hangs the
// connection or the proxy).
type ToxicAttr struct {
	Min, Max int64
	Unit     string
	Required bool
}

const maxMs = int64(MaxDuration / time.Millisecond)

// ToxicAttrs are the attributes of each Toxiproxy v2 toxic type (its
// toxics/*.go), with the ranges in which they do what they say.
var ToxicAttrs = map[string]map[string]ToxicAttr{
	"latency":    {"latency": {0, maxMs, "ms", false}, "jitter": {0, maxMs, "ms", false}},
	"bandwidth":  {"rate": {1, 1 << 40, "KB/s", true}}, // rate 0 never sends a byte
	"slow_close": {"delay": {0, maxMs, "ms", false}},
	"timeout":    {"timeout": {0, maxMs, "ms", false}},
	"reset_peer": {"timeout": {0, maxMs, "ms", false}},
	// average_size 0 recurses without end inside Toxiproxy; a variation of
	// average_size or more cuts outside the chunk.
	"slicer":     {"average_size": {1, 1 << 30, "bytes", true}, "size_variation": {0, 1 << 30, "bytes", false}, "delay": {0, maxMs * 1000, "µs", false}},
	"limit_data": {"bytes": {0, 1 << 40, "bytes", false}},
	"noop":       {},
}

// validateToxicAttrs checks a toxic's attributes against what its type
// accepts. an is the attributes node (nil when absent), tn the toxic's.
func validateToxicAttrs(m *Mapping, tn, an *yaml.Node, typ string, attrs map[string]any, path string) {
	spec, ok := ToxicAttrs[typ]
	if !ok {
		return // an unknown type is reported already
	}
	names := slices.Sorted(maps.Keys(spec))
	am := yamldiag.Fields(an)
	ap := yamldiag.Join(path, "attributes")
	vals := map[string]int64{}
	for k, v := range attrs {
		n, msg, hint := ToxicAttrValue(typ, k, v, am[k], spec, names)
		switch _, known := spec[k]; {
		case msg == "":
			vals[k] = n
		case !known:
			m.d.Add(keyNode(an, k), yamldiag.Join(ap, k), msg, hint)
		default:
			m.d.Add(am[k], yamldiag.Join(ap, k), msg, hint)
		}
	}
	for _, k := range names {
		if _, has := attrs[k]; !has && spec[k].Required {
			node := an
			if node == nil {
				node = tn
			}
			m.Errorf(node, yamldiag.Join(ap, k), fmt.Sprintf("add attributes: {%s: %d} (%s; 0 would never let the connection through)", k, max(spec[k].Min, 1), spec[k].Unit), "a %s toxic needs %s", typ, k)
		}
	}
	if avg, ok := vals["average_size"]; ok && typ == "slicer" {
		if v, ok := vals["size_variation"]; ok && v >= avg {
			m.Errorf(am["size_variation"], yamldiag.Join(ap, "size_variation"), "make size_variation smaller than average_size", "size_variation %d is not below average_size %d", v, avg)
		}
	}
}

// ToxicAttrValue decides on attribute k (value v, written at node, nil
// when unknown) of a toxic of type typ, whose attributes are spec (names,
// sorted): its value, or what is wrong and what to do.
func ToxicAttrValue(typ, k string, v any, node *yaml.Node, spec map[string]ToxicAttr, names []string) (n int64, msg, hint string) {
	a, known := spec[k]
	if !known {
		hint = fmt.Sprintf("a %s toxic takes no attributes", typ)
		if len(names) > 0 {
			hint = fmt.Sprintf("a %s toxic takes %s", typ, strings.Join(names, ", "))
			if s := yamldiag.Closest(k, names); s != "" {
				hint = "did you mean " + s + "?"
			}
		}
		return 0, fmt.Sprintf("unknown attribute %q of a %s toxic", k, typ), hint
	}
	i, ok := v.(int)
	if !ok {
		got := fmt.Sprintf("%v", v)
		if node != nil {
			got = yamldiag.KindName(node)
		}
		return 0, "want a whole number of " + a.Unit + ", got " + got, fmt.Sprintf("write a whole number of %s from %d to %d", a.Unit, a.Min, a.Max)
	}
	if int64(i) < a.Min || int64(i) > a.Max {
		return 0, fmt.Sprintf("%d %s is out of range", i, a.Unit), fmt.Sprintf("%s of a %s toxic goes from %d to %d %s", k, typ, a.Min, a.Max, a.Unit)
	}
	return int64(i), "", ""
}

// keyNode is the key k of mapping m (m itself when k is not found), to
// report a problem at the key.
func keyNode(m *yaml.Node, k string) *yaml.Node {
	node := m
	if m != nil && m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k {
				node = m.Content[i]
			}
		}
	}
	return node
}

func (Toxics) Name() string { return "toxics" }

func (ts Toxics) Describe() string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Type)
	}
	return "toxics " + strings.Join(s, "+")
}

// PreConnect returns the scenario's toxics, named a<n>-<i>-<type> unless
// named, downstream unless said, with toxicity 1.0 unless said (0 would
// never fire).
func (ts Toxics) PreConnect(n int) []Toxic {
	var out []Toxic
	for i, tx := range ts {
		s := tx
		if s.Name == "" {
			s.Name = fmt.Sprintf("a%d-%d-%s", n, i, tx.Type)
		}
		if s.Stream == "" {
			s.Stream = "downstream"
		}
		if s.Toxicity == 0 {
			s.Toxicity = 1.0
		}
		if s.Attributes == nil {
			s.Attributes = map[string]any{}
		}
		out = append(out, s)
	}
	return out
}

func (Toxics) ClosedBy(wroteAll bool) string {
	if !wroteAll {
		return trace.ClosedByProxy
	}
	return trace.ClosedByServer
}

func (Toxics) CutsResponse() bool   { return true }
func (Toxics) WithoutRequest() bool { return true }
func (ts Toxics) UsesProxy() bool   { return len(ts) > 0 }

// Failure is a network error, made more precise by the toxics' types (the
// last one that says something wins).
func (ts Toxics) Failure(pe *provider.Error, _ Met) {
	pe.Kind = provider.KindNetwork
	for _, t := range ts {
		switch t.Type {
		case "timeout":
			pe.Kind = provider.KindTimeout
		case "reset_peer":
			pe.Kind = provider.KindReset
		case "limit_data":
			pe.Kind = provider.KindIncomplete
		}
	}
}
