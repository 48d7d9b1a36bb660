package provider

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"key sk-ant-abc123XYZ here", "key sk-*** here"},
		{"x-api-key: hidden-key-123", "x-api-key: ***"},
		{"X-Api-Key: hidden-key-123\r\n", "X-Api-Key: ***\r\n"},
		{"x-api-key=hidden-key-123 next", "x-api-key=*** next"},
		{`{"x-api-key":"hidden-key-123","model":"m"}`, `{"x-api-key":"***","model":"m"}`},
		{`{"X-API-KEY": "hidden-key-123"}`, `{"X-API-KEY": "***"}`},
		{"Authorization: Bearer tok_abcdef", "Authorization: Bearer ***"},
		{"authorization: bearer tok_abcdef", "authorization: bearer ***"},
		{`"Authorization":"Bearer tok_abcdef"`, `"Authorization":"Bearer ***"`},
		{"authorization=tok_abcdef", "authorization=***"},
		{"sent Bearer tok_abcdef to it", "sent Bearer *** to it"},
		{"Authorization: Bearer sk-proj-123456", "Authorization: Bearer ***"},
		{"nothing secret here", "nothing secret here"},
		{"x-api-key: ***", "x-api-key: ***"},
		// Regression: sk- inside a word is not a key ("task-check" was
		// rewritten to "task-***", renaming scenarios and run folders).
		{"scenario curl-task-check passed", "scenario curl-task-check passed"},
		{"disk-full risk-free ask-me", "disk-full risk-free ask-me"},
		{"(sk-abcd1234) key=sk-abcd1234", "(sk-***) key=sk-***"},
		{"sk-retrylab-test-0000", "sk-***"},
		// Inside a JSON string an escape is never eaten: the result stays
		// valid JSON.
		{`{"cmd":"h = {\"Authorization\": \"Bearer \" + k}"}`, `{"cmd":"h = {\"Authorization\": \"Bearer \" + k}"}`},
		{`{"log":"x-api-key: abcdefgh\n"}`, `{"log":"x-api-key: ***\n"}`},
		// Gemini: the key in a URL's query, in x-goog-api-key, or bare.
		{"POST /v1beta/models/m:streamGenerateContent?alt=sse&key=goog-test-1 HTTP/1.1", "POST /v1beta/models/m:streamGenerateContent?alt=sse&key=*** HTTP/1.1"},
		{"GET /v1beta/models?KEY=goog-test-1&pageSize=5", "GET /v1beta/models?KEY=***&pageSize=5"},
		{"x-goog-api-key: goog-test-1", "x-goog-api-key: ***"},
		{"key AIzaSyA1234567890abcdefghijklmnopqrstuv used", "key AIza*** used"},
		{"the monkey=banana and ?keys=1", "the monkey=banana and ?keys=1"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Redact(Redact(tc.in)); got != tc.want {
			t.Errorf("Redact twice (%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactExact(t *testing.T) {
	t.Parallel()
	keys := []string{"plainkey-42", "ab", "ollama", "secret-token"}
	for _, tc := range []struct{ in, want string }{
		{"client says plainkey-42 and ab", "client says *** and ab"},
		{`{"key":"plainkey-42"}`, `{"key":"***"}`},
		{"plainkey-42", "***"},
		{"xxplainkey-42plainkey-42 x", "xx****** x"}, // glued to other text too
		{"my-secret-token-2 and secret-token.", "my-***-2 and ***."},
		// Shorter than MinSecretLen: never scrubbed, it would mangle text.
		{"ollama runs ollama", "ollama runs ollama"},
	} {
		if got := RedactExact(tc.in, keys); got != tc.want {
			t.Errorf("RedactExact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRedactExactEscapedForms is the regression test for a learnt key that a
// client wrote JSON-escaped ("\u0041KIA...") or percent-encoded surviving
// the scrub (trace analyze then printed it decoded).
func TestRedactExactEscapedForms(t *testing.T) {
	t.Parallel()
	keys := []string{"AKIAplain/key+42", "tok\"en-é-1234"}
	for _, tc := range []struct{ in, want string }{
		{`"\u0041KIAplain/key+42"`, `"***"`},
		{`"\u0041\u004b\u0049\u0041\u0070\u006c\u0061\u0069\u006e\u002f\u006b\u0065\u0079\u002b\u0034\u0032"`, `"***"`},
		{`"\u0041\u004B\u0049\u0041plain\/key\u002B42"`, `"***"`},
		{"?key=AKIAplain%2Fkey%2B42&x=1", "?key=***&x=1"},
		{"?key=%41%4b%49%41%70%6C%61%69%6E%2f%6b%65%79%2b%34%32", "?key=***"},
		{"mixed \\u0041KIAplain%2Fkey+42.", "mixed ***."},
		{`"tok\"en-\u00e9-1234"`, `"***"`},
		{"tok%22en-%C3%A9-1234", "***"},
		// Not the key: one character differs.
		{`"\u0041KIAplain/key+43"`, `"\u0041KIAplain/key+43"`},
		{"AKIAplain%2Fkey%2B4", "AKIAplain%2Fkey%2B4"},
	} {
		if got := RedactExact(tc.in, keys); got != tc.want {
			t.Errorf("RedactExact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMatcherSpans checks that Spans finds what Redact replaces, so that a
// stream cut outside every span is redacted as the whole would be.
func TestMatcherSpans(t *testing.T) {
	t.Parallel()
	m := NewMatcher([]string{"plainkey-42"})
	for _, tc := range []struct {
		in   string
		want [][2]int
	}{
		{"a plainkey-42 b", [][2]int{{2, 13}}},
		{"x-api-key: v123", [][2]int{{0, 15}}},
		{`a \u0070lainkey-42`, [][2]int{{2, 18}}},
		{"nothing", nil},
	} {
		got := m.Spans(tc.in)
		if len(got) != len(tc.want) {
			t.Errorf("Spans(%q) = %v, want %v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("Spans(%q) = %v, want %v", tc.in, got, tc.want)
			}
		}
	}
	if got := NewMatcher([]string{"short", strings.Repeat("k", MaxSecretLen+1)}).Redact("short"); got != "short" {
		t.Errorf("keys out of bounds scrubbed: %q", got)
	}
}

// FuzzRedactMarkers checks that skipping a pattern on text without its
// marker changes nothing: Redact equals applying every pattern.
func FuzzRedactMarkers(f *testing.F) {
	for _, s := range []string{"x-API-KEY: v", "Authorization: Bearer x", "sk-abcd", "api_\u212aey=v", "bearer\tx sk-12345",
		"?\u212aey=v", "&TOKEN=x", "AIzaSyA1234567890abcdefghijklmnopqrstuv"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := s
		for _, p := range secretREs {
			want = p.re.ReplaceAllString(want, p.repl)
		}
		if got := Redact(s); got != want {
			t.Errorf("Redact(%q) = %q, every pattern gives %q", s, got, want)
		}
	})
}
