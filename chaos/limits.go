package chaos

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/retry"
)

// Limits of what a scenario file and chaos run's flags accept. Past them a
// value is a mistake (a typo, an exponent too many) that would overflow a
// wait or hang a run, so the loader rejects it with its file, line and field.
// maxOKTextBytes bounds an ok fault's text.
const maxOKTextBytes = 64 << 10

const (
	// MaxNameLen bounds a scenario's name, in bytes: it names a run folder
	// and, shortened, a proxy.
	MaxNameLen = 100
	// MaxTimeScale bounds timeScale and --time-scale (which must be above
	// 0): 1000 stretches a 2 s wait to half an hour.
	MaxTimeScale = 1000
	// MinTimeScale is the smallest timeScale and --time-scale: 0.001 makes
	// a 2 s wait 2 ms, about the resolution of the timing checks; below it
	// every wait is 0 and a client that does not wait at all would pass.
	MinTimeScale = 0.001
	// MaxScenarioDuration bounds every duration of a scenario file; with
	// MaxTimeScale it keeps every scaled wait far from overflowing.
	MaxScenarioDuration = 24 * time.Hour
)

// CheckTimeScale returns why s is not a usable time scale ("" if it is):
// it must be a finite number above 0 and at most MaxTimeScale.
func CheckTimeScale(s float64) string {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return fmt.Sprintf("%v is not a number of times", s)
	case s <= 0:
		return fmt.Sprintf("%v is not above 0", s)
	case s < MinTimeScale:
		return fmt.Sprintf("%v is below %v: every wait would round to nothing", s, MinTimeScale)
	case s > MaxTimeScale:
		return fmt.Sprintf("%v is above %d", s, MaxTimeScale)
	}
	return ""
}

// TimeScaleHint says what a time scale is, for errors.
const TimeScaleHint = "a time scale multiplies every wait: 0.1 makes them ten times shorter; it must be at least 0.001 and at most 1000"

// reservedNames are the files a run folder holds beside its scenarios'
// folders: a scenario named like one would take its place.
var reservedNames = []string{"summary.json", "junit.xml"}

// isReservedName reports whether name is one of reservedNames, in any case
// (a case-insensitive file system makes them one).
func isReservedName(name string) bool {
	for _, r := range reservedNames {
		if strings.EqualFold(name, r) {
			return true
		}
	}
	return false
}

// checkName returns why name cannot name a scenario ("" if it can).
func checkName(name string) string {
	switch {
	case len(name) > MaxNameLen:
		return fmt.Sprintf("name is %d bytes long, more than %d", len(name), MaxNameLen)
	case !utf8.ValidString(name):
		return fmt.Sprintf("name %q is not valid UTF-8", name)
	case strings.ContainsAny(name, `/\`) || name == "." || name == "..":
		return fmt.Sprintf("name %q cannot name a folder", name)
	case strings.TrimSpace(name) == "":
		return fmt.Sprintf("name %q is blank", name)
	case isReservedName(name):
		return fmt.Sprintf("name %q is taken: the run folder holds a file of that name", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Sprintf("name %q holds the control character %U", name, r)
		}
	}
	return ""
}

// toxicAttr is an attribute a Toxiproxy toxic accepts: a whole number in
// [min, max], in unit. Required ones have no useful default (0 hangs the
// connection or the proxy).
type toxicAttr struct {
	min, max int64
	unit     string
	required bool
}

const maxMs = int64(MaxScenarioDuration / time.Millisecond)

// toxicAttrs are the attributes of each Toxiproxy v2 toxic type (its
// toxics/*.go), with the ranges in which they do what they say.
var toxicAttrs = map[string]map[string]toxicAttr{
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
func (d *decoder) validateToxicAttrs(tn, an *yaml.Node, typ string, attrs map[string]any, path string) {
	spec, ok := toxicAttrs[typ]
	if !ok {
		return // an unknown type is reported already
	}
	names := slices.Sorted(maps.Keys(spec))
	am := mapping(an)
	ap := join(path, "attributes")
	vals := map[string]int64{}
	for k, v := range attrs {
		n, msg, hint := toxicAttrValue(typ, k, v, am[k], spec, names)
		switch _, known := spec[k]; {
		case msg == "":
			vals[k] = n
		case !known:
			d.errorfKey(an, k, join(ap, k), msg, hint) // at the key
		default:
			d.c.Add(am[k], join(ap, k), msg, hint)
		}
	}
	for _, k := range names {
		if _, has := attrs[k]; !has && spec[k].required {
			node := an
			if node == nil {
				node = tn
			}
			d.errorf(node, join(ap, k), fmt.Sprintf("add attributes: {%s: %d} (%s; 0 would never let the connection through)", k, max(spec[k].min, 1), spec[k].unit), "a %s toxic needs %s", typ, k)
		}
	}
	if avg, ok := vals["average_size"]; ok && typ == "slicer" {
		if v, ok := vals["size_variation"]; ok && v >= avg {
			d.errorf(am["size_variation"], join(ap, "size_variation"), "make size_variation smaller than average_size", "size_variation %d is not below average_size %d", v, avg)
		}
	}
}

// toxicAttrValue decides on attribute k (value v, written at node, nil
// when unknown) of a toxic of type typ, whose attributes are spec (names,
// sorted): its value, or what is wrong and what to do.
func toxicAttrValue(typ, k string, v any, node *yaml.Node, spec map[string]toxicAttr, names []string) (n int64, msg, hint string) {
	a, known := spec[k]
	if !known {
		hint = fmt.Sprintf("a %s toxic takes no attributes", typ)
		if len(names) > 0 {
			hint = fmt.Sprintf("a %s toxic takes %s", typ, strings.Join(names, ", "))
			if s := closest(k, names); s != "" {
				hint = "did you mean " + s + "?"
			}
		}
		return 0, fmt.Sprintf("unknown attribute %q of a %s toxic", k, typ), hint
	}
	i, ok := v.(int)
	if !ok {
		return 0, "want a whole number of " + a.unit + ", got " + describeAny(node, v), fmt.Sprintf("write a whole number of %s from %d to %d", a.unit, a.min, a.max)
	}
	if int64(i) < a.min || int64(i) > a.max {
		return 0, fmt.Sprintf("%d %s is out of range", i, a.unit), fmt.Sprintf("%s of a %s toxic goes from %d to %d %s", k, typ, a.min, a.max, a.unit)
	}
	return int64(i), "", ""
}

// errorfKey reports a problem at the key k of mapping m (at m when k is not
// found).
func (d *decoder) errorfKey(m *yaml.Node, k, field, msg, hint string) {
	node := m
	if m != nil && m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k {
				node = m.Content[i]
			}
		}
	}
	d.c.Add(node, field, msg, hint)
}

func describeAny(n *yaml.Node, v any) string {
	if n != nil {
		return kindName(n)
	}
	return fmt.Sprintf("%v", v)
}

// validateFailureTypes checks expect.failureTypes against the failure
// types the retry core knows.
func (d *decoder) validateFailureTypes(seq *yaml.Node, fts []string) {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return
	}
	var known []string
	for _, ft := range retry.FailureTypes {
		known = append(known, string(ft))
	}
	for i, ft := range fts {
		if contains(known, ft) || i >= len(seq.Content) {
			continue
		}
		hint := "failure types: " + strings.Join(known, ", ")
		if s := closest(ft, known); s != "" {
			hint = "did you mean " + s + "?"
		}
		d.errorf(seq.Content[i], fmt.Sprintf("expect.failureTypes[%d]", i), hint, "unknown failure type %q", ft)
	}
}

// tokenRE is an RFC 9110 token: what a header name may hold.
var tokenRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// validateHeaders checks a status fault's headers: names are RFC 9110
// tokens, values hold no control character but a tab (CR or LF would split
// the response).
func (d *decoder) validateHeaders(hn *yaml.Node, h map[string]string, path string) {
	if hn == nil || hn.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(hn.Content); i += 2 {
		k, v := hn.Content[i], hn.Content[i+1]
		fp := join(path, k.Value)
		if !tokenRE.MatchString(k.Value) {
			d.errorf(k, fp, "a header name is letters, digits and !#$%&'*+-.^_`|~, with no spaces: e.g. x-should-retry", "header name %q is not an HTTP token", k.Value)
			continue
		}
		if _, ok := h[k.Value]; !ok {
			continue
		}
		for _, r := range h[k.Value] {
			if (r < 0x20 && r != '\t') || r == 0x7f {
				d.errorf(v, fp, "remove CR, LF, NUL and other control characters: a header value is one line", "header value holds the control character %U", r)
				break
			}
		}
	}
}
