package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// repeatReader yields pat over and over, n bytes in all, without holding
// them: the long lines of these tests are generated, never stored.
type repeatReader struct {
	pat []byte
	n   int64
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.n > 0 {
		c := copy(p[n:min(len(p), n+int(min(r.n, int64(len(r.pat)-r.off))))], r.pat[r.off:])
		n += c
		r.n -= int64(c)
		r.off = (r.off + c) % len(r.pat)
	}
	return n, nil
}

// lineGen is a trace given as pieces: text, or a pattern repeated to n
// bytes (rounded down to whole patterns, so that escapes stay whole).
type lineGen []any

type rep struct {
	pat string
	n   int64
}

func (g lineGen) reader() io.Reader {
	var rs []io.Reader
	for _, p := range g {
		switch p := p.(type) {
		case string:
			rs = append(rs, strings.NewReader(p))
		case rep:
			rs = append(rs, &repeatReader{pat: []byte(p.pat), n: p.n / int64(len(p.pat)) * int64(len(p.pat))})
		}
	}
	return io.MultiReader(rs...)
}

// text is the decoded contents of a rep (for the label a test expects).
func (r rep) text() string {
	return unescapeJSON([]byte(strings.Repeat(r.pat, int(r.n/int64(len(r.pat))))))
}

// traceAround is a small trace of every kind of event the analysis counts,
// with one RetryAttempt line given whole by the caller.
func traceAround(line ...any) lineGen {
	g := lineGen{
		`{"ts":"2026-11-21T10:00:00.000Z","type":"RunStarted","runId":"r1","payload":{}}` + "\n",
		`{"ts":"2026-11-21T10:00:01.000Z","type":"RetryAttempt","runId":"r1","payload":{"provider":"anthropic","model":"claude-haiku-4-5","attempt":1,"failureType":"overloaded","status":529,"errorMessage":"Overloaded","willRetry":true,"delayMs":2000}}` + "\n",
	}
	g = append(g, line...)
	return append(g,
		`{"ts":"2026-11-21T10:00:05.000Z","type":"RunEscalated","runId":"r1","payload":{"from":"claude-haiku-4-5","to":"claude-sonnet-4-5","reason":"auto_after_retries"}}`+"\n",
		`{"ts":"2026-11-21T10:00:06.000Z","type":"ProviderRequestFinished","runId":"r1","payload":{"provider":"anthropic","model":"claude-haiku-4-5","durationMs":6100,"success":true,"retries":2}}`+"\n",
		`{"ts":"2026-11-21T10:00:07.000Z","type":"RepairAttempted","runId":"r1","payload":{"iteration":2}}`+"\n",
		`{"ts":"2026-11-21T10:00:08.000Z","type":"SomethingNew","runId":"r1","payload":{"x":1}}`+"\n",
	)
}

// attempt is the second RetryAttempt of traceAround, its message given.
func attempt(msg ...any) lineGen {
	g := lineGen{`{"ts":"2026-11-21T10:00:03.000Z","type":"RetryAttempt","runId":"r1","payload":{"provider":"anthropic","model":"claude-haiku-4-5","attempt":2,"failureType":"rate_limit","status":429,"errorMessage":"`}
	g = append(g, msg...)
	return append(g, `","willRetry":true,"delayMs":4000,"delaySource":"retry-after"}}`+"\n")
}

func analyzeGen(t *testing.T, g lineGen, opts Options) (*Analysis, []string) {
	t.Helper()
	var bad []string
	opts.Stdin = g.reader()
	opts.Malformed = func(le *LineError) { bad = append(bad, le.Error()) }
	an, err := Analyze(context.Background(), []string{StdinName}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return an, bad
}

// withoutMessageText blanks what differs with the text of a message.
func withoutMessageText(an *Analysis) string {
	for i := range an.ErrorMessages.Top {
		an.ErrorMessages.Top[i].Message = ""
	}
	for i := range an.ErrorMessages.ByModel {
		for j := range an.ErrorMessages.ByModel[i].Top {
			an.ErrorMessages.ByModel[i].Top[j].Message = ""
		}
	}
	b, _ := json.MarshalIndent(an, "", " ")
	return string(b)
}

// TestLongLineAnalysis is issue 18's regression test: a valid line longer
// than MaxLineBytes (a 2 MiB or 64 MiB errorMessage, a long value in any
// field) is an event, and the analysis is that of the same trace with
// short values (a long label as its label, see label).
func TestLongLineAnalysis(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	// Escapes, a surrogate pair, a lone surrogate and invalid UTF-8, over
	// every boundary of the 256 KiB windows and 64 KiB decoding pieces.
	model := rep{"claude-\\u00e9\\ud83d\\ude00\\ud800\xff\xe2\x82\U0001F600-", 2 * mib}
	prov := rep{"é\U0001F600", 2 * mib} // runes split by the pieces
	short := attempt("rate limited")
	tests := []struct {
		name       string
		long, want lineGen
		by         []string
		skipShort  bool
	}{
		{"2 MiB errorMessage", traceAround(attempt(rep{"x", 2 * mib})...), traceAround(short...), nil, false},
		{"64 MiB errorMessage", traceAround(attempt(rep{"rate limited ", 64 * mib})...), traceAround(short...), nil, true},
		{"escapes straddling every buffer boundary", traceAround(attempt(rep{`\u00e9\ud83d\ude00\"\\\n\t\u0041é\ud800x`, 3 * mib})...),
			traceAround(short...), nil, false},
		{"long message at the very end of a file without a newline",
			lineGen(traceAround())[:2].concat(attempt(rep{"y", 2 * mib}).trimNewline()),
			lineGen(traceAround())[:2].concat(short.trimNewline()), nil, false},
		{"CRLF", traceAround(attempt(rep{"z", 2 * mib}).crlf()...), traceAround(short...), nil, false},
		{"long model and provider, grouped by them", traceAround(lineGen{`{"type":"RetryAttempt","payload":{"model":"`, model, `","failureType":"timeout","errorMessage":"m","willRetry":false}}` + "\n",
			`{"type":"ProviderRequestFinished","payload":{"provider":"`, prov, `","model":"`, model, `","success":false,"retries":1,"durationMs":5}}` + "\n"}...),
			traceAround(`{"type":"RetryAttempt","payload":{"model":`+string(appendQuoted(nil, label(model.text())))+`,"failureType":"timeout","errorMessage":"m","willRetry":false}}`+"\n",
				`{"type":"ProviderRequestFinished","payload":{"provider":`+string(appendQuoted(nil, label(prov.text())))+`,"model":`+string(appendQuoted(nil, label(model.text())))+`,"success":false,"retries":1,"durationMs":5}}`+"\n"),
			[]string{"provider", "model"}, false},
		{"long runId and unknown type", traceAround(`{"type":"Custom`, rep{"T", 2 * mib}, `","runId":"`, rep{"r", 2 * mib}, `"}`+"\n"),
			traceAround(`{"type":` + string(appendQuoted(nil, label("Custom"+strings.Repeat("T", 2*mib)))) + `,"runId":` + string(appendQuoted(nil, label(strings.Repeat("r", 2*mib)))) + `}` + "\n"),
			[]string{"run"}, false},
		{"long unknown string before the known fields", traceAround(`{"type":"RetryAttempt","payload":{"debug":"`, rep{"d", 2 * mib}, `","failureType":"timeout","status":408,"errorMessage":"t","willRetry":true,"delayMs":700}}`+"\n"),
			traceAround(`{"type":"RetryAttempt","payload":{"failureType":"timeout","status":408,"errorMessage":"t","willRetry":true,"delayMs":700}}` + "\n"), nil, false},
		{"long array of objects before the known fields (past the budget)",
			traceAround(`{"type":"RetryAttempt","payload":{"history":[`, rep{`{"a":[1,2,{"b":"c"}],"d":null},`, 3 * mib}, `{}],"failureType":"timeout","status":408,"errorMessage":"t","willRetry":true,"delayMs":700}}`+"\n"),
			traceAround(`{"type":"RetryAttempt","payload":{"failureType":"timeout","status":408,"errorMessage":"t","willRetry":true,"delayMs":700}}` + "\n"), nil, false},
		{"many unknown members, then known ones twice (the last counts)",
			traceAround(`{"type":"RetryAttempt","payload":{"status":500,`, rep{`"k":{"x":"yyyyyyyy"},`, 4 * mib}, `"failureType":"server_error","status":503,"errorMessage":"t","willRetry":true,"delayMs":700,"delayMs":800}}`+"\n"),
			traceAround(`{"type":"RetryAttempt","payload":{"failureType":"server_error","status":503,"errorMessage":"t","willRetry":true,"delayMs":800}}` + "\n"), nil, false},
		{"long unknown top-level member and nested object", traceAround(`{"extra":{"a":{"b":[`, rep{`"v",`, 2 * mib}, `"w"]}},"type":"RetryAttempt","payload":{"failureType":"timeout","errorMessage":"t","willRetry":false,"n":{"deep":"`, rep{"e", 2 * mib}, `"}}}`+"\n"),
			traceAround(`{"type":"RetryAttempt","payload":{"failureType":"timeout","errorMessage":"t","willRetry":false}}` + "\n"), nil, false},
		{"payload before type", traceAround(`{"payload":{"failureType":"timeout","errorMessage":"`, rep{"p", 2 * mib}, `","status":504},"type":"RetryAttempt"}`+"\n"),
			traceAround(`{"payload":{"failureType":"timeout","errorMessage":"p","status":504},"type":"RetryAttempt"}` + "\n"), nil, false},
		{"long number", traceAround(`{"type":"RetryAttempt","payload":{"failureType":"timeout","errorMessage":"t","willRetry":true,"delayMs":0000`, rep{"0", 2 * mib}, `1500.4e0,"pad":"`, rep{"q", mib}, `"}}`+"\n"),
			traceAround(`{"type":"RetryAttempt","payload":{"failureType":"timeout","errorMessage":"t","willRetry":true,"delayMs":1500}}` + "\n"), nil, false},
		{"a line of 2 MiB of white space is blank", traceAround(rep{" \t", 2 * mib}, "\n"), traceAround(), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skipShort && testing.Short() {
				t.Skip("64 MiB: not with -short")
			}
			t.Parallel()
			opts := Options{By: tt.by}
			got, bad := analyzeGen(t, tt.long, opts)
			want, _ := analyzeGen(t, tt.want, opts)
			if len(bad) > 0 {
				t.Errorf("malformed: %q, want none", bad)
			}
			if diff := cmp.Diff(withoutMessageText(want), withoutMessageText(got)); diff != "" {
				t.Errorf("analysis mismatch (-short +long):\n%s", diff)
			}
		})
	}
}

func (g lineGen) concat(h lineGen) lineGen { return append(append(lineGen{}, g...), h...) }

// trimNewline drops the '\n' that ends g.
func (g lineGen) trimNewline() lineGen {
	g = append(lineGen{}, g...)
	g[len(g)-1] = strings.TrimSuffix(g[len(g)-1].(string), "\n")
	return g
}

func (g lineGen) crlf() lineGen {
	g = append(lineGen{}, g...)
	g[len(g)-1] = strings.TrimSuffix(g[len(g)-1].(string), "\n") + "\r\n"
	return g
}

// TestLongLineMalformed: a long line that is not a JSON object with a
// string type is malformed, whatever its length, and reported as
// file:line; the lines after it are read.
func TestLongLineMalformed(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	big := rep{"x", 2 * mib}
	tests := []struct {
		name   string
		line   lineGen
		reason string
	}{
		{"unterminated string at the very end", lineGen{`{"type":"A","payload":{"m":"`, big, "\n"}, "invalid JSON"},
		{"unterminated object", lineGen{`{"type":"A","payload":{"m":"`, big, `"}` + "\n"}, "invalid JSON"},
		{"a backslash before the newline", lineGen{`{"type":"A","payload":{"m":"`, big, `\` + "\n"}, "invalid JSON"},
		{"trailing data", lineGen{`{"type":"A","payload":{"m":"`, big, `"}} x` + "\n"}, "trailing data after the JSON object"},
		{"trailing data, long", lineGen{`{"type":"A"}`, big, "\n"}, "trailing data after the JSON object"},
		{"type not a string", lineGen{`{"payload":{"m":"`, big, `"},"type":["A"]}` + "\n"}, `"type" is not a string`},
		{"no type", lineGen{`{"payload":{"m":"`, big, `"}}` + "\n"}, `missing "type"`},
		{"empty type", lineGen{`{"type":"","payload":{"m":"`, big, `"}}` + "\n"}, `empty "type"`},
		{"not an object", lineGen{`["`, big, `"]` + "\n"}, "not a JSON object"},
		{"too deep", lineGen{`{"type":"A","payload":`, rep{"[", 2 * mib}, "\n"}, tooDeep},
		{"too deep, valid JSON", lineGen{`{"type":"A","payload":`, rep{"[", mib}, rep{"]", mib}, "}\n"}, tooDeep},
		{"invalid before too deep", lineGen{`{"type":"A","payload":[tru,`, rep{"[", 2 * mib}, "\n"}, "invalid JSON"},
		{"bad literal", lineGen{`{"type":"A","payload":{"m":"`, big, `","t":tru}}` + "\n"}, "invalid JSON"},
		{"bad number", lineGen{`{"type":"A","payload":{"m":"`, big, `","n":-}}` + "\n"}, "invalid JSON"},
		{"missing colon", lineGen{`{"type":"A","payload":{"m" "`, big, `"}}` + "\n"}, "invalid JSON"},
		{"zeros", lineGen{rep{"\x00", 2 * mib}, "\n"}, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, eof := range []bool{false, true} {
				g := append(lineGen{`{"type":"Before"}` + "\n"}, tt.line...)
				want := []readResult{{Line: 1, Type: "Before"}}
				if eof { // a huge last line without a newline
					g = g.trimNewline()
					want = append(want, readResult{Line: 2, Err: "t.jsonl:2: truncated last line (no newline at end of file): " + tt.reason})
				} else {
					g = append(g, `{"type":"After"}`+"\n")
					want = append(want, readResult{Line: 2, Err: "t.jsonl:2: " + tt.reason}, readResult{Line: 3, Type: "After"})
				}
				if diff := cmp.Diff(want, readAll(t, g.reader())); diff != "" {
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
	io.Copy(zw, lineGen{`{"type":"RetryAttempt","runId":"g","payload":{"errorMessage":"`, rep{`é\u00e9`, 3 << 20}, `","status":429}}` + "\n{\"type\":\"After\"}\n"}.reader())
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
	g := lineGen{`{"type":"RetryAttempt","payload":{"errorMessage":"`, rep{`retry \u00e9 `, size * 2 / 3},
		`","tags":[`, rep{`"aaaaaaaaaa",`, size / 3}, `"b"],"status":429}}` + "\n",
		`{"type":"X","payload":{"m":"`, rep{"n", size}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rd, err := NewReader(g.reader(), "big")
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
// contents in pieces of any size, is label(jsonString) of the whole.
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
		want := label(jsonString(append(append([]byte{'"'}, raw...), '"')))
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
	return oneLine{typ: ev.Type, run: rawLabel(ev.RunID), ts: rawLabel(ev.TS), hasRun: ev.RunID != nil, hasTS: ev.TS != nil,
		payload: canonical(ev.Payload)}
}

// canonical writes a raw JSON value (as the Reader accepts it) without
// white space, with its strings decoded and its numbers as jsonInt reads
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
			fmt.Fprintf(&b, "%q", jsonString(v))
		case c == '{':
			b.WriteByte('{')
			scanObject(v, 0, 0, func(k, val []byte) bool {
				fmt.Fprintf(&b, "%q:", k)
				walk(val)
				b.WriteByte(',')
				return true
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
			n, ok := jsonInt(v)
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
		g    lineGen
	}{
		{"message", lineGen{`{"type":"RetryAttempt","payload":{"errorMessage":"`, rep{"rate limited ", size}, `"}}` + "\n"}},
		{"escapes", lineGen{`{"type":"RetryAttempt","payload":{"errorMessage":"`, rep{`\u00e9\ud83d\ude00\"`, size}, `"}}` + "\n"}},
		{"array", lineGen{`{"type":"RetryAttempt","payload":{"tags":[`, rep{`"aaaaaaaaaa",`, size}, `"b"]}}` + "\n"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				rd, _ := NewReader(bc.g.reader(), "big")
				if _, err := rd.Next(); err != nil {
					b.Fatal(err)
				}
				rd.Close()
			}
		})
	}
}
