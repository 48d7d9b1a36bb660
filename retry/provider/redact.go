package provider

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Patterns of secrets, applied in order. Header forms keep the header's name
// and separator and lose the value: "x-api-key: ***", "Authorization: Bearer
// ***", `"x-api-key":"***"`, "x-api-key=***". Anything else that looks like a
// key (sk-...) becomes sk-***. marker is a lower-case string every match
// holds (after strings.ToLower, which folds as (?i) does: the Kelvin sign is
// a k): text without it is left alone without running the pattern.
var secretREs = []struct {
	re     *regexp.Regexp
	repl   string
	marker []string
}{
	// x-api-key (also api-key / api_key, the OpenAI Azure spelling) with
	// ":" or "=", quoted or not.
	{regexp.MustCompile(`(?i)((?:x-)?api[-_]key["']?\s*[:=]\s*["']?)([^\s"'\\,;&]+)`), "${1}***", []string{"api-key", "api_key"}},
	// Authorization: Bearer VALUE, Authorization: VALUE, and JSON forms.
	{regexp.MustCompile(`(?i)(authorization["']?\s*[:=]\s*["']?(?:bearer\s+|basic\s+)?)([^\s"'\\,;&]+)`), "${1}***", []string{"authorization"}},
	// A bearer token anywhere else.
	{regexp.MustCompile(`(?i)(\bbearer\s+)([^\s"'\\,;&]+)`), "${1}***", []string{"bearer"}},
	// A key in a URL's query: ?key=V (the Gemini API's), &api_key=V,
	// ?access_token=V, ?token=V.
	{regexp.MustCompile(`(?i)([?&](?:key|api_?key|access_token|token)=)([^\s"'\\&#]+)`), "${1}***", []string{"key=", "token="}},
	// A Google API key (AIza and 35 more characters) at the start of a
	// word.
	{regexp.MustCompile(`(^|[^A-Za-z0-9_\-])AIza[0-9A-Za-z_\-]{35}`), "${1}AIza***", []string{"aiza"}},
	// sk-... at the start of a word only: "task-check" and "disk-full" are
	// not keys.
	{regexp.MustCompile(`(^|[^A-Za-z0-9_\-])sk-[A-Za-z0-9_\-]{4,}`), "${1}sk-***", []string{"sk-"}},
}

// Redact removes anything that looks like an API key from s: sk-... keys,
// Google API keys (AIza...), the values of key=, api_key=, access_token=
// and token= in a URL's query, and the values of x-api-key and Authorization (Bearer) headers in any of
// the forms "x-api-key: V", "x-api-key=V", `"x-api-key":"V"`, case-
// insensitively. It is the one redaction of the module: the provider
// clients, the retry core, the chaos mock and the chaos runner all use it.
//
// Its time is linear in len(s); a pattern runs only on text that holds its
// marker ("api-key", "authorization", "bearer", "sk-").
func Redact(s string) string {
	lower, stale := strings.ToLower(s), false
	for _, p := range secretREs {
		if stale {
			lower, stale = strings.ToLower(s), false
		}
		if !containsAny(lower, p.marker) {
			continue
		}
		if r := p.re.ReplaceAllString(s, p.repl); r != s {
			s, stale = r, true
		}
	}
	return s
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// RedactExact applies Redact, then removes every remaining occurrence of the
// given secrets (exact strings, e.g. the keys a client was seen to send),
// wherever they stand, even glued to other text, and also written escaped:
// JSON \uXXXX escapes (of any subset of its characters, "\u0041KIA..."),
// JSON's \/ and \", or URL percent-encoding ("%41KIA...", "%2F"), mixed
// freely. Secrets shorter than MinSecretLen or longer than MaxSecretLen are
// ignored: scrubbing short ones would mangle unrelated text, and no key is
// that long. Callers that scrub much text with the same secrets should
// compile them once with NewMatcher.
func RedactExact(s string, secrets []string) string {
	return NewMatcher(secrets).Redact(s)
}

// MinSecretLen is the shortest exact secret RedactExact scrubs.
const MinSecretLen = 8

// MaxSecretLen is the longest exact secret RedactExact scrubs (a JWT access
// token fits).
const MaxSecretLen = 2048

// Matcher scrubs text of a fixed set of exact secrets (see RedactExact).
// It is safe for concurrent use.
type Matcher struct {
	keys    []string
	escaped *regexp.Regexp // every key in every escaped form; nil: no keys
	maxLen  int            // the longest match a key can have, in bytes
	short   bool           // a key holds / " or \, which JSON may escape short
}

// NewMatcher compiles secrets for RedactExact's matching, leaving out those
// shorter than MinSecretLen or longer than MaxSecretLen.
func NewMatcher(secrets []string) *Matcher {
	m := &Matcher{}
	var alts []string
	for _, k := range secrets {
		if len(k) < MinSecretLen || len(k) > MaxSecretLen || !utf8.ValidString(k) {
			continue
		}
		m.keys = append(m.keys, k)
		alts = append(alts, escapedPattern(k))
		m.short = m.short || strings.ContainsAny(k, `/"\`)
		// \uXXXX (6 bytes) is the longest form of a character; a
		// character beyond the BMP is a surrogate pair (12 bytes) for 4
		// bytes of UTF-8.
		m.maxLen = max(m.maxLen, 6*len(k))
	}
	// Longest first: where one key holds another, the whole goes.
	sort.SliceStable(m.keys, func(i, j int) bool { return len(m.keys[i]) > len(m.keys[j]) })
	if len(alts) > 0 {
		sort.SliceStable(alts, func(i, j int) bool { return len(alts[i]) > len(alts[j]) })
		m.escaped = regexp.MustCompile(strings.Join(alts, "|"))
	}
	return m
}

// MaxMatchLen is the longest text one of m's secrets can match, in any of
// its forms: a stream cut into pieces at least this far from a piece's end
// never splits a secret.
func (m *Matcher) MaxMatchLen() int {
	if m == nil {
		return 0
	}
	return m.maxLen
}

// Redact applies Redact, then removes m's secrets in every form.
func (m *Matcher) Redact(s string) string {
	s = Redact(s)
	if m == nil {
		return s
	}
	for _, k := range m.keys {
		if strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, "***")
		}
	}
	ws := m.windows(s)
	if len(ws) == 0 {
		return s
	}
	var b strings.Builder
	at := 0
	for _, w := range ws {
		b.WriteString(s[at:w[0]])
		b.WriteString(m.escaped.ReplaceAllString(s[w[0]:w[1]], "***"))
		at = w[1]
	}
	b.WriteString(s[at:])
	return b.String()
}

// windows returns the parts of s where an escaped key may stand: around
// each escape (\u, %XX, and \/ \" \\ if a key holds / " or \), as far
// as the longest match either side, merged. The escaped-form pattern runs on
// these alone: plain text and JSON with only \" escapes are not searched.
func (m *Matcher) windows(s string) [][2]int {
	if m == nil || m.escaped == nil {
		return nil
	}
	var ws [][2]int
	for i := 0; i < len(s); {
		j := strings.IndexAny(s[i:], `\%`)
		if j < 0 {
			break
		}
		i += j
		esc := false
		if s[i] == '%' {
			esc = i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
		} else if i+1 < len(s) {
			c := s[i+1]
			esc = c == 'u' || m.short && (c == '/' || c == '"' || c == '\\')
		}
		if esc {
			lo, hi := max(i-m.maxLen, 0), min(i+m.maxLen, len(s))
			if n := len(ws); n > 0 && lo <= ws[n-1][1] {
				ws[n-1][1] = hi
			} else {
				ws = append(ws, [2]int{lo, hi})
			}
		}
		i++
	}
	return ws
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// Spans returns the byte ranges [start, end) of s that Redact or m would
// replace, in no particular order (they may overlap): a cut of s that falls
// inside none of them redacts each piece as the whole would be.
func (m *Matcher) Spans(s string) [][2]int {
	var out [][2]int
	lower := strings.ToLower(s)
	for _, p := range secretREs {
		if !containsAny(lower, p.marker) {
			continue
		}
		for _, loc := range p.re.FindAllStringIndex(s, -1) {
			out = append(out, [2]int{loc[0], loc[1]})
		}
	}
	if m == nil {
		return out
	}
	for _, k := range m.keys {
		for i := 0; ; {
			j := strings.Index(s[i:], k)
			if j < 0 {
				break
			}
			out = append(out, [2]int{i + j, i + j + len(k)})
			i += j + 1
		}
	}
	for _, w := range m.windows(s) {
		for _, loc := range m.escaped.FindAllStringIndex(s[w[0]:w[1]], -1) {
			out = append(out, [2]int{w[0] + loc[0], w[0] + loc[1]})
		}
	}
	return out
}

// escapedPattern is a regexp matching k with each character written as
// itself, as a JSON \uXXXX escape (hex digits in either case), as JSON's
// short escape where it has one (\/ \" \\), or percent-encoded (each byte
// of its UTF-8 as %XX).
func escapedPattern(k string) string {
	var b strings.Builder
	for _, r := range k {
		b.WriteString("(?:")
		b.WriteString(regexp.QuoteMeta(string(r)))
		if r > 0xFFFF {
			r1, r2 := surrogates(r)
			fmt.Fprintf(&b, `|\\u%s\\u%s`, hexPattern(r1, 4), hexPattern(r2, 4))
		} else {
			fmt.Fprintf(&b, `|\\u%s`, hexPattern(r, 4))
		}
		switch r {
		case '/':
			b.WriteString(`|\\/`)
		case '"':
			b.WriteString(`|\\"`)
		case '\\':
			b.WriteString(`|\\\\`)
		}
		b.WriteString("|")
		var buf [utf8.UTFMax]byte
		for _, c := range buf[:utf8.EncodeRune(buf[:], r)] {
			b.WriteString("%" + hexPattern(rune(c), 2))
		}
		b.WriteString(")")
	}
	return b.String()
}

// hexPattern matches v as n hex digits, in either case.
func hexPattern(v rune, n int) string {
	var b strings.Builder
	for _, c := range fmt.Sprintf("%0*x", n, v) {
		if c >= 'a' && c <= 'f' {
			b.WriteString("[" + string(c) + string(c-'a'+'A') + "]")
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}

func surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}
