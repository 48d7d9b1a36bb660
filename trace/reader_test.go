package trace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type readResult struct {
	Line  int
	Type  string
	RunID string
	Err   string
}

func readAll(t *testing.T, r io.Reader) []readResult {
	t.Helper()
	return readAllWith(t, r, 0)
}

// readAllWith is readAll with the line limit maxLine (0: MaxLineBytes).
func readAllWith(t *testing.T, r io.Reader, maxLine int) []readResult {
	t.Helper()
	rd, err := NewReader(r, "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rd.maxLine = maxLine
	var out []readResult
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		var le *LineError
		if errors.As(err, &le) {
			out = append(out, readResult{Line: le.Line, Err: le.Error()})
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, readResult{Line: ev.Line, Type: ev.Type, RunID: string(ev.RunID)})
	}
}

func TestReader(t *testing.T) {
	t.Parallel()
	long := `{"type":"Big","payload":{"s":"` + strings.Repeat("x", 2<<20) + `"}}`
	head := `{"type":"Big","payload":{"s":"`
	atMax := head + strings.Repeat("x", MaxLineBytes-len(head)-3) + `"}}` // the newline does not count
	tests := []struct {
		name string
		in   string
		want []readResult
	}{
		{"plain", `{"v":1,"type":"RetryAttempt","runId":"r1","payload":{}}` + "\n",
			[]readResult{{Line: 1, Type: "RetryAttempt", RunID: "r1"}}},
		{"crlf and blank lines", "{\"type\":\"A\"}\r\n\r\n  \n{\"type\":\"B\"}\r\n",
			[]readResult{{Line: 1, Type: "A"}, {Line: 4, Type: "B"}}},
		{"line of exactly MaxLineBytes", atMax + "\n{\"type\":\"After\"}\n",
			[]readResult{{Line: 1, Type: "Big"}, {Line: 2, Type: "After"}}},
		// A line past MaxLineBytes is read as a stream (issue 18): valid,
		// or malformed for what it holds, never for its length.
		{"2 MiB line", long + "\n{\"type\":\"After\"}\n",
			[]readResult{{Line: 1, Type: "Big"}, {Line: 2, Type: "After"}}},
		{"one byte too long", atMax + "x\n{\"type\":\"After\"}\n",
			[]readResult{{Line: 1, Err: "t.jsonl:1: trailing data after the JSON object"}, {Line: 2, Type: "After"}}},
		{"too long last line", "{\"type\":\"A\"}\n" + long,
			[]readResult{{Line: 1, Type: "A"}, {Line: 2, Type: "Big"}}},
		{"last line without newline is fine when whole", `{"type":"A"}` + "\n" + `{"type":"B"}`,
			[]readResult{{Line: 1, Type: "A"}, {Line: 2, Type: "B"}}},
		{"truncated last line", `{"type":"A"}` + "\n" + `{"type":"B","payl`,
			[]readResult{{Line: 1, Type: "A"}, {Line: 2, Err: "t.jsonl:2: truncated last line (no newline at end of file): invalid JSON"}}},
		{"malformed lines", "[1]\n{\"type\":3}\n{\"payload\":{}}\n{\"type\":\"\"}\n{\"type\":\"A\"} x\n{\"type\":\"A\",}\n",
			[]readResult{
				{Line: 1, Err: "t.jsonl:1: not a JSON object"},
				{Line: 2, Err: `t.jsonl:2: "type" is not a string`},
				{Line: 3, Err: `t.jsonl:3: missing "type"`},
				{Line: 4, Err: `t.jsonl:4: empty "type"`},
				{Line: 5, Err: "t.jsonl:5: trailing data after the JSON object"},
				{Line: 6, Err: "t.jsonl:6: invalid JSON"},
			}},
		{"escaped type", `{"type":"Foo\u0042ar"}` + "\n", []readResult{{Line: 1, Type: "FooBar"}}},
		// Valid JSON nested past maxDepth is malformed, and says so (hostile
		// report 3, item 8); at maxDepth it is read. A bad value before the
		// depth is reached is invalid JSON.
		{"nested to the bound", `{"type":"A","payload":` + nested(maxDepth) + "}\n",
			[]readResult{{Line: 1, Type: "A"}}},
		{"nested past the bound", `{"type":"A","payload":` + nested(maxDepth+1) + "}\n" + `{"type":"A","x":` + nested(100000) + "}\n",
			[]readResult{{Line: 1, Err: "t.jsonl:1: " + tooDeep}, {Line: 2, Err: "t.jsonl:2: " + tooDeep}}},
		{"invalid before the bound", `{"type":"A","payload":[tru,` + nested(maxDepth+1) + "]}\n",
			[]readResult{{Line: 1, Err: "t.jsonl:1: invalid JSON"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readAll(t, strings.NewReader(tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Reader mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReaderGzip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, "{\"type\":\"A\",\"runId\":\"z\"}\n")
	zw.Close()
	got := readAll(t, &buf)
	if diff := cmp.Diff([]readResult{{Line: 1, Type: "A", RunID: "z"}}, got); diff != "" {
		t.Errorf("gzip mismatch (-want +got):\n%s", diff)
	}
}

func TestRawEventEvent(t *testing.T) {
	t.Parallel()
	rd, _ := NewReader(strings.NewReader(`{"v":1,"ts":"2026-11-21T10:00:00.123Z","type":"RunFinished","runId":"r","payload":{"success":true}}`+"\n"), "x")
	raw, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	ev := raw.Event()
	var p RunFinished
	if err := ev.Decode(&p); err != nil || !p.Success || ev.RunID != "r" || ev.TS.Nanosecond() != 123e6 {
		t.Errorf("Event() = %+v, payload %+v, err %v", ev, p, err)
	}
}

// FuzzReader checks that the Reader never panics and agrees with
// encoding/json: a line it accepts is a JSON object with the same string
// type, and a JSON object with a non-empty string type is accepted. It
// also reads every line as a line longer than MaxLineBytes is read (the
// limit lowered to 1 byte), which must give the same events and reasons.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"type":"RetryAttempt","payload":{"a":[1,2,{"b":null}],"c":"\"x\\"}}`,
		`{"type":"A"}`, `[]`, `{"type":1}`, `{"type":"A",}`, `{"type":"A"`, `{"type":"\ud800"}`,
		"{\"type\":\"A\"}\r\n\n{\"type\":\"B\"}", `{"a":-1.5e+3,"type":"T","b":true,"c":false}`, `{"type":"A"} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data), "f")
		if err != nil {
			return
		}
		if !isGzip(data) { // a corrupt gzip stream is a read error
			short, long := readAllWith(t, bytes.NewReader(data), 0), readAllWith(t, bytes.NewReader(data), 1)
			if diff := cmp.Diff(short, long); diff != "" {
				t.Fatalf("%q read as long lines differs (-short +long):\n%s", data, diff)
			}
		}
		for {
			ev, err := rd.Next()
			if err == io.EOF {
				return
			}
			var le *LineError
			if errors.As(err, &le) {
				continue
			}
			if err != nil {
				return
			}
			var obj struct {
				Type *string `json:"type"`
			}
			line := lineOf(data, ev.Line)
			if jerr := json.Unmarshal(line, &obj); jerr == nil && obj.Type != nil && *obj.Type != ev.Type {
				t.Fatalf("line %d %q: type %q, encoding/json says %q", ev.Line, line, ev.Type, *obj.Type)
			}
		}
	})
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

func lineOf(data []byte, n int) []byte {
	lines := bytes.Split(data, []byte("\n"))
	if n-1 < len(lines) {
		return lines[n-1]
	}
	return nil
}

// nested is n arrays, one in the other, in an object: n levels deep as the
// reader counts them (a top-level member's value is level 1).
func nested(n int) string {
	return `{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + "}"
}

// TestReadMembers: the members of an object payload reach the reader its
// type's function returns, whether the type precedes the payload (during
// the one scan) or follows it (a second scan of the payload), and only for
// the types that want them. A line found malformed after some members
// were handed over is a *LineError (its reader drops what it got).
func TestReadMembers(t *testing.T) {
	t.Parallel()
	in := `{"type":"A","payload":{"x":1,"y":"s"}}` + "\n" +
		`{"payload":{"x":2},"runId":"r","type":"A"}` + "\n" +
		`{"type":"B","payload":{"x":3}}` + "\n" +
		`{"type":"A","payload":[1]}` + "\n" +
		`{"type":"A","payload":{"x":4}` + "\n"
	rd, err := NewReader(strings.NewReader(in), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var asked []string
	rd.ReadMembers(func(typ string) func(key, val []byte) {
		asked = append(asked, typ)
		if typ != "A" {
			return nil
		}
		return func(key, val []byte) { got = append(got, string(key)+"="+string(val)) }
	})
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		var le *LineError
		if errors.As(err, &le) {
			got = append(got, le.Error())
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, "event "+ev.Type)
	}
	want := []string{`x=1`, `y="s"`, "event A", "x=2", "event A", "event B", "event A",
		"x=4", "t.jsonl:5: invalid JSON"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if want := []string{"A", "A", "B", "A"}; !slices.Equal(asked[:4], want) {
		t.Errorf("asked for the readers of %q, want %q first", asked, want)
	}
	if rd.Lines() != 5 {
		t.Errorf("Lines() = %d, want 5", rd.Lines())
	}
}
