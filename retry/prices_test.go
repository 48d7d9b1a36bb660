package retry

import "testing"

func TestPriceEstimate(t *testing.T) {
	t.Parallel()
	got, ok := DefaultPrices.Estimate("claude-haiku-4-5", "claude-opus-4-1", 2000)
	if !ok || got != 0.14 {
		t.Errorf("Estimate = %v, %v; want 0.14", got, ok)
	}
	if _, ok := DefaultPrices.Estimate("llama", "claude-opus-4-1", 0); ok {
		t.Error("Estimate of an unpriced model is ok")
	}
	if p, _ := DefaultPrices.Price("gpt-4o-mini-2024"); p != 0.0006 {
		t.Errorf("longest key did not win: %v", p)
	}
}
