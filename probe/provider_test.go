package probe

import "testing"

func TestLookupProvider(t *testing.T) {
	if _, err := LookupProvider("gemini2"); err == nil || err.Error() != `unknown provider "gemini2" (known: anthropic, gemini, openai, openai-responses)` {
		t.Errorf("LookupProvider(gemini2) = %v", err)
	}
}
