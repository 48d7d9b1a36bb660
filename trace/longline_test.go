package trace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/trace/internal/jsonval"
	"github.com/retrylab/retrylab/trace/internal/tracetest"
)

// TestLongLineMalformed: a long line that is not a JSON object with a
// string type is malformed, whatever its length, and reported as
// file:line; the lines after it are read.
func TestLongLineMalformed(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	big := tracetest.Repeat("x", 2*mib)
	tests := []struct {
		name   string
		line   tracetest.Lines
		reason string
	}{
		{"unterminated string at the very end", tracetest.Lines{`{"type":"A","payload":{"m":"`, big, "\n"}, "invalid JSON"},
		{"unterminated object", tracetest.Lines{`{"type":"A","payload":{"m":"`, big, `"}` + "\n"}, "invalid JSON"},
		{"a backslash before the newline", tracetest.Lines{`{"type":"A","payload":{"m":"`, big, `\` + "\n"}, "invalid JSON"},
		{"trailing data", tracetest.Lines{`{"type":"A","payload":{"m":"`, big, `"}} x` + "\n"}, "trailing data after the JSON object"},
		{"trailing data, long", tracetest.Lines{`{"type":"A"}`, big, "\n"}, "trailing data after the JSON object"},
		{"type not a string", tracetest.Lines{`{"payload":{"m":"`, big, `"},"type":["A"]}` + "\n"}, `"type" is not a string`},
		{"no type", tracetest.Lines{`{"payload":{"m":"`, big, `"}}` + "\n"}, `missing "type"`},
		{"empty type", tracetest.Lines{`{"type":"","payload":{"m":"`, big, `"}}` + "\n"}, `empty "type"`},
		{"not an object", tracetest.Lines{`["`, big, `"]` + "\n"}, "not a JSON object"},
		{"too deep", tracetest.Lines{`{"type":"A","payload":`, tracetest.Repeat("[", 2*mib), "\n"}, tooDeep},
		{"too deep, valid JSON", tracetest.Lines{`{"type":"A","payload":`, tracetest.Repeat("[", mib), tracetest.Repeat("]", mib), "}\n"}, tooDeep},
		{"invalid before too deep", tracetest.Lines{`{"type":"A","payload":[tru,`, tracetest.Repeat("[", 2*mib), "\n"}, "invalid JSON"},
		{"bad literal", tracetest.Lines{`{"type":"A","payload":{"m":"`, big, `","t":tru}}` + "\n"}, "invalid JSON"},
		{"bad number", tracetest.Lines{`{"type":"A","payload":{"m":"`, big, `","n":-}}` + "\n"}, "invalid JSON"},
		{"missing colon", tracetest.Lines{`{"type":"A","payload":{"m" "`, big, `"}}` + "\n"}, "invalid JSON"},
		{"zeros", tracetest.Lines{tracetest.Repeat("\x00", 2*mib), "\n"}, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, eof := range []bool{false, true} {
				g := append(tracetest.Lines{`{"type":"Before"}` + "\n"}, tt.line...)
				want := []readResult{{Line: 1, Type: "Before"}}
				if eof { // a huge last line without a newline
					g = g.TrimNewline()
					want = append(want, readResult{Line: 2, Err: "t.jsonl:2: truncated last line (no newline at end of file): " + tt.reason})
				} else {
					g = append(g, `{"type":"After"}`+"\n")
					want = append(want, readResult{Line: 2, Err: "t.jsonl:2: " + tt.reason}, readResult{Line: 3, Type: "After"})
				}
				if diff := cmp.Diff(want, readAll(t, g.Reader())); diff != "" {
					t.Errorf("eof %v: Reader mismatch (-want +got):\n%s", eof, diff)
				}
			}
		})
	}
}

// TestLongLineGzip: a long line in a gzip file is read as in a plain one.
func TestLongLineGzip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.Copy(zw, tracetest.Lines{`{"type":"RetryAttempt","runId":"g","payload":{"errorMessage":"`, tracetest.Repeat(`é\u00e9`, 3<<20), `","status":429}}` + "\n{\"type\":\"After\"}\n"}.Reader())
	zw.Close()
	got := readAll(t, &buf)
	want := []readResult{{Line: 1, Type: "RetryAttempt", RunID: "g"}, {Line: 2, Type: "After"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Reader mismatch (-want +got):\n%s", diff)
	}
}

// TestLongLineMemoryBounded reads a 24 MiB line (a 16 MiB message, then
// an array of 600,000 strings) and a 24 MiB line without a newline, and
// checks that the bytes allocated meanwhile (which bound the peak heap)
// stay below half a line: the lines are streamed, not kept. (Serial: it
// reads the process's allocation counter; 24 MiB, not 64, so that it
// takes seconds under -race.)
func TestLongLineMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("24 MiB lines: not with -short")
	}
	const size = 24 << 20
	g := tracetest.Lines{`{"type":"RetryAttempt","payload":{"errorMessage":"`, tracetest.Repeat(`retry \u00e9 `, size*2/3),
		`","tags":[`, tracetest.Repeat(`"aaaaaaaaaa",`, size/3), `"b"],"status":429}}` + "\n",
		`{"type":"X","payload":{"m":"`, tracetest.Repeat("n", size)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rd, err := NewReader(g.Reader(), "big")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := rd.Next()
	if err != nil || ev.Type != TypeRetryAttempt {
		t.Fatalf("first Next = %v, %v", ev, err)
	}
	payload := append([]byte(nil), ev.Payload...)
	var le *LineError
	if _, err := rd.Next(); !errors.As(err, &le) || !strings.Contains(le.Reason, "truncated last line") {
		t.Errorf("second Next = %v, want a truncated last line", err)
	}
	rd.Close()
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > size/2 {
		t.Errorf("reading two lines of %d MiB allocated %d MiB, want at most %d MiB", size>>20, got>>20, size>>21)
	}
	t.Logf("reading two lines of %d MiB allocated %.1f MiB; the payload's form is %d bytes", size>>20, float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), len(payload))
	var p struct {
		ErrorMessage string   `json:"errorMessage"`
		Status       int      `json:"status"`
		Tags         []string `json:"tags"`
	}
	if err := json.Unmarshal(payload, &p); err != nil || p.Status != 429 || len(p.Tags) == 0 || !strings.HasPrefix(p.ErrorMessage, "retry é retry") {
		t.Errorf("payload %.200s: status %d, %d tags, %v", payload, p.Status, len(p.Tags), err)
	}
}

// TestLabelHashChunks: a long string's label, computed from its raw
// contents in pieces of any size, is Label(jsonval.String) of the whole.
func TestLabelHashChunks(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", "é", `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ude00`, `\"`, `\\`, `\n`, `\x`, `\u12`,
		"\xff", "\xe2\x82", "\xac", "\U0001F600", `\uD800\u0041`, " ", "0123456789"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 2000 {
		var raw []byte
		for range rng.IntN(400) {
			raw = append(raw, pieces[rng.IntN(len(pieces))]...)
		}
		if len(raw) > 0 && raw[len(raw)-1] == '\\' {
			continue
		}
		var h labelHash
		h.chunk = 1 + rng.IntN(40)
		h.reset()
		for rest := raw; len(rest) > 0; {
			k := min(len(rest), rng.IntN(30))
			h.write(rest[:k])
			rest = rest[k:]
		}
		want := Label(jsonval.String(append(append([]byte{'"'}, raw...), '"')))
		if got := h.label(); got != want {
			t.Fatalf("case %d: label of %q in pieces = %q, want %q", n, raw, got, want)
		}
	}
}

// FuzzLongLine checks the streamed reading of long lines against the
// buffered one: a line read as it is, and read as a long line (the limit
// lowered to 1 byte; strings over 4 bytes as their labels, numbers over 3
// bytes as short ones), give the same event or the same reason. With a
// payload budget of 1 byte too, the event's type, runId and ts are the
// same.
func FuzzLongLine(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"type":"RetryAttempt","runId":"r","ts":"t","payload":{"a":[1,2,{"b":null}],"c":"\"x\\","n":-1.5e+3}}`,
		`{"type":"A"}`, `[]`, `{"type":1}`, `{"type":"A",}`, `{"type":"A"`, `{"type":"\ud83d\ude00"}`, `{"type":"A"} {}`,
		`{"payload":{"x":1},"type":"B","payload":[true,false,null]}`, `{"type":"","runId":1,"runId":"s"}`,
		`{"type":"A","payload":{"m":"\u00e9\ud800\"\\`, `{"type":"A","payload":"\`, `{"type":"A","k":` + strings.Repeat("[", 600),
		`{"type":"A","payload":{"n":00012.50e-1,"m":-0.000e99999999999999999,"o":123456789012345678901234567890}}`,
		"{\"type\":\"A\",\"payload\":{\"m\":\"\x00\xff\xe2\x82\"}}", `{"type":"A\u00e9\ud83d\ude00\u12x\q","payload":{"errorMessage":"\ud83d\ud83d\ude00"}}`,
		`{"type":"RetryAttempt","payload":{"tags":["a","b"],"status":429,"x":{"y":[1]},"status":500}}`,
		"  {\"type\" : \"A\" , \"payload\" : { \"a\" : [ 1 , 2 ] } }  \r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.Contains(line, "\n") {
			return
		}
		long := func(r *Reader) { r.maxLine, r.limits = 1, longLimits{keepStr: 4, keepNum: 3} }
		tiny := func(r *Reader) { r.maxLine, r.limits = 1, longLimits{keepStr: 4, keepNum: 3, budget: 1} }
		for _, in := range []string{line + "\n", line} {
			short := readOne(t, in, nil)
			if got := readOne(t, in, long); got != short {
				t.Fatalf("%q read as a long line: %+v, as a short one %+v", in, got, short)
			}
			got := readOne(t, in, tiny)
			got.payload, short.payload = "", ""
			if got != short {
				t.Fatalf("%q read as a long line with a payload budget of 1: %+v, as a short one %+v", in, got, short)
			}
		}
	})
}

// oneLine is what a Reader made of one line, its slices decoded.
type oneLine struct {
	typ, run, ts, payload, err string
	hasRun, hasTS              bool
}

func readOne(t *testing.T, in string, set func(*Reader)) oneLine {
	rd, err := NewReader(strings.NewReader(in), "f")
	if err != nil {
		t.Fatal(err)
	}
	if set != nil {
		set(rd)
	}
	ev, err := rd.Next()
	var le *LineError
	switch {
	case errors.As(err, &le):
		return oneLine{err: le.Reason}
	case err == io.EOF:
		return oneLine{err: "EOF"}
	case err != nil:
		t.Fatal(err)
	}
	return oneLine{typ: ev.Type, run: RawLabel(ev.RunID), ts: RawLabel(ev.TS), hasRun: ev.RunID != nil, hasTS: ev.TS != nil,
		payload: canonical(ev.Payload)}
}

// canonical writes a raw JSON value (as the Reader accepts it) without
// white space, with its strings decoded and its numbers as jsonval.Int reads
// them, so that a value and its bounded form compare equal.
func canonical(raw []byte) string {
	var b strings.Builder
	var walk func(v []byte)
	walk = func(v []byte) {
		v = trimSpace(v)
		if len(v) == 0 {
			return
		}
		switch c := v[0]; {
		case c == '"':
			fmt.Fprintf(&b, "%q", jsonval.String(v))
		case c == '{':
			b.WriteByte('{')
			scanObject(v, 0, 0, func(k, val []byte) {
				fmt.Fprintf(&b, "%q:", k)
				walk(val)
				b.WriteByte(',')
			})
			b.WriteByte('}')
		case c == '[':
			b.WriteByte('[')
			i := skipWS(v, 1)
			for i < len(v) && v[i] != ']' {
				end, ok := scanValue(v, i, 1)
				if !ok {
					break
				}
				walk(v[i:end])
				b.WriteByte(',')
				i = skipWS(v, end)
				if i < len(v) && v[i] == ',' {
					i = skipWS(v, i+1)
				}
			}
			b.WriteByte(']')
		case c == '-' || c >= '0' && c <= '9':
			n, ok := jsonval.Int(v)
			fmt.Fprintf(&b, "%d/%v", n, ok)
		default:
			b.Write(v)
		}
	}
	if raw != nil {
		walk(raw)
	} else {
		b.WriteString("<nil>")
	}
	return b.String()
}

// BenchmarkLongLine reads lines of 64 MiB: a message of plain text, one
// of escapes, and an array of short strings.
func BenchmarkLongLine(b *testing.B) {
	const size = 64 << 20
	for _, bc := range []struct {
		name string
		g    tracetest.Lines
	}{
		{"message", tracetest.Lines{`{"type":"RetryAttempt","payload":{"errorMessage":"`, tracetest.Repeat("rate limited ", size), `"}}` + "\n"}},
		{"escapes", tracetest.Lines{`{"type":"RetryAttempt","payload":{"errorMessage":"`, tracetest.Repeat(`\u00e9\ud83d\ude00\"`, size), `"}}` + "\n"}},
		{"array", tracetest.Lines{`{"type":"RetryAttempt","payload":{"tags":[`, tracetest.Repeat(`"aaaaaaaaaa",`, size), `"b"]}}` + "\n"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				rd, _ := NewReader(bc.g.Reader(), "big")
				if _, err := rd.Next(); err != nil {
					b.Fatal(err)
				}
				rd.Close()
			}
		})
	}
}
