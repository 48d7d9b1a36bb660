package retry

import "sync"

// Budget is a process-wide retry budget with gRPC's retryThrottling
// semantics: a token bucket that starts full at maxTokens; every failed
// attempt takes one token, every success gives back tokenRatio tokens (never
// above maxTokens); retries (and fallback or ladder switches) are allowed only
// while more than maxTokens/2 tokens remain. Many Retriers may share one
// Budget; a nil *Budget allows everything.
type Budget struct {
	mu     sync.Mutex
	max    float64
	ratio  float64
	tokens float64
}

// NewBudget returns a full budget. gRPC's defaults are maxTokens 10 and
// tokenRatio 0.1.
func NewBudget(maxTokens, tokenRatio float64) *Budget {
	return &Budget{max: maxTokens, ratio: tokenRatio, tokens: maxTokens}
}

// OnFailure records a failed attempt.
func (b *Budget) OnFailure() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.tokens = max(0, b.tokens-1)
	b.mu.Unlock()
}

// OnSuccess records a successful attempt.
func (b *Budget) OnSuccess() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.tokens = min(b.max, b.tokens+b.ratio)
	b.mu.Unlock()
}

// AllowRetry reports whether a retry may be made now.
func (b *Budget) AllowRetry() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens > b.max/2
}

// Tokens returns the tokens left.
func (b *Budget) Tokens() float64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens
}
