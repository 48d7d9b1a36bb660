package scenario

import "testing"

// A scenario of the Responses wire format that names no policy gets the
// OpenAI SDK's, the SDK that speaks it; the others get NAME-sdk.
func TestSDKPreset(t *testing.T) {
	t.Parallel()
	for provider, want := range map[string]string{"anthropic": "anthropic-sdk", "openai": "openai-sdk", "openai-responses": "openai-sdk"} {
		sc := &Scenario{Provider: provider}
		pol, err := PolicyFor(sc)
		if err != nil || pol.Name != want {
			t.Errorf("policyFor(provider %s) = %v, %v; want the %s preset", provider, pol, err, want)
		}
	}
}
