package retry

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// PolicyError is a problem in a policy file: where it is, which field, what
// is wrong and (Hint) what to do about it. Error() gives "file:line: field:
// msg"; callers print Hint() on its own line.
type PolicyError struct {
	File  string
	Line  int
	Field string // dotted path, e.g. "failureTypes.rate_limit.initialDelay"
	Msg   string
	Help  string // what to do next; see Hint
}

var _ error = (*PolicyError)(nil)

// Hint says what to do next.
func (e *PolicyError) Hint() string { return e.Help }

func (e *PolicyError) Error() string {
	loc := e.File
	if loc == "" {
		loc = "policy"
	}
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	s := loc + ": "
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Msg
}

var yamlLineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// ParsePolicy parses a policy YAML document (see the package doc for the
// schema). file names the source in errors. Unknown keys, bad durations,
// unknown enum values and out-of-range numbers are errors naming file:line
// and the field, with a hint.
func ParsePolicy(data []byte, file string) (*Policy, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		pe := &PolicyError{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: "), Help: "the policy file must be valid YAML"}
		if m := yamlLineRE.FindStringSubmatch(pe.Msg); m != nil {
			pe.Line, _ = strconv.Atoi(m[1])
			pe.Msg = m[2]
		}
		return nil, pe
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &PolicyError{File: file, Line: 1, Msg: "empty policy", Help: "write `preset: forgeflare` or a mapping of policy fields"}
	}
	return DecodePolicyNode(doc.Content[0], file)
}

// DecodePolicyNode decodes a policy from a YAML node: a scalar preset name,
// or a mapping of policy fields that may start from `preset: NAME` and
// override it. file names the source in errors.
func DecodePolicyNode(n *yaml.Node, file string) (*Policy, error) {
	d := &decoder{file: file}
	if n == nil || n.Kind == 0 {
		return nil, d.errf(n, "", "no policy given", "write a preset name (%s) or a mapping", strings.Join(PresetNames(), ", "))
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.ScalarNode:
		p, err := Preset(n.Value)
		if err != nil {
			return nil, d.errf(n, "policy", fmt.Sprintf("unknown preset %q", n.Value), "valid presets: %s", strings.Join(PresetNames(), ", "))
		}
		return p, nil
	case yaml.MappingNode:
		return d.policy(n)
	}
	return nil, d.errf(n, "policy", "must be a preset name or a mapping", "e.g. `policy: forgeflare` or `policy: {preset: plandex, attemptTimeout: 30s}`")
}

type decoder struct{ file string }

func (d *decoder) errf(n *yaml.Node, field, msg, hint string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &PolicyError{File: d.file, Line: line, Field: field, Msg: msg, Help: fmt.Sprintf(hint, args...)}
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// fields walks a mapping, rejecting unknown and duplicate keys.
func (d *decoder) fields(n *yaml.Node, path string, known []string) (map[string]*yaml.Node, []string, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nil, d.errf(n, path, "must be a mapping", "write `key: value` pairs under %s", path)
	}
	out := map[string]*yaml.Node{}
	var order []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if known != nil && !contains(known, k.Value) {
			return nil, nil, d.errf(k, join(path, k.Value), "unknown field", "valid fields here: %s", strings.Join(known, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, nil, d.errf(k, join(path, k.Value), "duplicate field", "remove one of the two")
		}
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		out[k.Value] = v
		order = append(order, k.Value)
	}
	return out, order, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *decoder) scalar(n *yaml.Node, path string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", d.errf(n, path, "must be a single value", "write a scalar, not a list or a mapping")
	}
	return n.Value, nil
}

func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, error) {
	s, err := d.scalar(n, path)
	if err != nil {
		return 0, err
	}
	v, perr := time.ParseDuration(s)
	if perr != nil {
		if s == "0" {
			return 0, nil
		}
		return 0, d.errf(n, path, fmt.Sprintf("bad duration %q", s), "use a number with a unit, like 500ms, 2s or 1m30s")
	}
	if v < 0 {
		return 0, d.errf(n, path, fmt.Sprintf("negative duration %q", s), "use 0 or a positive duration")
	}
	return v, nil
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, error) {
	s, err := d.scalar(n, path)
	if err != nil {
		return false, err
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, d.errf(n, path, fmt.Sprintf("bad boolean %q", s), "use true or false")
	}
	return b, nil
}

func (d *decoder) integer(n *yaml.Node, path string, min int) (int, error) {
	s, err := d.scalar(n, path)
	if err != nil {
		return 0, err
	}
	v, perr := strconv.Atoi(s)
	if perr != nil {
		return 0, d.errf(n, path, fmt.Sprintf("bad integer %q", s), "use a whole number")
	}
	if v < min {
		return 0, d.errf(n, path, fmt.Sprintf("%d is below the minimum %d", v, min), "use a number ≥ %d", min)
	}
	return v, nil
}

func (d *decoder) float(n *yaml.Node, path string, min, max float64) (float64, error) {
	s, err := d.scalar(n, path)
	if err != nil {
		return 0, err
	}
	v, perr := strconv.ParseFloat(s, 64)
	if perr != nil || v != v {
		return 0, d.errf(n, path, fmt.Sprintf("bad number %q", s), "use a number like 0.1 or 2")
	}
	if v < min || v > max {
		return 0, d.errf(n, path, fmt.Sprintf("%v is out of range", v), "use a number between %v and %v", min, max)
	}
	return v, nil
}

var policyFields = []string{"preset", "name", "enabled", "maxElapsed", "attemptTimeout", "clientTimeoutFinal", "exponentStart",
	"streamErrors", "streamTransient", "honorShouldRetry", "allowIrreversible", "statusRetry", "retryAfter", "default", "all",
	"failureTypes", "escalation", "fallback", "retryableErrors", "escalateAfterRetries",
	// Strategy fields at the top level are shorthand for `all`, but for
	// maxAttempts and maxDelay, which are global caps there (capFields).
	"retry", "maxAttempts", "maxRetries", "initialDelay", "maxDelay", "multiplier", "kind", "jitter",
	"jitterFraction", "respectRetryAfter"}

// capFields are the top-level keys that cap every failure type instead of
// setting it (seed 001's PLANDEX_MAX_RETRY_ATTEMPTS, PLANDEX_MAX_RETRY_DELAY_MS).
var capFields = []string{"maxAttempts", "maxDelay"}

var strategyFields = []string{"retry", "maxAttempts", "maxRetries", "initialDelay", "maxDelay", "multiplier",
	"kind", "jitter", "jitterFraction", "respectRetryAfter"}

func (d *decoder) policy(n *yaml.Node) (*Policy, error) {
	f, _, err := d.fields(n, "", policyFields)
	if err != nil {
		return nil, err
	}
	p := &Policy{Name: "custom", Enabled: true,
		Default:      Strategy{MaxAttempts: 1, Multiplier: 2, Kind: Exponential, Jitter: NoJitter},
		FailureTypes: map[FailureType]Strategy{}, StatusRetry: map[int]bool{}}
	if v, ok := f["preset"]; ok {
		s, err := d.scalar(v, "preset")
		if err != nil {
			return nil, err
		}
		base, perr := Preset(s)
		if perr != nil {
			return nil, d.errf(v, "preset", fmt.Sprintf("unknown preset %q", s), "valid presets: %s", strings.Join(PresetNames(), ", "))
		}
		p = base.Clone()
	}
	if v, ok := f["name"]; ok {
		if p.Name, err = d.scalar(v, "name"); err != nil {
			return nil, err
		}
	}
	bools := []struct {
		key string
		dst *bool
	}{{"enabled", &p.Enabled}, {"streamErrors", &p.StreamErrors}, {"streamTransient", &p.StreamTransient},
		{"honorShouldRetry", &p.HonorShouldRetry}, {"clientTimeoutFinal", &p.ClientTimeoutFinal},
		{"allowIrreversible", &p.AllowIrreversible}}
	for _, b := range bools {
		if v, ok := f[b.key]; ok {
			if *b.dst, err = d.boolean(v, b.key); err != nil {
				return nil, err
			}
		}
	}
	if v, ok := f["maxElapsed"]; ok {
		if p.MaxElapsed, err = d.duration(v, "maxElapsed"); err != nil {
			return nil, err
		}
	}
	if v, ok := f["attemptTimeout"]; ok {
		if p.AttemptTimeout, err = d.duration(v, "attemptTimeout"); err != nil {
			return nil, err
		}
	}
	if v, ok := f["exponentStart"]; ok {
		if p.ExponentStart, err = d.integer(v, "exponentStart", 0); err != nil {
			return nil, err
		}
	}
	if err := d.caps(f, p); err != nil {
		return nil, err
	}
	if v, ok := f["default"]; ok {
		if p.Default, err = d.strategy(v, "default", p.Default); err != nil {
			return nil, err
		}
	}
	if top := topStrategy(n); top != nil {
		if p.Default, err = d.strategy(top, "", p.Default); err != nil {
			return nil, err
		}
		for ft, s := range p.FailureTypes {
			if p.FailureTypes[ft], err = d.strategy(top, "", s); err != nil {
				return nil, err
			}
		}
	}
	if v, ok := f["all"]; ok {
		if p.Default, err = d.strategy(v, "all", p.Default); err != nil {
			return nil, err
		}
		for ft, s := range p.FailureTypes {
			if p.FailureTypes[ft], err = d.strategy(v, "all", s); err != nil {
				return nil, err
			}
		}
	}
	if v, ok := f["retryAfter"]; ok {
		if err := d.retryAfter(v, p); err != nil {
			return nil, err
		}
	}
	if v, ok := f["retryableErrors"]; ok {
		if err := d.retryableErrors(v, p); err != nil {
			return nil, err
		}
	}
	if v, ok := f["statusRetry"]; ok {
		m, order, err := d.fields(v, "statusRetry", nil)
		if err != nil {
			return nil, err
		}
		for _, k := range order {
			path := join("statusRetry", k)
			st, aerr := strconv.Atoi(k)
			if aerr != nil || st < 100 || st > 599 {
				return nil, d.errf(m[k], path, fmt.Sprintf("bad HTTP status %q", k), "use a status code from 100 to 599, e.g. `429: true`")
			}
			if p.StatusRetry[st], err = d.boolean(m[k], path); err != nil {
				return nil, err
			}
		}
	}
	if v, ok := f["failureTypes"]; ok {
		m, order, err := d.fields(v, "failureTypes", nil)
		if err != nil {
			return nil, err
		}
		for _, k := range order {
			path := join("failureTypes", k)
			if !knownFailureType(k) {
				return nil, d.errf(keyNode(v, k), path, "unknown failure type", "valid types: %s", strings.Join(failureTypeNames(), ", "))
			}
			ft := FailureType(k)
			if p.FailureTypes[ft], err = d.strategy(m[k], path, p.rawStrategy(ft)); err != nil {
				return nil, err
			}
		}
	}
	if v, ok := f["escalateAfterRetries"]; ok {
		if p.Escalation.AfterRetries, err = d.integer(v, "escalateAfterRetries", 0); err != nil {
			return nil, err
		}
	}
	if v, ok := f["escalation"]; ok {
		if err := d.escalation(v, p); err != nil {
			return nil, err
		}
	}
	if v, ok := f["fallback"]; ok {
		if err := d.fallback(v, p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// escalation reads the escalation mapping: afterRetries, onContextLimit,
// ladder, maxCost.
func (d *decoder) escalation(v *yaml.Node, p *Policy) error {
	m, _, err := d.fields(v, "escalation", []string{"afterRetries", "onContextLimit", "ladder", "maxCost"})
	if err != nil {
		return err
	}
	if x, ok := m["afterRetries"]; ok {
		if p.Escalation.AfterRetries, err = d.integer(x, "escalation.afterRetries", 0); err != nil {
			return err
		}
	}
	if x, ok := m["onContextLimit"]; ok {
		if p.Escalation.OnContextLimit, err = d.boolean(x, "escalation.onContextLimit"); err != nil {
			return err
		}
	}
	return d.escalationGuard(m, p)
}

// fallback reads the fallback mapping (Plandex's chain).
func (d *decoder) fallback(v *yaml.Node, p *Policy) error {
	m, _, err := d.fields(v, "fallback", []string{"enabled", "maxRetriesWithoutFallback", "additionalAttempts"})
	if err != nil {
		return err
	}
	if x, ok := m["enabled"]; ok {
		if p.Fallback.Enabled, err = d.boolean(x, "fallback.enabled"); err != nil {
			return err
		}
	}
	if x, ok := m["maxRetriesWithoutFallback"]; ok {
		if p.Fallback.MaxRetriesWithoutFallback, err = d.integer(x, "fallback.maxRetriesWithoutFallback", 0); err != nil {
			return err
		}
	}
	if x, ok := m["additionalAttempts"]; ok {
		if p.Fallback.AdditionalAttempts, err = d.integer(x, "fallback.additionalAttempts", 1); err != nil {
			return err
		}
	}
	return nil
}

// caps reads the global caps: top-level maxAttempts and maxDelay.
func (d *decoder) caps(f map[string]*yaml.Node, p *Policy) error {
	var err error
	if v, ok := f["maxAttempts"]; ok {
		if p.MaxAttempts, err = d.integer(v, "maxAttempts", 0); err != nil {
			return err
		}
	}
	if v, ok := f["maxDelay"]; ok {
		if p.MaxDelay, err = d.duration(v, "maxDelay"); err != nil {
			return err
		}
	}
	return nil
}

// escalationGuard reads escalation.ladder and escalation.maxCost.
func (d *decoder) escalationGuard(m map[string]*yaml.Node, p *Policy) error {
	if x, ok := m["ladder"]; ok {
		if x.Kind != yaml.SequenceNode || len(x.Content) < 2 {
			return d.errf(x, "escalation.ladder", "must be a list of at least two models", "write e.g. [claude-haiku-4-5, claude-sonnet-4-5, claude-opus-4-1], cheapest first")
		}
		var ladder []string
		for _, item := range x.Content {
			if item.Kind != yaml.ScalarNode || strings.TrimSpace(item.Value) == "" {
				return d.errf(item, "escalation.ladder", "must be a list of model names", "write e.g. [claude-haiku-4-5, claude-sonnet-4-5]")
			}
			if contains(ladder, item.Value) {
				return d.errf(item, "escalation.ladder", fmt.Sprintf("model %q is on the ladder twice", item.Value), "name each model once, cheapest first")
			}
			ladder = append(ladder, item.Value)
		}
		p.Escalation.Ladder = ladder
	}
	if x, ok := m["maxCost"]; ok {
		v, err := d.float(x, "escalation.maxCost", 0, 1e6)
		if err != nil {
			return err
		}
		p.Escalation.MaxCost = v
	}
	return nil
}

// topStrategy collects the strategy fields written at the top level of a
// policy mapping into a mapping node of their own (nil if there are none).
// maxAttempts and maxDelay there are caps, not strategy fields.
func topStrategy(n *yaml.Node) *yaml.Node {
	var out *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; contains(strategyFields, k) && !contains(capFields, k) {
			if out == nil {
				out = &yaml.Node{Kind: yaml.MappingNode, Line: n.Content[i].Line}
			}
			out.Content = append(out.Content, n.Content[i], n.Content[i+1])
		}
	}
	return out
}

// retryableErrors (seed 004's RetryPolicy.retryableErrors) retries exactly
// what the list names: seed 004's ErrorTypes with seed 004's meaning
// (server_error is 500, 502, 503 and 504, whatever retrylab calls them;
// timeout is a client-side timeout, not a 408 or a 504; see epicClass), and
// retrylab's own failure types. Every strategy stops retrying by type and
// the preset's per-status overrides are dropped; statusRetry and
// failureTypes in the same mapping apply on top of the list.
func (d *decoder) retryableErrors(v *yaml.Node, p *Policy) error {
	if v.Kind != yaml.SequenceNode {
		return d.errf(v, "retryableErrors", "must be a list", "write e.g. [rate_limit, server_error, timeout]")
	}
	names := []string{}
	for _, item := range v.Content {
		if item.Kind != yaml.ScalarNode {
			return d.errf(item, "retryableErrors", "must be a list of failure type names", "write e.g. [rate_limit, server_error, timeout]")
		}
		if !contains(epicNames, item.Value) && !knownFailureType(item.Value) {
			return d.errf(item, "retryableErrors", fmt.Sprintf("unknown failure type %q", item.Value), "valid types: %s", strings.Join(listNames(), ", "))
		}
		if !contains(names, item.Value) {
			names = append(names, item.Value)
		}
	}
	p.RetryableErrors = names
	p.Default.Retry = false
	for ft, s := range p.FailureTypes {
		// A logical failure is US-002's, not an error seed 004's
		// ErrorClassifier sees: the list leaves it as it was.
		if ft != LogicalFailure {
			s.Retry = false
			p.FailureTypes[ft] = s
		}
	}
	p.StatusRetry = map[int]bool{}
	return nil
}

// listNames are the names retryableErrors takes: seed 004's, then
// retrylab's failure types that seed 004 does not have.
func listNames() []string {
	out := slices.Clone(epicNames)
	for _, n := range failureTypeNames() {
		if !contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func failureTypeNames() []string {
	names := make([]string, len(FailureTypes))
	for i, ft := range FailureTypes {
		names[i] = string(ft)
	}
	return names
}

func keyNode(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return m
}

func (d *decoder) retryAfter(v *yaml.Node, p *Policy) error {
	m, _, err := d.fields(v, "retryAfter", []string{"respect", "header", "padding", "cap", "ceiling", "maxUsable",
		"integerOnly", "zeroMsDefers", "zero", "negative"})
	if err != nil {
		return err
	}
	if x, ok := m["header"]; ok {
		h, err := d.scalar(x, "retryAfter.header")
		if err != nil {
			return err
		}
		switch h {
		case "both":
			p.RetryAfter.Header = ""
		case HeaderRetryAfter:
			p.RetryAfter.Header = h
		default:
			return d.errf(x, "retryAfter.header", fmt.Sprintf("unknown header rule %q", h),
				"use both (retry-after-ms, then retry-after) or retry-after (retry-after only)")
		}
	}
	if x, ok := m["respect"]; ok {
		b, err := d.boolean(x, "retryAfter.respect")
		if err != nil {
			return err
		}
		p.Default.RespectRetryAfter = b
		for ft, s := range p.FailureTypes {
			s.RespectRetryAfter = b
			p.FailureTypes[ft] = s
		}
	}
	if x, ok := m["padding"]; ok {
		if p.RetryAfter.Padding, err = d.float(x, "retryAfter.padding", 0, 10); err != nil {
			return err
		}
	}
	durs := []struct {
		key string
		dst *time.Duration
	}{{"cap", &p.RetryAfter.Cap}, {"ceiling", &p.RetryAfter.Ceiling}, {"maxUsable", &p.RetryAfter.MaxUsable}}
	for _, dd := range durs {
		if x, ok := m[dd.key]; ok {
			if *dd.dst, err = d.duration(x, "retryAfter."+dd.key); err != nil {
				return err
			}
		}
	}
	if x, ok := m["integerOnly"]; ok {
		if p.RetryAfter.IntegerOnly, err = d.boolean(x, "retryAfter.integerOnly"); err != nil {
			return err
		}
	}
	if x, ok := m["zeroMsDefers"]; ok {
		if p.RetryAfter.ZeroMsDefers, err = d.boolean(x, "retryAfter.zeroMsDefers"); err != nil {
			return err
		}
	}
	enums := []struct {
		key, hint string
		dst       *string
		values    map[string]string // YAML value → field value
	}{
		{"zero", "use immediate (retry at once), backoff, or auto (backoff when maxUsable is set, else at once)",
			&p.RetryAfter.Zero, map[string]string{ZeroImmediate: ZeroImmediate, ZeroBackoff: ZeroBackoff, "auto": ""}},
		{"negative", "use zero (read as 0), backoff, or standard (a date in the past is 0, a negative number is ignored)",
			&p.RetryAfter.Negative, map[string]string{NegativeZero: NegativeZero, NegativeBackoff: NegativeBackoff, "standard": ""}},
	}
	for _, e := range enums {
		x, ok := m[e.key]
		if !ok {
			continue
		}
		v, err := d.scalar(x, "retryAfter."+e.key)
		if err != nil {
			return err
		}
		val, known := e.values[v]
		if !known {
			return d.errf(x, "retryAfter."+e.key, fmt.Sprintf("unknown rule %q", v), "%s", e.hint)
		}
		*e.dst = val
	}
	return nil
}

var kinds = []string{string(Exponential), string(Linear), string(Constant), string(NoBackoff)}
var jitters = []string{string(NoJitter), string(FullJitter), string(EqualJitter), string(DecorrelatedJitter),
	string(ProportionalJitter), string(SDKJitter)}

// strategy overrides base with the fields present in n.
func (d *decoder) strategy(n *yaml.Node, path string, s Strategy) (Strategy, error) {
	m, _, err := d.fields(n, path, strategyFields)
	if err != nil {
		return s, err
	}
	if _, a := m["maxAttempts"]; a {
		if _, b := m["maxRetries"]; b {
			return s, d.errf(m["maxRetries"], join(path, "maxRetries"), "maxRetries and maxAttempts both given", "keep one: maxAttempts = maxRetries + 1")
		}
	}
	if x, ok := m["retry"]; ok {
		if s.Retry, err = d.boolean(x, join(path, "retry")); err != nil {
			return s, err
		}
	}
	if x, ok := m["maxAttempts"]; ok {
		if s.MaxAttempts, err = d.integer(x, join(path, "maxAttempts"), 1); err != nil {
			return s, err
		}
	}
	if x, ok := m["maxRetries"]; ok {
		r, err := d.integer(x, join(path, "maxRetries"), 0)
		if err != nil {
			return s, err
		}
		s.MaxAttempts = r + 1
	}
	if x, ok := m["initialDelay"]; ok {
		if s.InitialDelay, err = d.duration(x, join(path, "initialDelay")); err != nil {
			return s, err
		}
	}
	if x, ok := m["maxDelay"]; ok {
		if s.MaxDelay, err = d.duration(x, join(path, "maxDelay")); err != nil {
			return s, err
		}
	}
	if x, ok := m["multiplier"]; ok {
		if s.Multiplier, err = d.float(x, join(path, "multiplier"), 0, 100); err != nil {
			return s, err
		}
	}
	if x, ok := m["jitterFraction"]; ok {
		if s.JitterFraction, err = d.float(x, join(path, "jitterFraction"), 0, 1); err != nil {
			return s, err
		}
	}
	if x, ok := m["respectRetryAfter"]; ok {
		if s.RespectRetryAfter, err = d.boolean(x, join(path, "respectRetryAfter")); err != nil {
			return s, err
		}
	}
	if x, ok := m["kind"]; ok {
		v, err := d.scalar(x, join(path, "kind"))
		if err != nil {
			return s, err
		}
		if !contains(kinds, v) {
			return s, d.errf(x, join(path, "kind"), fmt.Sprintf("unknown backoff kind %q", v), "use one of %s", strings.Join(kinds, ", "))
		}
		s.Kind = Kind(v)
	}
	if x, ok := m["jitter"]; ok {
		v, err := d.scalar(x, join(path, "jitter"))
		if err != nil {
			return s, err
		}
		if !contains(jitters, v) {
			return s, d.errf(x, join(path, "jitter"), fmt.Sprintf("unknown jitter %q", v), "use one of %s", strings.Join(jitters, ", "))
		}
		s.Jitter = Jitter(v)
	}
	return s, nil
}

// String renders p in the policy YAML schema (for `chaos validate`, docs and
// golden files). The output parses back to a Policy with the same String.
func (p *Policy) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nenabled: %t\n", p.Name, p.Enabled)
	if p.MaxElapsed > 0 {
		fmt.Fprintf(&b, "maxElapsed: %s\n", p.MaxElapsed)
	}
	if p.AttemptTimeout > 0 {
		fmt.Fprintf(&b, "attemptTimeout: %s\n", p.AttemptTimeout)
	}
	if p.ClientTimeoutFinal {
		b.WriteString("clientTimeoutFinal: true\n")
	}
	b.WriteString(capsString(p))
	fmt.Fprintf(&b, "exponentStart: %d\nstreamErrors: %t\n", p.ExponentStart, p.StreamErrors)
	if p.StreamTransient {
		b.WriteString("streamTransient: true\n")
	}
	fmt.Fprintf(&b, "honorShouldRetry: %t\nallowIrreversible: %t\n", p.HonorShouldRetry, p.AllowIrreversible)
	if p.RetryableErrors != nil {
		fmt.Fprintf(&b, "retryableErrors: [%s]\n", strings.Join(p.RetryableErrors, ", "))
	}
	if len(p.StatusRetry) > 0 {
		b.WriteString("statusRetry:\n")
		var sts []int
		for st := range p.StatusRetry {
			sts = append(sts, st)
		}
		sort.Ints(sts)
		for _, st := range sts {
			fmt.Fprintf(&b, "  %d: %t\n", st, p.StatusRetry[st])
		}
	}
	fmt.Fprintf(&b, "retryAfter: {%s}\n", retryAfterString(p.RetryAfter))
	fmt.Fprintf(&b, "default: %s\n", strategyString(p.Default))
	if len(p.FailureTypes) > 0 {
		b.WriteString("failureTypes:\n")
		for _, ft := range sortedTypes(p.FailureTypes) {
			fmt.Fprintf(&b, "  %s: %s\n", ft, strategyString(p.FailureTypes[ft]))
		}
	}
	b.WriteString(escalationString(p.Escalation))
	fb := p.Fallback
	if fb.AdditionalAttempts < 1 {
		fb.AdditionalAttempts = 1
	}
	fmt.Fprintf(&b, "fallback: {enabled: %t, maxRetriesWithoutFallback: %d, additionalAttempts: %d}\n",
		fb.Enabled, fb.MaxRetriesWithoutFallback, fb.AdditionalAttempts)
	return b.String()
}

// capsString renders the global caps, when set.
func capsString(p *Policy) string {
	var s string
	if p.MaxAttempts > 0 {
		s += fmt.Sprintf("maxAttempts: %d\n", p.MaxAttempts)
	}
	if p.MaxDelay > 0 {
		s += fmt.Sprintf("maxDelay: %s\n", p.MaxDelay)
	}
	return s
}

// escalationString renders the escalation line; the ladder and the cost
// cap only when set.
func escalationString(e Escalation) string {
	s := fmt.Sprintf("escalation: {afterRetries: %d, onContextLimit: %t", e.AfterRetries, e.OnContextLimit)
	if len(e.Ladder) > 0 {
		s += fmt.Sprintf(", ladder: [%s]", strings.Join(e.Ladder, ", "))
	}
	if e.MaxCost > 0 {
		s += fmt.Sprintf(", maxCost: %v", e.MaxCost)
	}
	return s + "}\n"
}

// retryAfterString renders ra's fields; the rules added after the first
// five only when they are not the default, to keep renderings short.
func retryAfterString(ra RetryAfter) string {
	s := fmt.Sprintf("padding: %v, cap: %s, ceiling: %s, maxUsable: %s, integerOnly: %t",
		ra.Padding, ra.Cap, ra.Ceiling, ra.MaxUsable, ra.IntegerOnly)
	if ra.Header != "" {
		s += ", header: " + ra.Header
	}
	if ra.ZeroMsDefers {
		s += ", zeroMsDefers: true"
	}
	if ra.Zero != "" {
		s += ", zero: " + ra.Zero
	}
	if ra.Negative != "" {
		s += ", negative: " + ra.Negative
	}
	return s
}

func strategyString(s Strategy) string {
	kind, jit := s.Kind, s.Jitter
	if kind == "" {
		kind = Exponential
	}
	if jit == "" {
		jit = NoJitter
	}
	return fmt.Sprintf("{retry: %t, maxAttempts: %d, initialDelay: %s, maxDelay: %s, multiplier: %v, kind: %s, jitter: %s, jitterFraction: %v, respectRetryAfter: %t}",
		s.Retry, max(s.MaxAttempts, 1), s.InitialDelay, s.MaxDelay, s.Multiplier, kind, jit, s.JitterFraction, s.RespectRetryAfter)
}

// LoadPolicyFile reads and parses the policy file at path (a per-project
// policy, seed 004 US-004). A file that cannot be read is a *PolicyError
// naming it, with a hint; errors inside it name path:line and the field.
// A relative path is the caller's to resolve (a scenario's is relative to
// the scenario file).
func LoadPolicyFile(path string) (*Policy, error) {
	fail := func(msg, help string) (*Policy, error) {
		return nil, &PolicyError{File: path, Msg: msg, Help: help}
	}
	readHelp := "give the path of a policy YAML file, or a preset name: " + strings.Join(PresetNames(), ", ")
	// Stat before opening: opening a FIFO would block, and a device such as
	// /dev/zero never ends.
	fi, err := os.Stat(path)
	if err != nil {
		return fail("cannot read the policy file: "+pathErrMsg(err), readHelp)
	}
	if !fi.Mode().IsRegular() {
		return fail("not a regular file ("+fi.Mode().Type().String()+")", readHelp)
	}
	if fi.Size() > MaxPolicyFileBytes {
		return fail(fmt.Sprintf("the policy file is %d bytes, over the %d-byte limit", fi.Size(), MaxPolicyFileBytes),
			"a policy is a few dozen lines; check that the path names a policy file")
	}
	f, err := os.Open(path)
	if err != nil {
		return fail("cannot read the policy file: "+pathErrMsg(err), readHelp)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPolicyFileBytes+1))
	if err != nil {
		return fail("cannot read the policy file: "+pathErrMsg(err), readHelp)
	}
	if len(data) > MaxPolicyFileBytes {
		return fail(fmt.Sprintf("the policy file is over the %d-byte limit", MaxPolicyFileBytes),
			"a policy is a few dozen lines; check that the path names a policy file")
	}
	return ParsePolicy(data, path)
}

// MaxPolicyFileBytes bounds what LoadPolicyFile reads.
const MaxPolicyFileBytes = 1 << 20

func pathErrMsg(err error) string {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
