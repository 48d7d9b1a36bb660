package wire

import (
	"slices"
	"strings"
)

// A client finds the mock through its formats' variables: every format
// says in Client which variable holds its base URL and which its key, so
// that a new format is pointed at the mock without a list to extend. Two
// formats may share variables (the OpenAI SDKs speak Chat Completions and
// Responses through OPENAI_BASE_URL): each is set once.

// BaseURLEnv returns NAME=VALUE for every format's base-URL variable,
// pointing a client at proxy (http://127.0.0.1:PORT): the proxy itself,
// or the proxy and the format's BasePath ("/v1" for OPENAI_BASE_URL).
func BaseURLEnv(proxy string) []string {
	var env []string
	for _, c := range clients() {
		env = appendOnce(env, c.BaseURLVar, proxy+c.BasePath)
	}
	return env
}

// KeyEnv returns NAME=key for every format's API key variable.
func KeyEnv(key string) []string {
	var env []string
	for _, c := range clients() {
		env = appendOnce(env, c.KeyVar, key)
	}
	return env
}

// BaseURLVars returns the names of every format's base-URL variable, each
// once: ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL.
func BaseURLVars() []string { return names(BaseURLEnv("")) }

// ClientVars returns the names of every format's base-URL variables, then
// of their key variables, each once: the names the harness sets for every
// external client.
func ClientVars() []string { return append(BaseURLVars(), names(KeyEnv(""))...) }

// names returns the names of NAME= entries.
func names(env []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		out[i], _, _ = strings.Cut(kv, "=")
	}
	return out
}

// BaseURLHint says what each base-URL variable holds, for a client whose
// requests went to paths the mock does not serve: "OPENAI_BASE_URL is
// the proxy + /v1; ANTHROPIC_BASE_URL and GOOGLE_GEMINI_BASE_URL are the
// proxy" (variables with a base path first, as they are the ones most
// often set wrong).
func BaseURLHint() string {
	var withPath, bare []string
	seen := map[string]bool{}
	for _, c := range clients() {
		if seen[c.BaseURLVar] {
			continue
		}
		seen[c.BaseURLVar] = true
		if c.BasePath != "" {
			withPath = append(withPath, c.BaseURLVar+" is the proxy + "+c.BasePath)
		} else {
			bare = append(bare, c.BaseURLVar)
		}
	}
	parts := withPath
	switch len(bare) {
	case 0:
	case 1:
		parts = append(parts, bare[0]+" is the proxy")
	default:
		parts = append(parts, strings.Join(bare[:len(bare)-1], ", ")+" and "+bare[len(bare)-1]+" are the proxy")
	}
	return strings.Join(parts, "; ")
}

// SDKPreset returns the retry core's preset of the official SDK of the
// format a provider name names ("" for an unknown name).
func SDKPreset(provider string) string {
	if f, ok := formats[provider]; ok {
		return f.Client().SDKPreset
	}
	return ""
}

// clients returns every format's Client, in registry order.
func clients() []Client {
	cs := make([]Client, 0, len(registry))
	for _, r := range registry {
		cs = append(cs, r.format.Client())
	}
	return cs
}

// appendOnce appends name=value to env unless env sets name already.
func appendOnce(env []string, name, value string) []string {
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
		return env
	}
	return append(env, name+"="+value)
}
