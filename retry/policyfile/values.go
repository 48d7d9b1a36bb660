package policyfile

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/retry"
)

var kinds = []string{string(retry.Exponential), string(retry.Linear), string(retry.Constant), string(retry.NoBackoff)}
var jitters = []string{string(retry.NoJitter), string(retry.FullJitter), string(retry.EqualJitter), string(retry.DecorrelatedJitter),
	string(retry.ProportionalJitter), string(retry.SDKJitter), string(retry.AdditiveJitter)}

// The value decisions, pure: each returns the value, or why not (msg) and
// what to do (hint).

func parseDuration(s string) (v time.Duration, msg, hint string) {
	v, err := time.ParseDuration(s)
	switch {
	case err != nil && s == "0":
		return 0, "", ""
	case err != nil:
		return 0, fmt.Sprintf("bad duration %q", s), "use a number with a unit, like 500ms, 2s or 1m30s"
	case v < 0:
		return 0, fmt.Sprintf("negative duration %q", s), "use 0 or a positive duration"
	}
	return v, "", ""
}

func parseInteger(s string, min int) (v int, msg, hint string) {
	v, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return 0, fmt.Sprintf("bad integer %q", s), "use a whole number"
	case v < min:
		return 0, fmt.Sprintf("%d is below the minimum %d", v, min), fmt.Sprintf("use a number ≥ %d", min)
	}
	return v, "", ""
}

func parseFloat(s string, min, max float64) (v float64, msg, hint string) {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || v != v:
		return 0, fmt.Sprintf("bad number %q", s), "use a number like 0.1 or 2"
	case v < min || v > max:
		return 0, fmt.Sprintf("%v is out of range", v), fmt.Sprintf("use a number between %v and %v", min, max)
	}
	return v, "", ""
}

// value decodes the scalar n with parse, recording its problem.
func value[T any](d *decoder, n *yaml.Node, path string, parse func(string) (T, string, string)) (T, bool) {
	var zero T
	s, ok := d.scalar(n, path)
	if !ok {
		return zero, false
	}
	v, msg, hint := parse(s)
	if msg != "" {
		d.errf(n, path, msg, hint)
		return zero, false
	}
	return v, true
}

func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	return value(d, n, path, parseDuration)
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	return value(d, n, path, func(s string) (bool, string, string) {
		var b bool
		if err := n.Decode(&b); err != nil {
			return false, fmt.Sprintf("bad boolean %q", s), "use true or false"
		}
		return b, "", ""
	})
}

func (d *decoder) integer(n *yaml.Node, path string, min int) (int, bool) {
	return value(d, n, path, func(s string) (int, string, string) { return parseInteger(s, min) })
}

func (d *decoder) float(n *yaml.Node, path string, min, max float64) (float64, bool) {
	return value(d, n, path, func(s string) (float64, string, string) { return parseFloat(s, min, max) })
}

// set decodes m[key], when present, into *dst with dec; a bad value leaves
// *dst as it was.
func set[T any](m map[string]*yaml.Node, key, path string, dst *T, dec func(*yaml.Node, string) (T, bool)) {
	if n, ok := m[key]; ok {
		if v, ok := dec(n, join(path, key)); ok {
			*dst = v
		}
	}
}

// intMin is d.integer with a minimum, for set.
func (d *decoder) intMin(min int) func(*yaml.Node, string) (int, bool) {
	return func(n *yaml.Node, path string) (int, bool) { return d.integer(n, path, min) }
}

// floatIn is d.float with bounds, for set.
func (d *decoder) floatIn(min, max float64) func(*yaml.Node, string) (float64, bool) {
	return func(n *yaml.Node, path string) (float64, bool) { return d.float(n, path, min, max) }
}

// listNames are the names retryableErrors takes: seed 004's, then
// retrylab's failure types that seed 004 does not have.
func listNames() []string {
	out := retry.EpicNames()
	for _, n := range failureTypeNames() {
		if !contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func failureTypeNames() []string {
	names := make([]string, len(retry.FailureTypes))
	for i, ft := range retry.FailureTypes {
		names[i] = string(ft)
	}
	return names
}

// ruleEnum is a retryAfter rule written as one of a few words: values maps
// each to the field's value.
type ruleEnum struct {
	key, what, hint string
	dst             *string
	values          map[string]string
}

// retryAfterRules are the retryAfter rules written as words.
func retryAfterRules(ra *retry.RetryAfter) []ruleEnum {
	return []ruleEnum{
		{"header", "header rule", "use both (retry-after-ms, then retry-after) or retry-after (retry-after only)",
			&ra.Header, map[string]string{"both": "", retry.HeaderRetryAfter: retry.HeaderRetryAfter}},
		{"zero", "rule", "use immediate (retry at once), backoff, or auto (backoff when maxUsable is set, else at once)",
			&ra.Zero, map[string]string{retry.ZeroImmediate: retry.ZeroImmediate, retry.ZeroBackoff: retry.ZeroBackoff, "auto": ""}},
		{"negative", "rule", "use zero (read as 0), backoff, or standard (a date in the past is 0, a negative number is ignored)",
			&ra.Negative, map[string]string{retry.NegativeZero: retry.NegativeZero, retry.NegativeBackoff: retry.NegativeBackoff, "standard": ""}},
	}
}

// rule decodes a word of e.
func (d *decoder) rule(e ruleEnum) func(*yaml.Node, string) (string, bool) {
	return func(n *yaml.Node, path string) (string, bool) {
		v, ok := d.scalar(n, path)
		if !ok {
			return "", false
		}
		val, known := e.values[v]
		if !known {
			d.errf(n, path, fmt.Sprintf("unknown %s %q", e.what, v), e.hint)
		}
		return val, known
	}
}

// knownFailureType reports whether s names a failure type.
func knownFailureType(s string) bool {
	for _, ft := range retry.FailureTypes {
		if string(ft) == s {
			return true
		}
	}
	return false
}

// oneOf decodes one of values; what names them in the message.
func (d *decoder) oneOf(what string, values []string) func(*yaml.Node, string) (string, bool) {
	return func(n *yaml.Node, path string) (string, bool) {
		v, ok := d.scalar(n, path)
		if ok && !contains(values, v) {
			d.errf(n, path, fmt.Sprintf("unknown %s %q", what, v), "use one of "+strings.Join(values, ", "))
			return "", false
		}
		return v, ok
	}
}
