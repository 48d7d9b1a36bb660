package otlp

import (
	"net/http"
	"net/url"
	"strings"
)

// Which HTTP requests are a client's attempts at an answer mirrors how the
// mock decides (internal/wire, each format's Answers): POST to
// /v1/messages, /v1/chat/completions, /v1/responses, or a Gemini model's
// :generateContent / :streamGenerateContent under /v1beta, /v1 or
// /v1alpha. Everything else the mock answers beside the answer — a token
// count (/v1/messages/count_tokens, /v1/responses/input_tokens,
// :countTokens), a model list, a batch (/v1/messages/batches) — is a side
// request, never an attempt. The paths match exactly, as the mock matches
// them; the one allowance is a gateway's base path in front of the version
// segment (/api/v1/chat/completions), which the mock never sees but a
// fleet's telemetry does. internal/wire's tests hold the two in step.

// attemptPaths are the answer paths of the OpenAI-style and Anthropic
// formats.
var attemptPaths = []string{"/v1/messages", "/v1/chat/completions", "/v1/responses"}

// geminiVersions are the version prefixes of Gemini's model paths.
var geminiVersions = []string{"/v1beta/models/", "/v1/models/", "/v1alpha/models/"}

// AttemptEndpoint reports whether a request with this method and URL (a
// full URL, or a path with an optional query) asks a provider for an
// answer, as the mock's wire formats decide. method "" stands for a span
// that does not name its method.
func AttemptEndpoint(method, rawURL string) bool {
	if method != "" && !strings.EqualFold(method, http.MethodPost) {
		return false
	}
	p, ok := urlPath(rawURL)
	if !ok {
		return false
	}
	for _, cand := range basePaths(p) {
		if attemptPath(cand) {
			return true
		}
	}
	return false
}

// attemptPath reports whether path, with no base path before it, is an
// answer path.
func attemptPath(path string) bool {
	for _, ap := range attemptPaths {
		if path == ap {
			return true
		}
	}
	for _, v := range geminiVersions {
		rest, ok := strings.CutPrefix(path, v)
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, ':')
		if i <= 0 || strings.Contains(rest[:i], "/") {
			return false
		}
		m := rest[i+1:]
		return m == "generateContent" || m == "streamGenerateContent"
	}
	return false
}

// basePaths returns path, then path with a gateway's base path cut off
// before each later version segment (/v1/, /v1beta/, /v1alpha/).
func basePaths(path string) []string {
	out := []string{path}
	for i := 1; i < len(path); i++ {
		if path[i] != '/' {
			continue
		}
		rest := path[i:]
		for _, v := range []string{"/v1/", "/v1beta/", "/v1alpha/"} {
			if strings.HasPrefix(rest, v) {
				out = append(out, rest)
				break
			}
		}
	}
	return out
}

// urlPath returns the path of a full URL or of a path with a query.
func urlPath(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return "", false
	}
	return u.Path, true
}

// endpointProvider names the wire format of an answer URL (the mock's
// provider names), "" for none.
func endpointProvider(rawURL string) string {
	p, ok := urlPath(rawURL)
	if !ok {
		return ""
	}
	for _, cand := range basePaths(p) {
		switch {
		case cand == "/v1/messages":
			return "anthropic"
		case cand == "/v1/chat/completions":
			return "openai"
		case cand == "/v1/responses":
			return "openai-responses"
		case attemptPath(cand):
			return "gemini"
		}
	}
	return ""
}
