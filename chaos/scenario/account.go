package scenario

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Account is a scenario's limits: key, the provider account the mock
// serves every client of the scenario from (DESIGN.md, "Outages, fleets,
// findings and the matrix"): continuous-refill token buckets per minute of
// policy time, and a cap on the answers in flight at once. Each field is
// optional; 0 is unlimited. The mock enforces it (chaos/mock/account.go).
type Account struct {
	// RequestsPerMinute is requests per minute: each attempt takes one.
	RequestsPerMinute int `yaml:"requestsPerMinute"`
	// InputTokensPerMinute is the input tokens of the requests per
	// minute, each request's estimated from its size.
	InputTokensPerMinute int `yaml:"inputTokensPerMinute"`
	// OutputTokensPerMinute is the output tokens of the answers per
	// minute, each answer's its usage's, charged when it is served.
	OutputTokensPerMinute int `yaml:"outputTokensPerMinute"`
	// Concurrency is how many answers may be in flight at once; one more
	// is answered overloaded (529 Anthropic, 503 the others).
	Concurrency int `yaml:"concurrency"`
}

// Empty reports whether the account limits nothing.
func (a *Account) Empty() bool { return a == nil || *a == Account{} }

// fields lists the account's keys with their values and bounds, for
// validation.
func (a *Account) fields() []struct {
	key   string
	value int
	max   int
} {
	return []struct {
		key   string
		value int
		max   int
	}{
		{"requestsPerMinute", a.RequestsPerMinute, MaxRequestsPerMinute},
		{"inputTokensPerMinute", a.InputTokensPerMinute, MaxTokensPerMinute},
		{"outputTokensPerMinute", a.OutputTokensPerMinute, MaxTokensPerMinute},
		{"concurrency", a.Concurrency, MaxConcurrency},
	}
}

// validateLimits checks limits: what decoding alone does not: it limits
// something, and each value is within its bound (limits.go).
func (d *decoder) validateLimits(n *yaml.Node, a *Account) {
	const example = "e.g. limits: {requestsPerMinute: 50, concurrency: 4}"
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" || n.Kind == yaml.MappingNode && len(n.Content) == 0 {
		d.errorf(n, "limits", "give at least one of requestsPerMinute, inputTokensPerMinute, outputTokensPerMinute, concurrency ("+example+"), or remove limits:", "limits limits nothing")
		return
	}
	if a == nil || n.Kind != yaml.MappingNode {
		return
	}
	fields := mapping(n)
	for _, f := range a.fields() {
		if f.value > f.max {
			d.errorf(fields[f.key], "limits."+f.key, fmt.Sprintf("use at most %d (0 is unlimited)", f.max), "%s is %d, above %d", f.key, f.value, f.max)
		}
	}
}
