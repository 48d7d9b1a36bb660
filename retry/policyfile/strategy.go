package policyfile

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/retry"
)

// strategyOverride is what a strategy mapping sets, decoded once (its
// problems reported once) and applied to as many strategies as it covers.
type strategyOverride []func(*retry.Strategy)

func (o strategyOverride) apply(s retry.Strategy) retry.Strategy {
	for _, f := range o {
		f(&s)
	}
	return s
}

// applyAll applies o to the policy's default and each failure type's
// strategy.
func (o strategyOverride) applyAll(p *retry.Policy) {
	if len(o) == 0 {
		return
	}
	p.Default = o.apply(p.Default)
	for ft, s := range p.FailureTypes {
		p.FailureTypes[ft] = o.apply(s)
	}
}

// override adds to o the setting of m[key], when present and good.
func override[T any](o *strategyOverride, m map[string]*yaml.Node, key, path string, dec func(*yaml.Node, string) (T, bool), apply func(*retry.Strategy, T)) {
	var v T
	ok := false
	set(m, key, path, &v, func(n *yaml.Node, p string) (T, bool) {
		x, good := dec(n, p)
		ok = good
		return x, good
	})
	if ok {
		*o = append(*o, func(s *retry.Strategy) { apply(s, v) })
	}
}

// strategy overrides s with the fields present in n.
func (d *decoder) strategy(n *yaml.Node, path string, s retry.Strategy) retry.Strategy {
	return d.strategyOverride(n, path).apply(s)
}

// strategyOverride decodes a strategy mapping.
func (d *decoder) strategyOverride(n *yaml.Node, path string) strategyOverride {
	m, _ := d.fields(n, path, strategyFields)
	if _, a := m["maxAttempts"]; a {
		if _, b := m["maxRetries"]; b {
			d.errf(m["maxRetries"], join(path, "maxRetries"), "maxRetries and maxAttempts both given", "keep one: maxAttempts = maxRetries + 1")
		}
	}
	var o strategyOverride
	override(&o, m, "retry", path, d.boolean, func(s *retry.Strategy, v bool) { s.Retry = v })
	override(&o, m, "maxAttempts", path, orUnknown(d.intMin(1)), func(s *retry.Strategy, v unknownOr[int]) {
		s.LimitUnknown = v.unknown
		if !v.unknown {
			s.MaxAttempts = v.v
		}
	})
	override(&o, m, "maxRetries", path, orUnknown(d.intMin(0)), func(s *retry.Strategy, v unknownOr[int]) {
		s.LimitUnknown = v.unknown
		if !v.unknown {
			s.MaxAttempts = v.v + 1
		}
	})
	override(&o, m, "initialDelay", path, orUnknown(d.duration), func(s *retry.Strategy, v unknownOr[time.Duration]) {
		s.WaitsUnknown = v.unknown
		if !v.unknown {
			s.InitialDelay = v.v
		}
	})
	override(&o, m, "maxDelay", path, d.duration, func(s *retry.Strategy, v time.Duration) { s.MaxDelay = v })
	override(&o, m, "multiplier", path, d.floatIn(0, 100), func(s *retry.Strategy, v float64) { s.Multiplier = v })
	override(&o, m, "jitterFraction", path, d.floatIn(0, 1), func(s *retry.Strategy, v float64) { s.JitterFraction = v })
	override(&o, m, "respectRetryAfter", path, d.boolean, func(s *retry.Strategy, v bool) { s.RespectRetryAfter = v })
	override(&o, m, "kind", path, d.oneOf("backoff kind", kinds), func(s *retry.Strategy, v string) { s.Kind = retry.Kind(v) })
	override(&o, m, "jitter", path, d.oneOf("jitter", jitters), func(s *retry.Strategy, v string) { s.Jitter = retry.Jitter(v) })
	return o
}

// unknownOr is a strategy figure that may be written `unknown` (a policy
// learnt by experiment: Strategy.LimitUnknown, WaitsUnknown).
type unknownOr[T any] struct {
	v       T
	unknown bool
}

// orUnknown decodes the word unknown, else what dec decodes.
func orUnknown[T any](dec func(*yaml.Node, string) (T, bool)) func(*yaml.Node, string) (unknownOr[T], bool) {
	return func(n *yaml.Node, path string) (unknownOr[T], bool) {
		if n.Kind == yaml.ScalarNode && n.Value == "unknown" {
			return unknownOr[T]{unknown: true}, true
		}
		v, ok := dec(n, path)
		return unknownOr[T]{v: v}, ok
	}
}
