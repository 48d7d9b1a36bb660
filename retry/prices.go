package retry

import (
	"math"
	"strings"
)

// PriceTable maps a model name, or a family substring of one ("haiku"), to
// its price in US dollars per 1,000 output tokens.
type PriceTable map[string]float64

// DefaultPrices are Anthropic's list prices for output tokens (November
// 2026 list: Haiku 4.5 $5, Sonnet 4.5 $15, Opus 4.1 $75 per million), per
// 1,000 tokens, keyed by family, plus OpenAI's gpt-4o ($10/M) and
// gpt-4o-mini ($0.60/M).
var DefaultPrices = PriceTable{
	"haiku":       0.005,
	"sonnet":      0.015,
	"opus":        0.075,
	"gpt-4o-mini": 0.0006,
	"gpt-4o":      0.010,
}

// Price returns the price of model: an exact key first, else the longest key
// that model contains.
func (t PriceTable) Price(model string) (float64, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	best, price := "", 0.0
	for k, p := range t {
		if strings.Contains(model, k) && len(k) > len(best) {
			best, price = k, p
		}
	}
	return price, best != ""
}

// Estimate is seed 004's costEstimate: (price(to) − price(from)) ×
// outputTokens/1000, with outputTokens 1000 when 0. ok is false when either
// model has no price.
func (t PriceTable) Estimate(from, to string, outputTokens int) (float64, bool) {
	pf, ok1 := t.Price(from)
	pt, ok2 := t.Price(to)
	if !ok1 || !ok2 {
		return 0, false
	}
	if outputTokens <= 0 {
		outputTokens = 1000
	}
	v := (pt - pf) * float64(outputTokens) / 1000
	return math.Round(v*1e6) / 1e6, true
}
