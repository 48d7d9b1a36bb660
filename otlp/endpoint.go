package otlp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/retrylab/retrylab/internal/wire"
)

// Which HTTP requests are a client's attempts at an answer is what the
// mock decides (internal/wire: the format whose Answers holds, found by
// wire.Recognize): POST to /v1/messages, /v1/chat/completions,
// /v1/responses, or a Gemini model's :generateContent /
// :streamGenerateContent. Everything else the mock answers beside the
// answer (a token count, a model list, a batch) is a side request, never
// an attempt. The one allowance is a gateway's base path in front of the
// version segment (/api/v1/chat/completions), which the mock never sees
// but a fleet's telemetry does.

// AttemptEndpoint reports whether a request with this method and URL (a
// full URL, or a path with an optional query) asks a provider for an
// answer, as the mock's wire formats decide. method "" stands for a span
// that does not name its method.
func AttemptEndpoint(method, rawURL string) bool {
	if method != "" && !strings.EqualFold(method, http.MethodPost) {
		return false
	}
	return endpointProvider(rawURL) != ""
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
		if name, _, ok := wire.Recognize(http.MethodPost, cand); ok {
			return name
		}
	}
	return ""
}
