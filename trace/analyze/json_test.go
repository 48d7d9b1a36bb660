package analyze

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGroupMarshalJSONHostileLabels is a regression test: a provider,
// model, failure type or run id holding a control character or invalid
// UTF-8 was written with Go escapes (\x1b), so --format json failed with
// a bare MarshalJSON error.
func TestGroupMarshalJSONHostileLabels(t *testing.T) {
	t.Parallel()
	labels := []string{
		"plain", "", "esc\x1b[31mred", "nul\x00", "bad\xff\xfeutf8", "quote\"back\\slash",
		"new\nline\r\ttab", "del\x7f", "sep\u2028\u2029", "é日本\U0001F600", "<script>&amp;",
		"\xc3", "trunc\xe2\x82",
	}
	for _, l := range labels {
		g := Group{Keys: map[string]string{"provider": l, "model": l}, Total: 1, by: []string{"provider", "model"}}
		b, err := json.Marshal(g)
		if err != nil {
			t.Fatalf("Marshal(%q): %v", l, err)
		}
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q gave invalid JSON %s: %v", l, b, err)
		}
		want := strings.ToValidUTF8(l, "\uFFFD")
		// encoding/json replaces each invalid byte; ToValidUTF8 runs of them.
		wantJSON, _ := json.Marshal(l)
		var wantBack string
		json.Unmarshal(wantJSON, &wantBack)
		if got := back["provider"]; got != wantBack {
			t.Errorf("%q came back as %q, want %q (as encoding/json writes it; %q)", l, got, wantBack, want)
		}
		if strings.Contains(string(b), `\x`) {
			t.Errorf("%q written with a Go escape: %s", l, b)
		}
	}
}
