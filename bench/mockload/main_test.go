package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func readGolden(t *testing.T) []byte {
	t.Helper()
	g, err := os.ReadFile("../../chaos/mock/testdata/anthropic_ok.golden")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestMockLoadByteExact is the CI-sized load run: 50 concurrent streams for
// 2 s through the embedded Toxiproxy, every one byte-exact, each attempt
// answered once, and every attempt the mock recorded a complete 200. It
// asserts nothing about time (the full-size run is
// `go run ./bench/mockload`, see docs/performance.md).
func TestMockLoadByteExact(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(map[bool]string{false: "proxy", true: "direct"}[direct], func(t *testing.T) {
			res, err := run(t.Context(), config{Streams: 50, Duration: 2 * time.Second, Golden: readGolden(t), Direct: direct})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed > 0 {
				t.Fatalf("%d stream(s) failed or differed; first: %s", res.Failed, res.FirstFailed)
			}
			if res.Streams == 0 || int64(res.Attempts) != res.Streams {
				t.Errorf("%d byte-exact streams, %d attempts at the mock; want as many, and some", res.Streams, res.Attempts)
			}
			t.Logf("%d streams, %.0f/s, ttfb p99 %v", res.Streams, res.StreamsPerSec(), res.Percentile(0.99))
		})
	}
}

// TestCheckerCatches: the byte-exact check accepts the golden stream with
// another request id and reset time, and nothing else.
func TestCheckerCatches(t *testing.T) {
	g := readGolden(t)
	ok := func(n string) []byte {
		b := bytes.ReplaceAll(g, []byte(goldenID), []byte("feedfacecafe"+n))
		return bytes.ReplaceAll(b, []byte(goldenReset), []byte("2027-01-02T03:04:05Z"))
	}
	flip := func(b []byte, i int) []byte { b = bytes.Clone(b); b[i] ^= 1; return b }
	for _, tc := range []struct {
		name string
		got  [][]byte // checked in order on one checker; the last must fail
		want string   // in the last error; "" when every one passes
	}{
		{"golden with its own id and reset", [][]byte{ok("000001"), ok("000002")}, ""},
		{"a byte of the text", [][]byte{flip(ok("000001"), len(g)-200)}, "differs"},
		{"a chunk size", [][]byte{flip(ok("000001"), bytes.Index(g, []byte("\r\n\r\n"))+4)}, "differs"},
		{"one byte short", [][]byte{ok("000001")[:len(g)-1]}, "bytes, want"},
		{"message id not the request id", [][]byte{bytes.Replace(ok("000001"), []byte("msg_mockfeedfacecafe000001"), []byte("msg_mockfeedfacecafe000009"), 1)}, "want"},
		{"reset times differ", [][]byte{bytes.Replace(ok("000001"), []byte("2027-01-02T03:04:05Z"), []byte("2027-01-02T03:04:06Z"), 2)}, "want"},
		{"an attempt answered twice", [][]byte{ok("000007"), ok("000007")}, "answered twice"},
		{"another mock's id", [][]byte{ok("000001"), bytes.ReplaceAll(ok("000002"), []byte("feedfacecafe"), []byte("0000facecafe"))}, "not the mock's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newChecker(g)
			if err != nil {
				t.Fatal(err)
			}
			var last error
			for i, b := range tc.got {
				last = c.check(b)
				if last != nil && i < len(tc.got)-1 {
					t.Fatalf("stream %d: %v", i, last)
				}
			}
			switch {
			case tc.want == "" && last != nil:
				t.Errorf("check: %v, want none", last)
			case tc.want != "" && (last == nil || !strings.Contains(last.Error(), tc.want)):
				t.Errorf("check: %v, want an error saying %q", last, tc.want)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-streams", "0"}, {"-duration", "0s"}, {"extra"}, {"-golden", "no/such/file"}} {
		var stderr strings.Builder
		if code := mainErr(t.Context(), args, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "hint:") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a hint", args, code, stderr.String())
		}
	}
}
