package scenario

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/internal/yamldiag"
	"go.yaml.in/yaml/v3"
)

// decoder decodes and checks one scenario file, collecting every problem.
type decoder struct {
	file string
	c    *yamldiag.Collector
}

// errorf records a problem at n; hint says what to do about it.
func (d *decoder) errorf(n *yaml.Node, field, hint, format string, args ...any) {
	d.c.Addf(n, field, hint, format, args...)
}

func join(path, key string) string { return yamldiag.Join(path, key) }

// decode fills v from n, reporting every problem instead of stopping at the
// first: the loop over the value's shape; the scalar decisions are
// scalarValue's.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if v.CanAddr() && d.decodeOwn(n, v.Addr().Interface(), path) {
		return
	}
	isNull := n.Kind == yaml.ScalarNode && n.Tag == "!!null"
	switch v.Kind() {
	case reflect.Pointer:
		d.decodePointer(n, v, path, isNull)
	case reflect.Struct:
		if !isNull {
			d.decodeStruct(n, v, path)
		}
	case reflect.Slice:
		if !isNull {
			d.decodeSlice(n, v, path)
		}
	case reflect.Map:
		if !isNull {
			d.decodeMap(n, v, path)
		}
	default:
		d.decodeScalar(n, v, path)
	}
}

// decodeOwn decodes the types written in a form of their own (durations,
// delays) and reports whether p was one; client.policy is left to
// validate, which resolves it against the file's folder.
func (d *decoder) decodeOwn(n *yaml.Node, p any, path string) bool {
	var err *nodeError
	switch p := p.(type) {
	case *ClientPolicy:
	case *Duration:
		err = decodeDuration(n, p)
	case *Delays:
		err = decodeDelays(n, p)
	case *Comparison:
		err = decodeComparison(n, p) // fleet.go
	case *Fault:
		// A fault kind decodes its own keys (package chaos/fault).
		p.Kind = fault.Decode(faultDecoder{d}, n, path)
	case *MixEntry:
		d.decodeMixEntry(n, p, path) // outage.go
	default:
		return false
	}
	if err != nil {
		d.c.Add(err.node, path+err.sub, err.msg, err.hint)
	}
	return true
}

func (d *decoder) decodePointer(n *yaml.Node, v reflect.Value, path string, isNull bool) {
	t := v.Type()
	if isNull {
		if t.Elem().Kind() == reflect.Struct && t.Elem().NumField() == 0 {
			v.Set(reflect.New(t.Elem())) // "hang:" means hang: {}
		}
		return
	}
	p := reflect.New(t.Elem())
	d.decode(n, p.Elem(), path)
	v.Set(p)
}

// yamlFields maps a struct's yaml tags to field indexes, and lists the tags
// in field order (for hints).
func yamlFields(t reflect.Type) (map[string]int, []string) {
	fields := map[string]int{}
	var known []string
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		fields[tag] = i
		known = append(known, tag)
	}
	return fields, known
}

// unknownKeyHint says what to write instead of the unknown key k.
func unknownKeyHint(k string, known []string) string {
	if s := closest(k, known); s != "" {
		return "did you mean " + s + "?"
	}
	return "known keys: " + strings.Join(known, ", ")
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	fields, known := yamlFields(v.Type())
	keys, ok := d.fields(n, path, known)
	if !ok {
		return
	}
	for _, k := range keys {
		d.decode(valueOf(n, k), v.Field(fields[k.Value]), join(path, k.Value))
	}
}

// fields checks that n is a mapping whose keys are all known and none given
// twice, reporting each problem; it returns the key nodes it accepted, in
// order, and whether n is a mapping.
func (d *decoder) fields(n *yaml.Node, path string, known []string) ([]*yaml.Node, bool) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "write key: value pairs (or {} for nothing)", "want a mapping, got %s", kindName(n))
		return nil, false
	}
	var keys []*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		fp := join(path, k.Value)
		switch {
		case !Contains(known, k.Value):
			d.errorf(k, fp, unknownKeyHint(k.Value, known), "unknown key %q", k.Value)
		case seen[k.Value]:
			d.errorf(k, fp, "keep one of them", "key %q appears twice", k.Value)
		default:
			seen[k.Value] = true
			keys = append(keys, k)
		}
	}
	return keys, true
}

// valueOf is the value of the key node k of the mapping n.
func valueOf(n, k *yaml.Node) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i] == k {
			return n.Content[i+1]
		}
	}
	return nil
}

// faultDecoder is the decoder as a fault kind decodes its keys through it
// (fault.Decoder).
type faultDecoder struct{ d *decoder }

func (f faultDecoder) Fields(n *yaml.Node, path string, known []string) ([]*yaml.Node, bool) {
	return f.d.fields(n, path, known)
}

func (f faultDecoder) Decode(n *yaml.Node, v any, path string) {
	f.d.decode(n, reflect.ValueOf(v).Elem(), path)
}

func (f faultDecoder) Add(n *yaml.Node, path, msg, hint string) { f.d.c.Add(n, path, msg, hint) }

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "write a list: [a, b] or one '- item' per line", "want a list, got %s", kindName(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, c := range n.Content {
		d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "write key: value pairs", "want a mapping, got %s", kindName(n))
		return
	}
	t := v.Type()
	m := reflect.MakeMap(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		ev := reflect.New(t.Elem()).Elem()
		if t.Elem().Kind() != reflect.Interface {
			d.decode(val, ev, join(path, k.Value))
		} else if !d.decodeAny(val, ev, join(path, k.Value)) {
			continue
		}
		m.SetMapIndex(reflect.ValueOf(k.Value), ev)
	}
	v.Set(m)
}

// decodeAny decodes n into ev, an interface value, as yaml does.
func (d *decoder) decodeAny(n *yaml.Node, ev reflect.Value, path string) bool {
	var x any
	if err := n.Decode(&x); err != nil {
		d.c.Add(n, path, err.Error(), "")
		return false
	}
	if x != nil {
		ev.Set(reflect.ValueOf(x))
	}
	return true
}

func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) {
	x, p := scalarValue(n, v.Type())
	if p != nil {
		d.c.Add(n, path, p.msg, p.hint)
		return
	}
	v.Set(reflect.ValueOf(x).Convert(v.Type()))
}

// badValue is why a scalar cannot be decoded, and what to do about it.
type badValue struct{ msg, hint string }

// scalarValue decodes the scalar n as a value of kind k: a string, a
// non-negative whole number (int64), a finite non-negative number (float64)
// or a boolean; else it says why not.
func scalarValue(n *yaml.Node, t reflect.Type) (any, *badValue) {
	isScalar := n.Kind == yaml.ScalarNode
	switch t.Kind() {
	case reflect.String:
		if !isScalar || n.Tag == "!!null" {
			return nil, &badValue{"want a string, got " + kindName(n), "quote the value"}
		}
		return n.Value, nil
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 0, 64)
		switch {
		case !isScalar || err != nil:
			return nil, &badValue{"want a whole number, got " + describe(n), "write a number such as 3"}
		case i < 0:
			return nil, &badValue{fmt.Sprintf("must not be negative, got %d", i), "use 0 or a positive number"}
		}
		return i, nil
	case reflect.Float32, reflect.Float64:
		return floatValue(n)
	case reflect.Bool:
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, &badValue{"want true or false, got " + describe(n), ""}
		}
		return b, nil
	}
	return nil, &badValue{"cannot decode into " + t.String(), ""}
}

// floatValue is scalarValue for a number.
func floatValue(n *yaml.Node) (any, *badValue) {
	f, err := strconv.ParseFloat(n.Value, 64)
	switch {
	case n.Kind != yaml.ScalarNode || err != nil:
		return nil, &badValue{"want a number, got " + describe(n), "write a number such as 0.1"}
	case math.IsNaN(f) || math.IsInf(f, 0):
		return nil, &badValue{"want a number, got " + describe(n), "write a finite number such as 0.1"}
	case f < 0:
		return nil, &badValue{fmt.Sprintf("must not be negative, got %v", f), "use 0 or a positive number"}
	}
	return f, nil
}

func isZero(n *yaml.Node) bool {
	f, err := strconv.ParseFloat(n.Value, 64)
	return n.Kind == yaml.ScalarNode && err == nil && f == 0
}

func mapping(n *yaml.Node) map[string]*yaml.Node { return yamldiag.Fields(n) }

func Contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func kindName(n *yaml.Node) string { return yamldiag.KindName(n) }

func describe(n *yaml.Node) string { return kindName(n) }

// closest returns the known key nearest to s, if it is near enough to be a typo.
func closest(s string, known []string) string { return yamldiag.Closest(s, known) }

// decodeDuration reads a Go duration string ("2s", "300ms"); a bare 0 is
// allowed. Negative durations are rejected.
func decodeDuration(n *yaml.Node, d *Duration) *nodeError {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return &nodeError{node: n, msg: "want a duration, got " + kindName(n), hint: "write a duration such as 2s, 300ms or 1m30s"}
	}
	if n.Value == "0" {
		*d = 0
		return nil
	}
	v, msg, hint := parseDuration(n.Value)
	if msg != "" {
		return &nodeError{node: n, msg: msg, hint: hint}
	}
	*d = Duration(v)
	return nil
}

// parseDuration is decodeDuration's decision on a duration string: its
// value, or what is wrong and what to do.
func parseDuration(s string) (v time.Duration, msg, hint string) {
	v, err := time.ParseDuration(s)
	switch {
	case err == nil && v < 0:
		return 0, fmt.Sprintf("negative duration %q", s), "durations must be 0 or more"
	case err == nil && v > MaxScenarioDuration:
		return 0, fmt.Sprintf("duration %q is too long", s), "durations go up to 24h"
	case err == nil:
		return v, "", ""
	}
	if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
		return 0, fmt.Sprintf("bad duration %q", s), fmt.Sprintf("add a unit: %ss or %sms", s, s)
	}
	if durationRE.MatchString(s) {
		// Well formed, yet ParseDuration refused it: it overflows.
		return 0, fmt.Sprintf("duration %q is too long", s), "durations go up to 24h"
	}
	return 0, fmt.Sprintf("bad duration %q", s), "write a duration such as 2s, 300ms or 1m30s"
}

// decodeDelays reads "policy" or a list of durations.
func decodeDelays(n *yaml.Node, ds *Delays) *nodeError {
	ds.Set = true
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value == "policy" {
			ds.Policy = true
			return nil
		}
		return &nodeError{node: n, msg: fmt.Sprintf("delays must be a list of durations or \"policy\", got %q", n.Value), hint: "write delays: [2s, 4s] or delays: policy"}
	case yaml.SequenceNode:
		ds.List = make([]Duration, len(n.Content))
		for i, c := range n.Content {
			if ne := decodeDuration(c, &ds.List[i]); ne != nil {
				ne.sub = fmt.Sprintf("[%d]", i)
				return ne
			}
		}
		return nil
	}
	return &nodeError{node: n, msg: "delays must be a list of durations or \"policy\"", hint: "write delays: [2s, 4s] or delays: policy"}
}

// durationRE matches what time.ParseDuration reads, whatever the size.
var durationRE = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)
