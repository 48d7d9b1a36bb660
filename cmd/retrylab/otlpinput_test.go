package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func gz(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.String()
}

// TestSniffGivesEveryByteBack: telling OTLP/JSON from trace v1 reads the
// first bytes of a stream, and the reader it returns gives every byte
// back from the first, whatever the stream held and however it came
// (a pipe hands bytes over a few at a time).
func TestSniffGivesEveryByteBack(t *testing.T) {
	trace := `{"v":1,"type":"RunStarted","payload":{}}` + "\n"
	otlp := `{"resourceSpans":[]}` + "\n"
	tests := []struct {
		name, in string
		want     bool
	}{
		{"trace v1", trace, false},
		{"OTLP", otlp, true},
		{"OTLP logs, pretty", "\n  {\n\t\"resourceLogs\": [\n]}", true},
		{"OTLP metrics after blank lines", "\r\n\r\n" + `{"resourceMetrics":[]}`, true},
		{"a key that begins like one", `{"resourceSpansX":1}`, false},
		{"a prefix cut short", `{"resourceSp`, false},
		{"empty", "", false},
		{"one byte", "{", false},
		{"whitespace past the sniff", strings.Repeat(" ", maxSniff+10) + otlp, false},
		{"gzip trace v1", gz(trace), false},
		{"gzip OTLP", gz(otlp), true},
		{"gzip cut short", gz(otlp)[:12], false},
		{"not JSON", "\x00\x01garbage", false},
	}
	for _, tt := range tests {
		for _, slow := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tt.in)
			if slow {
				r = iotest.OneByteReader(r)
			}
			got, replay, err := sniff(r)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if got != tt.want {
				t.Errorf("%s (one byte a read: %v): OTLP %v, want %v", tt.name, slow, got, tt.want)
			}
			if b, _ := io.ReadAll(replay); string(b) != tt.in {
				t.Errorf("%s (one byte a read: %v): gave back %q, want %q", tt.name, slow, b, tt.in)
			}
		}
	}
}

// FuzzSniff: whatever the input, sniff gives back every byte of it, in
// order, and calls OTLP only what begins as an OTLP/JSON object does.
func FuzzSniff(f *testing.F) {
	f.Add([]byte(`{"resourceSpans":[]}`))
	f.Add([]byte(" {\n \"resourceLogs\""))
	f.Add([]byte(gz(`{"resourceMetrics":[]}`)))
	f.Add([]byte(`{"v":1}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		isOTLP, replay, err := sniff(iotest.HalfReader(bytes.NewReader(in)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(replay)
		if err != nil || !bytes.Equal(b, in) {
			t.Fatalf("gave back %q (%v), want %q", b, err, in)
		}
		if len(in) > 1 && in[0] == 0x1f && in[1] == 0x8b {
			return // gzip: what it holds is checked by the table test
		}
		if isOTLP && !bytes.Contains(in, []byte(`"resource`)) {
			t.Fatalf("called OTLP: %q", in)
		}
	})
}
