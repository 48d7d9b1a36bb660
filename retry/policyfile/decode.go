package policyfile

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/internal/yamldiag"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/preset"
)

// Parse parses a policy YAML document (see the package doc for the
// schema). file names the source in errors. Unknown keys, bad durations,
// unknown enum values and out-of-range numbers are errors naming
// file:line:column and the field, with a hint; every problem is reported
// at once, as one *Error.
func Parse(data []byte, file string) (*retry.Policy, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamldiag.Syntax(err)
		c := newCollector(file)
		c.AddAt(line, 0, "", msg, "the policy file must be valid YAML")
		return nil, &Error{c.List()}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		c := newCollector(file)
		c.AddAt(1, 0, "", "empty policy", "write `preset: forgeflare` or a mapping of policy fields")
		return nil, &Error{c.List()}
	}
	return DecodeNode(doc.Content[0], file)
}

// DecodeNode decodes a policy from a YAML node: a scalar preset name,
// or a mapping of policy fields that may start from `preset: NAME` and
// override it. file names the source in errors; every problem is reported
// at once, as one *Error.
func DecodeNode(n *yaml.Node, file string) (*retry.Policy, error) {
	d := &decoder{c: newCollector(file)}
	p := d.policyNode(n)
	if d.c.Len() > 0 {
		return nil, &Error{d.c.List()}
	}
	return p, nil
}

// policyNode is DecodeNode's decision on the node's shape.
func (d *decoder) policyNode(n *yaml.Node) *retry.Policy {
	if n == nil || n.Kind == 0 {
		d.errf(nil, "", "no policy given", "write a preset name ("+strings.Join(preset.Names(), ", ")+") or a mapping")
		return nil
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return d.preset(n, "policy")
	case yaml.MappingNode:
		return d.policy(n)
	}
	d.errf(n, "policy", "must be a preset name or a mapping", "e.g. `policy: forgeflare` or `policy: {preset: plandex, attemptTimeout: 30s}`")
	return nil
}

// decoder decodes a policy, collecting every problem.
type decoder struct{ c *yamldiag.Collector }

// errf records a problem at n (nil: no position) in field; hint says what
// to do about it.
func (d *decoder) errf(n *yaml.Node, field, msg, hint string) {
	d.c.Add(n, field, msg, hint)
}

func join(prefix, key string) string { return yamldiag.Join(prefix, key) }

// fields walks a mapping, reporting unknown keys (when known is not nil)
// and the second of duplicate keys, and returns the others, in order. Not
// a mapping, it reports that and returns nothing.
func (d *decoder) fields(n *yaml.Node, path string, known []string) (map[string]*yaml.Node, []string) {
	if n.Kind != yaml.MappingNode {
		d.errf(n, path, "must be a mapping", "write `key: value` pairs under "+path)
		return nil, nil
	}
	out := map[string]*yaml.Node{}
	var order []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if known != nil && !contains(known, k.Value) {
			d.errf(k, join(path, k.Value), "unknown field", "valid fields here: "+strings.Join(known, ", "))
			continue
		}
		if _, dup := out[k.Value]; dup {
			d.errf(k, join(path, k.Value), "duplicate field", "remove one of the two")
			continue
		}
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		out[k.Value] = v
		order = append(order, k.Value)
	}
	return out, order
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *decoder) scalar(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errf(n, path, "must be a single value", "write a scalar, not a list or a mapping")
		return "", false
	}
	return n.Value, true
}

var policyFields = []string{"preset", "name", "enabled", "maxElapsed", "attemptTimeout", "clientTimeoutFinal", "exponentStart",
	"streamErrors", "streamTransient", "honorShouldRetry", "allowIrreversible", "statusRetry", "retryAfter", "default", "all",
	"failureTypes", "escalation", "fallback", "retryableErrors", "escalateAfterRetries", "shouldRetryIgnored", "resends",
	"budget", "adaptiveThrottling",
	// Strategy fields at the top level are shorthand for `all`, but for
	// maxAttempts and maxDelay, which are global caps there (capFields).
	"retry", "maxAttempts", "maxRetries", "initialDelay", "maxDelay", "multiplier", "kind", "jitter",
	"jitterFraction", "respectRetryAfter"}

// capFields are the top-level keys that cap every failure type instead of
// setting it (seed 001's PLANDEX_MAX_RETRY_ATTEMPTS, PLANDEX_MAX_RETRY_DELAY_MS).
var capFields = []string{"maxAttempts", "maxDelay"}

var strategyFields = []string{"retry", "maxAttempts", "maxRetries", "initialDelay", "maxDelay", "multiplier",
	"kind", "jitter", "jitterFraction", "respectRetryAfter"}

// preset decodes a preset name at n.
func (d *decoder) preset(n *yaml.Node, path string) *retry.Policy {
	s, ok := d.scalar(n, path)
	if !ok {
		return nil
	}
	p, err := preset.Get(s)
	if err != nil {
		d.errf(n, path, fmt.Sprintf("unknown preset %q", s), "valid presets: "+strings.Join(preset.Names(), ", "))
		return nil
	}
	return p
}

// policy decodes a policy mapping: its preset (or the custom base), then
// each group of fields over it, in a fixed order (a later group overrides
// an earlier one: failureTypes wins over all, all over default).
func (d *decoder) policy(n *yaml.Node) *retry.Policy {
	f, _ := d.fields(n, "", policyFields)
	p := &retry.Policy{Name: "custom", Enabled: true,
		Default:      retry.Strategy{MaxAttempts: 1, Multiplier: 2, Kind: retry.Exponential, Jitter: retry.NoJitter},
		FailureTypes: map[retry.FailureType]retry.Strategy{}, StatusRetry: map[int]bool{}}
	if v, ok := f["preset"]; ok {
		if base := d.preset(v, "preset"); base != nil {
			p = base.Clone()
		}
	}
	d.globals(f, p)
	set(f, "default", "", &p.Default, func(n *yaml.Node, path string) (retry.Strategy, bool) { return d.strategy(n, path, p.Default), true })
	if top := topStrategy(n); top != nil {
		d.strategyOverride(top, "").applyAll(p)
	}
	if v, ok := f["all"]; ok {
		d.strategyOverride(v, "all").applyAll(p)
	}
	if v, ok := f["retryAfter"]; ok {
		d.retryAfter(v, p)
	}
	if v, ok := f["retryableErrors"]; ok {
		d.retryableErrors(v, p)
	}
	if v, ok := f["statusRetry"]; ok {
		d.statusRetry(v, p)
	}
	if v, ok := f["failureTypes"]; ok {
		d.failureTypes(v, p)
	}
	if v, ok := f["shouldRetryIgnored"]; ok {
		p.ShouldRetryIgnored = d.statusList(v, "shouldRetryIgnored")
	}
	if v, ok := f["resends"]; ok {
		d.resends(v, p)
	}
	set(f, "escalateAfterRetries", "", &p.Escalation.AfterRetries, d.intMin(0))
	if v, ok := f["escalation"]; ok {
		d.escalation(v, p)
	}
	if v, ok := f["fallback"]; ok {
		d.fallback(v, p)
	}
	if v, ok := f["budget"]; ok {
		d.budget(v, p)
	}
	if v, ok := f["adaptiveThrottling"]; ok {
		d.throttling(v, p)
	}
	d.checkRetryLimits(n, f, p)
	return p
}

// checkRetryLimits reports a strategy written `retry: true` that allows
// one attempt only (its maxAttempts, or the 1 of a policy without a
// preset): it says it retries and retries nothing, so every delays: policy
// verdict on it would be wrong. An unknown limit (maxRetries: unknown) is
// not a contradiction; a global maxAttempts cap of 1 is a deliberate
// switch and is not looked at.
func (d *decoder) checkRetryLimits(n *yaml.Node, f map[string]*yaml.Node, p *retry.Policy) {
	check := func(m *yaml.Node, path string, s retry.Strategy) {
		r := strategyKey(m, "retry")
		var retry bool
		if r == nil || r.Decode(&retry) != nil || !retry || !s.Retry || s.MaxAttempts > 1 || s.LimitUnknown {
			return
		}
		d.errf(r, join(path, "retry"), "retry: true with 1 attempt (maxAttempts 1): it retries nothing",
			"give the limit, e.g. maxRetries: 3 (maxRetries: unknown when it is not known), or write retry: false")
	}
	if top := topStrategy(n); top != nil {
		check(top, "", p.Default)
	}
	for _, k := range []string{"all", "default"} {
		if v, ok := f[k]; ok {
			check(v, k, p.Default)
		}
	}
	if v, ok := f["failureTypes"]; ok && v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.Content); i += 2 {
			k := v.Content[i].Value
			if s, ok := p.FailureTypes[retry.FailureType(k)]; ok {
				check(v.Content[i+1], join("failureTypes", k), s)
			}
		}
	}
}

// strategyKey is the value of key in the mapping m, or nil.
func strategyKey(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// globals reads the policy-wide scalars: name, the switches, the time
// limits, exponentStart and the caps.
func (d *decoder) globals(f map[string]*yaml.Node, p *retry.Policy) {
	set(f, "name", "", &p.Name, d.scalar)
	bools := []struct {
		key string
		dst *bool
	}{{"enabled", &p.Enabled}, {"streamErrors", &p.StreamErrors}, {"streamTransient", &p.StreamTransient},
		{"honorShouldRetry", &p.HonorShouldRetry}, {"clientTimeoutFinal", &p.ClientTimeoutFinal},
		{"allowIrreversible", &p.AllowIrreversible}}
	for _, b := range bools {
		set(f, b.key, "", b.dst, d.boolean)
	}
	set(f, "maxElapsed", "", &p.MaxElapsed, d.duration)
	set(f, "attemptTimeout", "", &p.AttemptTimeout, d.duration)
	set(f, "exponentStart", "", &p.ExponentStart, d.intMin(0))
	set(f, "maxAttempts", "", &p.MaxAttempts, d.intMin(0))
	set(f, "maxDelay", "", &p.MaxDelay, d.duration)
}

// statusRetry reads the statusRetry mapping: HTTP status → retry or not.
func (d *decoder) statusRetry(v *yaml.Node, p *retry.Policy) {
	m, order := d.fields(v, "statusRetry", nil)
	for _, k := range order {
		path := join("statusRetry", k)
		st, err := strconv.Atoi(k)
		if err != nil || st < 100 || st > 599 {
			d.errf(m[k], path, fmt.Sprintf("bad HTTP status %q", k), "use a status code from 100 to 599, e.g. `429: true`")
			continue
		}
		if b, ok := d.boolean(m[k], path); ok {
			p.StatusRetry[st] = b
		}
	}
}

// failureTypes reads the failureTypes mapping: each a strategy over the
// one the policy has so far for that type.
func (d *decoder) failureTypes(v *yaml.Node, p *retry.Policy) {
	m, order := d.fields(v, "failureTypes", nil)
	for _, k := range order {
		path := join("failureTypes", k)
		if !knownFailureType(k) {
			d.errf(keyNode(v, k), path, "unknown failure type", "valid types: "+strings.Join(failureTypeNames(), ", "))
			continue
		}
		ft := retry.FailureType(k)
		s, ok := p.FailureTypes[ft]
		if !ok {
			s = p.Default // as configured: the global caps apply when the loop reads it
		}
		p.FailureTypes[ft] = d.strategy(m[k], path, s)
	}
}

// escalation reads the escalation mapping: afterRetries, onContextLimit,
// ladder, maxCost.
func (d *decoder) escalation(v *yaml.Node, p *retry.Policy) {
	m, _ := d.fields(v, "escalation", []string{"afterRetries", "onContextLimit", "ladder", "maxCost"})
	set(m, "afterRetries", "escalation", &p.Escalation.AfterRetries, d.intMin(0))
	set(m, "onContextLimit", "escalation", &p.Escalation.OnContextLimit, d.boolean)
	if x, ok := m["ladder"]; ok {
		if ladder, ok := d.ladder(x); ok {
			p.Escalation.Ladder = ladder
		}
	}
	set(m, "maxCost", "escalation", &p.Escalation.MaxCost, d.floatIn(0, 1e6))
}

// fallback reads the fallback mapping (Plandex's chain).
func (d *decoder) fallback(v *yaml.Node, p *retry.Policy) {
	m, _ := d.fields(v, "fallback", []string{"enabled", "maxRetriesWithoutFallback", "additionalAttempts"})
	set(m, "enabled", "fallback", &p.Fallback.Enabled, d.boolean)
	set(m, "maxRetriesWithoutFallback", "fallback", &p.Fallback.MaxRetriesWithoutFallback, d.intMin(0))
	set(m, "additionalAttempts", "fallback", &p.Fallback.AdditionalAttempts, d.intMin(1))
}

// budget reads the budget mapping (gRPC's retry throttling, retry.Budget):
// maxTokens and tokenRatio, gRPC's 10 and 0.1 when left out.
func (d *decoder) budget(v *yaml.Node, p *retry.Policy) {
	m, _ := d.fields(v, "budget", []string{"maxTokens", "tokenRatio"})
	if m == nil {
		return
	}
	b := retry.BudgetConfig{MaxTokens: 10, TokenRatio: 0.1}
	set(m, "maxTokens", "budget", &b.MaxTokens, d.floatIn(1, 1000))
	set(m, "tokenRatio", "budget", &b.TokenRatio, d.floatIn(0.001, 100))
	p.Budget = b
}

// throttling reads the adaptiveThrottling mapping (the SRE book's
// client-side adaptive throttling, retry.Throttle): k and window, the
// book's 2 and 2m when left out.
func (d *decoder) throttling(v *yaml.Node, p *retry.Policy) {
	m, _ := d.fields(v, "adaptiveThrottling", []string{"k", "window"})
	if m == nil {
		return
	}
	t := retry.ThrottleConfig{K: retry.DefaultThrottleK, Window: retry.DefaultThrottleWindow}
	set(m, "k", "adaptiveThrottling", &t.K, d.floatIn(1, 100))
	if n, ok := m["window"]; ok {
		if w, ok := d.duration(n, "adaptiveThrottling.window"); ok {
			if w < time.Second || w > time.Hour {
				d.errf(n, "adaptiveThrottling.window", fmt.Sprintf("window %s is out of range", w), "use a window from 1s to 1h (the SRE book's is 2m)")
			} else {
				t.Window = w
			}
		}
	}
	p.Throttling = t
}

// ladder reads escalation.ladder: two models or more, each once.
func (d *decoder) ladder(x *yaml.Node) ([]string, bool) {
	if x.Kind != yaml.SequenceNode || len(x.Content) < 2 {
		d.errf(x, "escalation.ladder", "must be a list of at least two models", "write e.g. [claude-haiku-4-5, claude-sonnet-4-5, claude-opus-4-1], cheapest first")
		return nil, false
	}
	var ladder []string
	ok := true
	for _, item := range x.Content {
		switch {
		case item.Kind != yaml.ScalarNode || strings.TrimSpace(item.Value) == "":
			d.errf(item, "escalation.ladder", "must be a list of model names", "write e.g. [claude-haiku-4-5, claude-sonnet-4-5]")
			ok = false
		case contains(ladder, item.Value):
			d.errf(item, "escalation.ladder", fmt.Sprintf("model %q is on the ladder twice", item.Value), "name each model once, cheapest first")
			ok = false
		default:
			ladder = append(ladder, item.Value)
		}
	}
	return ladder, ok
}

// topStrategy collects the strategy fields written at the top level of a
// policy mapping into a mapping node of their own (nil if there are none).
// maxAttempts and maxDelay there are caps, not strategy fields. A key
// written twice is kept once: fields has reported it.
func topStrategy(n *yaml.Node) *yaml.Node {
	var out *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if !contains(strategyFields, k) || contains(capFields, k) || seen[k] {
			continue
		}
		seen[k] = true
		if out == nil {
			out = &yaml.Node{Kind: yaml.MappingNode, Line: n.Content[i].Line}
		}
		out.Content = append(out.Content, n.Content[i], n.Content[i+1])
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
func (d *decoder) retryableErrors(v *yaml.Node, p *retry.Policy) {
	if v.Kind != yaml.SequenceNode {
		d.errf(v, "retryableErrors", "must be a list", "write e.g. [rate_limit, server_error, timeout]")
		return
	}
	names := []string{}
	for _, item := range v.Content {
		switch {
		case item.Kind != yaml.ScalarNode:
			d.errf(item, "retryableErrors", "must be a list of failure type names", "write e.g. [rate_limit, server_error, timeout]")
		case !contains(retry.EpicNames(), item.Value) && !knownFailureType(item.Value):
			d.errf(item, "retryableErrors", fmt.Sprintf("unknown failure type %q", item.Value), "valid types: "+strings.Join(listNames(), ", "))
		case !contains(names, item.Value):
			names = append(names, item.Value)
		}
	}
	p.RetryableErrors = names
	p.Default.Retry = false
	for ft, s := range p.FailureTypes {
		// A logical failure is US-002's, not an error seed 004's
		// ErrorClassifier sees: the list leaves it as it was.
		if ft != retry.LogicalFailure {
			s.Retry = false
			p.FailureTypes[ft] = s
		}
	}
	p.StatusRetry = map[int]bool{}
}

func keyNode(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return m
}

func (d *decoder) retryAfter(v *yaml.Node, p *retry.Policy) {
	m, _ := d.fields(v, "retryAfter", []string{"respect", "header", "padding", "cap", "ceiling", "maxUsable",
		"integerOnly", "zeroMsDefers", "zero", "negative", "message", "jitter", "floor", "requiredFor", "nominalFloor", "integerPart", "noDate"})
	ra := &p.RetryAfter
	for _, e := range retryAfterRules(ra) {
		set(m, e.key, "retryAfter", e.dst, d.rule(e))
	}
	var o strategyOverride
	override(&o, m, "respect", "retryAfter", d.boolean, func(s *retry.Strategy, b bool) { s.RespectRetryAfter = b })
	o.applyAll(p)
	set(m, "padding", "retryAfter", &ra.Padding, d.floatIn(0, 10))
	set(m, "cap", "retryAfter", &ra.Cap, d.duration)
	set(m, "ceiling", "retryAfter", &ra.Ceiling, d.duration)
	set(m, "maxUsable", "retryAfter", &ra.MaxUsable, d.duration)
	set(m, "integerOnly", "retryAfter", &ra.IntegerOnly, d.boolean)
	set(m, "zeroMsDefers", "retryAfter", &ra.ZeroMsDefers, d.boolean)
	set(m, "message", "retryAfter", &ra.Message, d.boolean)
	set(m, "jitter", "retryAfter", &ra.Jitter, d.floatIn(0, 1))
	set(m, "floor", "retryAfter", &ra.Floor, d.boolean)
	set(m, "nominalFloor", "retryAfter", &ra.NominalFloor, d.boolean)
	set(m, "integerPart", "retryAfter", &ra.IntegerPart, d.boolean)
	set(m, "noDate", "retryAfter", &ra.NoDate, d.boolean)
	if n, ok := m["requiredFor"]; ok {
		ra.RequiredFor = d.typeList(n, "retryAfter.requiredFor")
	}
}

// typeList reads a list of failure type names.
func (d *decoder) typeList(n *yaml.Node, path string) []retry.FailureType {
	if n.Kind != yaml.SequenceNode {
		d.errf(n, path, "must be a list", "write e.g. [rate_limit]")
		return nil
	}
	var out []retry.FailureType
	for _, item := range n.Content {
		if item.Kind != yaml.ScalarNode || !knownFailureType(item.Value) {
			d.errf(item, path, fmt.Sprintf("unknown failure type %q", item.Value), "valid types: "+strings.Join(failureTypeNames(), ", "))
			continue
		}
		out = append(out, retry.FailureType(item.Value))
	}
	return out
}
