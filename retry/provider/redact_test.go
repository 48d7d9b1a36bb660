package provider

import "testing"

func TestRedact(t *testing.T) {
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
