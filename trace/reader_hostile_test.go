package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gzipped(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, s)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReaderGzipMultiMember: a file of several gzip members (cat a.gz b.gz,
// as gzip -d reads it) is read whole, member after member, and empty
// members (thousands: bufio gives up after 100 empty reads) are no error.
func TestReaderGzipMultiMember(t *testing.T) {
	t.Parallel()
	var in []byte
	in = append(in, gzipped(t, "{\"type\":\"A\"}\n")...)
	for range 5000 {
		in = append(in, gzipped(t, "")...)
	}
	in = append(in, gzipped(t, "{\"type\":\"B\"}\n{\"type\":")...)
	in = append(in, gzipped(t, "\"C\"}\n")...) // a line across members
	got := readAll(t, bytes.NewReader(in))
	want := []readResult{{Line: 1, Type: "A"}, {Line: 2, Type: "B"}, {Line: 3, Type: "C"}}
	if len(got) != len(want) {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestReaderGzipTrailingDataClearError is a regression test: data after
// the last gzip member was reported as "the gzip stream is cut short" (a
// few bytes) or "invalid header" (more); it is now named for what it is,
// and a second member cut short is still "cut short".
func TestReaderGzipTrailingDataClearError(t *testing.T) {
	t.Parallel()
	member := gzipped(t, "{\"type\":\"A\"}\n")
	tests := []struct {
		name   string
		tail   []byte
		reason string
	}{
		{"short garbage", []byte("garbage\n"), "data that is not gzip after the end of the gzip stream (after 1 complete member(s))"},
		{"long garbage", bytes.Repeat([]byte("x"), 5000), "data that is not gzip after the end"},
		{"zero padding", make([]byte, 4096), "data that is not gzip after the end"},
		{"one stray byte", []byte{0x1f}, "data that is not gzip after the end"},
		{"second member header cut short", []byte{0x1f, 0x8b, 8}, "cut short"},
		{"second member cut short", gzipped(t, strings.Repeat("{\"type\":\"B\"}\n", 100))[:30], "cut short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl.gz")
			if err := os.WriteFile(path, append(append([]byte(nil), member...), tt.tail...), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Analyze(context.Background(), []string{path}, Options{})
			var pe *PathError
			if !errors.As(err, &pe) || !strings.Contains(pe.Reason, tt.reason) || pe.Hint() == "" {
				t.Fatalf("Analyze = %v, want a PathError with a hint, saying %q", err, tt.reason)
			}
		})
	}
}

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
		if got := unescapeJSON([]byte(tt.raw)); got != tt.want {
			t.Errorf("unescapeJSON(%q) = %q, want %q", tt.raw, got, tt.want)
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
		if got := unescapeJSON([]byte(raw)); got != want {
			t.Errorf("unescapeJSON(%q) = %q, encoding/json says %q", raw, got, want)
		}
	})
}

// TestReaderEmptyLinesCounted is a regression test of speed, checked by
// its result: runs of empty lines are skipped in one go (a gigabyte of
// newlines took 15 s), still counted for the line numbers, across buffer
// boundaries.
func TestReaderEmptyLinesCounted(t *testing.T) {
	t.Parallel()
	const n = 600_000 // more than two 256 KiB buffers
	in := strings.Repeat("\n", n) + `{"type":"A"}` + "\n\n\r\n" + `{"type":"B"}` + "\n" + strings.Repeat("\n", n) + `{"type":`
	got := readAll(t, strings.NewReader(in))
	want := []readResult{{Line: n + 1, Type: "A"}, {Line: n + 4, Type: "B"},
		{Line: 2*n + 5, Err: fmt.Sprintf("t.jsonl:%d: truncated last line (no newline at end of file): invalid JSON", 2*n+5)}}
	if len(got) != len(want) {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
