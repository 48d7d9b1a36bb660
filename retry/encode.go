package retry

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

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
	b.WriteString(resendsString(p))
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
	if bc := p.Budget; bc.MaxTokens > 0 {
		fmt.Fprintf(&b, "budget: {maxTokens: %s, tokenRatio: %s}\n", ftoa(bc.MaxTokens), ftoa(bc.TokenRatio))
	}
	if t := p.Throttling; t.K > 0 {
		fmt.Fprintf(&b, "adaptiveThrottling: {k: %s, window: %s}\n", ftoa(t.K), t.Window)
	}
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
	if ra.Jitter != 0 {
		s += fmt.Sprintf(", jitter: %v", ra.Jitter)
	}
	if ra.Floor {
		s += ", floor: true"
	}
	if ra.NominalFloor {
		s += ", nominalFloor: true"
	}
	if ra.IntegerPart {
		s += ", integerPart: true"
	}
	if ra.NoDate {
		s += ", noDate: true"
	}
	if len(ra.RequiredFor) > 0 {
		names := make([]string, len(ra.RequiredFor))
		for i, ft := range ra.RequiredFor {
			names[i] = string(ft)
		}
		s += ", requiredFor: [" + strings.Join(names, ", ") + "]"
	}
	if ra.Zero != "" {
		s += ", zero: " + ra.Zero
	}
	if ra.Negative != "" {
		s += ", negative: " + ra.Negative
	}
	if ra.Message {
		s += ", message: true"
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
	attempts, initial := fmt.Sprint(max(s.MaxAttempts, 1)), s.InitialDelay.String()
	if s.LimitUnknown {
		attempts = "unknown"
	}
	if s.WaitsUnknown {
		initial = "unknown"
	}
	return fmt.Sprintf("{retry: %t, maxAttempts: %s, initialDelay: %s, maxDelay: %s, multiplier: %v, kind: %s, jitter: %s, jitterFraction: %v, respectRetryAfter: %t}",
		s.Retry, attempts, initial, s.MaxDelay, s.Multiplier, kind, jit, s.JitterFraction, s.RespectRetryAfter)
}

// resendsString renders p's resends and shouldRetryIgnored, when set.
func resendsString(p *Policy) string {
	var b strings.Builder
	if len(p.ShouldRetryIgnored) > 0 {
		fmt.Fprintf(&b, "shouldRetryIgnored: [%s]\n", intsString(p.ShouldRetryIgnored))
	}
	if len(p.Resends) == 0 {
		return b.String()
	}
	b.WriteString("resends:\n")
	for _, rs := range p.Resends {
		s := strings.TrimSuffix(strings.TrimPrefix(strategyString(rs.Strategy), "{"), "}")
		var head []string
		if len(rs.Statuses) > 0 {
			head = append(head, "statuses: ["+intsString(rs.Statuses)+"]")
		}
		if rs.Streamed {
			head = append(head, "streamed: true")
		}
		if len(rs.Types) > 0 {
			names := make([]string, len(rs.Types))
			for i, ft := range rs.Types {
				names[i] = string(ft)
			}
			head = append(head, "types: ["+strings.Join(names, ", ")+"]")
		}
		if rs.Restart {
			head = append(head, "restart: true")
		}
		if rs.NoStream {
			head = append(head, "noStream: true")
		}
		if rs.InRequest {
			head = append(head, "inRequest: true")
		}
		fmt.Fprintf(&b, "  - {%s, %s}\n", strings.Join(head, ", "), s)
	}
	return b.String()
}

func intsString(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// ftoa writes a number as short as it parses back.
func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
