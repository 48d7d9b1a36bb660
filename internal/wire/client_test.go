package wire_test

import (
	"slices"
	"testing"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/retry/preset"
)

// TestClientEnv holds what a client is told: each variable once, in the
// registry's order, the OpenAI base URL with its /v1.
func TestClientEnv(t *testing.T) {
	const proxy = "http://127.0.0.1:4000"
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"BaseURLEnv", wire.BaseURLEnv(proxy), []string{"ANTHROPIC_BASE_URL=" + proxy,
			"OPENAI_BASE_URL=" + proxy + "/v1", "GOOGLE_GEMINI_BASE_URL=" + proxy}},
		{"KeyEnv", wire.KeyEnv("k"), []string{"ANTHROPIC_API_KEY=k", "OPENAI_API_KEY=k", "GEMINI_API_KEY=k"}},
		{"BaseURLVars", wire.BaseURLVars(), []string{"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"}},
		{"ClientVars", wire.ClientVars(), []string{"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL",
			"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	const hint = "OPENAI_BASE_URL is the proxy + /v1; ANTHROPIC_BASE_URL and GOOGLE_GEMINI_BASE_URL are the proxy"
	if got := wire.BaseURLHint(); got != hint {
		t.Errorf("BaseURLHint = %q, want %q", got, hint)
	}
}

// TestSDKPresets holds every format's SDK preset to a preset the retry
// core knows: a scenario that names no policy gets it.
func TestSDKPresets(t *testing.T) {
	want := map[string]string{"anthropic": "anthropic-sdk", "openai": "openai-sdk",
		"openai-responses": "openai-sdk", "gemini": "gemini-sdk"}
	for _, name := range wire.Names() {
		got := wire.SDKPreset(name)
		if w, ok := want[name]; ok && got != w {
			t.Errorf("SDKPreset(%q) = %q, want %q", name, got, w)
		}
		if _, err := preset.Get(got); err != nil {
			t.Errorf("format %q: its SDK preset: %v", name, err)
		}
		c := wire.Must(name).Client()
		if c.BaseURLVar == "" || c.KeyVar == "" {
			t.Errorf("format %q names no base-URL or key variable: %+v", name, c)
		}
	}
	if got := wire.SDKPreset("nope"); got != "" {
		t.Errorf("SDKPreset(nope) = %q, want \"\"", got)
	}
}
