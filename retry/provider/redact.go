package provider

import (
	"regexp"
	"strings"
)

// Patterns of secrets, applied in order. Header forms keep the header's name
// and separator and lose the value: "x-api-key: ***", "Authorization: Bearer
// ***", `"x-api-key":"***"`, "x-api-key=***". Anything else that looks like a
// key (sk-...) becomes sk-***.
var secretREs = []struct {
	re   *regexp.Regexp
	repl string
}{
	// x-api-key (also api-key / api_key, the OpenAI Azure spelling) with
	// ":" or "=", quoted or not.
	{regexp.MustCompile(`(?i)((?:x-)?api[-_]key["']?\s*[:=]\s*["']?)([^\s"'\\,;&]+)`), "${1}***"},
	// Authorization: Bearer VALUE, Authorization: VALUE, and JSON forms.
	{regexp.MustCompile(`(?i)(authorization["']?\s*[:=]\s*["']?(?:bearer\s+|basic\s+)?)([^\s"'\\,;&]+)`), "${1}***"},
	// A bearer token anywhere else.
	{regexp.MustCompile(`(?i)(\bbearer\s+)([^\s"'\\,;&]+)`), "${1}***"},
	// sk-... at the start of a word only: "task-check" and "disk-full" are
	// not keys.
	{regexp.MustCompile(`(^|[^A-Za-z0-9_\-])sk-[A-Za-z0-9_\-]{4,}`), "${1}sk-***"},
}

// Redact removes anything that looks like an API key from s: sk-... keys,
// and the values of x-api-key and Authorization (Bearer) headers in any of
// the forms "x-api-key: V", "x-api-key=V", `"x-api-key":"V"`, case-
// insensitively. It is the one redaction of the module: the provider
// clients, the retry core, the chaos mock and the chaos runner all use it.
func Redact(s string) string {
	for _, p := range secretREs {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// RedactExact applies Redact, then removes every remaining occurrence of the
// given secrets (exact strings, e.g. the keys a client was seen to send),
// wherever they stand, even glued to other text. Secrets shorter than
// MinSecretLen are ignored: scrubbing them would mangle unrelated text.
func RedactExact(s string, secrets []string) string {
	s = Redact(s)
	for _, k := range secrets {
		if len(k) >= MinSecretLen {
			s = strings.ReplaceAll(s, k, "***")
		}
	}
	return s
}

// MinSecretLen is the shortest exact secret RedactExact scrubs.
const MinSecretLen = 8
