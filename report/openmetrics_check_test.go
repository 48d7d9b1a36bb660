package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// omFamily is one metric family of an OpenMetrics exposition.
type omFamily struct {
	typ, unit, help string
	samples         []omSample
}

type omSample struct {
	name   string
	labels map[string]string
	value  float64
}

// omSuffixes are the sample name suffixes each OpenMetrics type allows.
var omSuffixes = map[string][]string{
	"counter":        {"_total", "_created"},
	"gauge":          {""},
	"histogram":      {"_bucket", "_count", "_sum", "_created"},
	"gaugehistogram": {"_bucket", "_gcount", "_gsum"},
	"summary":        {"", "_count", "_sum", "_created"},
	"info":           {"_info"},
	"stateset":       {""},
	"unknown":        {""},
}

// omParse checks an exposition against the OpenMetrics 1.0 text format
// rules that matter for retrylab's output, which the vendored
// prometheus/common (text format only) does not check: every sample belongs
// to the family declared just before it and carries a suffix its TYPE
// allows, metadata appears once per family and before its samples, a UNIT
// is the name's suffix, no series repeats, counters are not negative,
// histogram buckets are increasing with canonical le values, end with +Inf
// and match _count, and the exposition ends with "# EOF".
func omParse(text string) (map[string]*omFamily, error) {
	fams := map[string]*omFamily{}
	var cur string
	series := map[string]bool{}
	if !strings.HasSuffix(text, "# EOF\n") {
		return nil, fmt.Errorf("exposition does not end with # EOF")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, line := range lines {
		errf := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", i+1, line, fmt.Sprintf(format, args...))
		}
		if line == "# EOF" {
			if i != len(lines)-1 {
				return nil, errf("# EOF before the end")
			}
			break
		}
		if strings.HasPrefix(line, "#") {
			parts := strings.SplitN(line, " ", 4)
			if len(parts) < 4 || parts[0] != "#" {
				return nil, errf("bad metadata line")
			}
			kind, name, val := parts[1], parts[2], parts[3]
			f := fams[name]
			if f == nil {
				if kind != "TYPE" {
					return nil, errf("%s before TYPE", kind)
				}
				f = &omFamily{}
				fams[name] = f
				cur = name
			} else if name != cur || len(f.samples) > 0 {
				return nil, errf("family %s declared again", name)
			}
			switch kind {
			case "TYPE":
				if f.typ != "" {
					return nil, errf("second TYPE")
				}
				if _, ok := omSuffixes[val]; !ok {
					return nil, errf("unknown type %q", val)
				}
				f.typ = val
			case "UNIT":
				if f.unit != "" {
					return nil, errf("second UNIT")
				}
				if !strings.HasSuffix(name, "_"+val) {
					return nil, errf("unit %s is not the suffix of %s", val, name)
				}
				f.unit = val
			case "HELP":
				if f.help != "" {
					return nil, errf("second HELP")
				}
				f.help = val
			default:
				return nil, errf("unknown metadata %s", kind)
			}
			continue
		}
		s, key, err := omParseSample(line)
		if err != nil {
			return nil, errf("%v", err)
		}
		if series[key] {
			return nil, errf("series repeated")
		}
		series[key] = true
		f := fams[cur]
		if f == nil {
			return nil, errf("sample without a TYPE (untyped)")
		}
		ok := false
		for _, suf := range omSuffixes[f.typ] {
			if s.name == cur+suf {
				ok = true
			}
		}
		if !ok {
			return nil, errf("sample %s does not belong to %s family %s", s.name, f.typ, cur)
		}
		if (f.typ == "counter" || f.typ == "histogram") && (s.value < 0 || math.IsNaN(s.value)) {
			return nil, errf("%s value %v is negative or NaN", f.typ, s.value)
		}
		if _, has := s.labels["le"]; has != (s.name == cur+"_bucket") {
			return nil, errf("le label on a sample that is not a bucket, or a bucket without one")
		}
		f.samples = append(f.samples, s)
	}
	for name, f := range fams {
		if f.typ == "histogram" {
			if err := omCheckHistogram(name, f); err != nil {
				return nil, err
			}
		}
	}
	return fams, nil
}

// omCheckHistogram checks a histogram family without labels other than le.
func omCheckHistogram(name string, f *omFamily) error {
	prev := math.Inf(-1)
	var inf, count float64
	hasInf, hasCount, hasSum := false, false, false
	for _, s := range f.samples {
		switch s.name {
		case name + "_bucket":
			le := s.labels["le"]
			v, err := strconv.ParseFloat(le, 64)
			if err != nil {
				return fmt.Errorf("%s: le=%q is not a number", name, le)
			}
			if want := omCanonical(v); le != want {
				return fmt.Errorf("%s: le=%q is not canonical (want %q)", name, le, want)
			}
			if v <= prev {
				return fmt.Errorf("%s: le=%q out of order", name, le)
			}
			prev = v
			if math.IsInf(v, 1) {
				inf, hasInf = s.value, true
			}
		case name + "_count":
			count, hasCount = s.value, true
		case name + "_sum":
			hasSum = true
		}
	}
	switch {
	case !hasInf:
		return fmt.Errorf("%s: no le=\"+Inf\" bucket", name)
	case hasCount != hasSum:
		return fmt.Errorf("%s: _count and _sum go together", name)
	case hasCount && count != inf:
		return fmt.Errorf("%s: _count %v differs from the +Inf bucket %v", name, count, inf)
	}
	return nil
}

// omCanonical is the OpenMetrics canonical form of a number used as an le
// label value: Go's shortest repr, with ".0" on integers.
func omCanonical(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eN") {
		s += ".0"
	}
	return s
}

// omParseSample parses `name{k="v",...} value` and returns the sample and
// its series key.
func omParseSample(line string) (omSample, string, error) {
	s := omSample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return s, "", fmt.Errorf("no metric name")
	}
	s.name = line[:i]
	rest := line[i:]
	var keys []string
	if rest[0] == '{' {
		rest = rest[1:]
		for len(rest) > 0 && rest[0] != '}' {
			eq := strings.IndexByte(rest, '=')
			if eq <= 0 || eq+1 >= len(rest) || rest[eq+1] != '"' {
				return s, "", fmt.Errorf("bad label")
			}
			k := rest[:eq]
			rest = rest[eq+2:]
			var v strings.Builder
			for {
				if len(rest) == 0 {
					return s, "", fmt.Errorf("unterminated label value")
				}
				c := rest[0]
				rest = rest[1:]
				if c == '"' {
					break
				}
				if c == '\\' {
					if len(rest) == 0 {
						return s, "", fmt.Errorf("bad escape")
					}
					switch rest[0] {
					case '\\', '"':
						v.WriteByte(rest[0])
					case 'n':
						v.WriteByte('\n')
					default:
						return s, "", fmt.Errorf("bad escape \\%c", rest[0])
					}
					rest = rest[1:]
					continue
				}
				v.WriteByte(c)
			}
			if _, dup := s.labels[k]; dup {
				return s, "", fmt.Errorf("label %s twice", k)
			}
			s.labels[k] = v.String()
			keys = append(keys, k+"="+strconv.Quote(v.String()))
			rest = strings.TrimPrefix(rest, ",")
		}
		if !strings.HasPrefix(rest, "}") {
			return s, "", fmt.Errorf("unterminated label set")
		}
		rest = rest[1:]
	}
	if !strings.HasPrefix(rest, " ") {
		return s, "", fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(rest[1:], 64)
	if err != nil {
		return s, "", fmt.Errorf("bad value %q", rest[1:])
	}
	s.value = v
	slices.Sort(keys)
	return s, s.name + "{" + strings.Join(keys, ",") + "}", nil
}
