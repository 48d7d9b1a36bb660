package jsonval

import (
	"encoding/json"
	"testing"
)

// TestUnescapeJSONLenient is a regression test: a string holding a raw
// control character or invalid UTF-8 (which encoding/json refuses) was kept
// with its escapes undecoded, so a key written "\u0073k-ant-..." beside a
// raw control character reached the redactor as "\u0073k-..." and was
// printed.
func TestUnescapeJSONLenient(t *testing.T) {
	t.Parallel()
	tests := []struct{ raw, want string }{
		{`plain`, "plain"},
		{"\x01\\u0073k-ant-api03-X", "\x01sk-ant-api03-X"},
		{"\xff\\u0041KIA", "\uFFFDAKIA"},     // invalid UTF-8 as U+FFFD, byte by byte
		{"\xff\xfe\x01", "\uFFFD\uFFFD\x01"}, // without an escape too
		{`\"\\\/\b\f\n\r\t`, "\"\\/\b\f\n\r\t"},
		{`\ud83d\ude00`, "\U0001F600"},
		{`\ud83dx`, "\uFFFDx"},           // a lone high surrogate
		{`\ude00`, "\uFFFD"},             // a lone low surrogate
		{`\ud83d\u0041`, "\uFFFDA"},      // a high surrogate before a non-surrogate
		{`\x\u12`, `\x\u12`},             // escapes JSON does not know, kept as written
		{`\u00e9\u00E9`, "éé"},           // either case of hex
		{`a\u0000b`, "a\x00b"},           // NUL decoded
		{`\u0073k-\u0061nt`, "sk-ant"},   // any subset escaped
		{`\`, `\`},                       // a lone backslash at the end
		{`\\u0041`, `\u0041`},            // an escaped backslash, then text
		{`\u004`, `\u004`},               // too few hex digits
		{`\uD800\uDC00`, "\U00010000"},   // upper-case surrogates
		{`\uDBFF\uDFFF`, "\U0010FFFF"},   // the last code point
		{`\u0000\u001f`, "\x00\x1f"},     // control characters
		{`\u2028\u202e`, "\u2028\u202e"}, // line separator, bidi override
	}
	for _, tt := range tests {
		if got := Unescape([]byte(tt.raw)); got != tt.want {
			t.Errorf("Unescape(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

// FuzzUnescapeJSON: on any string encoding/json accepts, the lenient
// decoder agrees with it.
func FuzzUnescapeJSON(f *testing.F) {
	for _, s := range []string{`a`, `\u0041`, `\ud83d\ude00`, `\ud83d`, `\n\t`, `\\\"`, "é", `\uDFFF\uD800`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var want string
		if json.Unmarshal([]byte(`"`+raw+`"`), &want) != nil {
			return
		}
		if got := Unescape([]byte(raw)); got != want {
			t.Errorf("Unescape(%q) = %q, encoding/json says %q", raw, got, want)
		}
	})
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("esc\x1b\xff\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q gave invalid JSON %s: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		var wantBack string
		json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Fatalf("%q: got %q, want %q", s, back, wantBack)
		}
	})
}
