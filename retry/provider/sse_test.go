package provider

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func readAll(t testing.TB, r io.Reader) ([]SSEEvent, error) {
	t.Helper()
	s := NewSSEReader(r)
	var evs []SSEEvent
	for {
		ev, err := s.Next()
		if err != nil {
			if err == io.EOF {
				return evs, nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestSSEReader(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200_000)
	tests := []struct {
		name string
		in   string
		want []SSEEvent
	}{
		{"empty", "", nil},
		{"one event", "event: ping\ndata: {}\n\n", []SSEEvent{{Event: "ping", Data: "{}"}}},
		{"default type is message", "data: hi\n\n", []SSEEvent{{Event: "message", Data: "hi"}}},
		{"no space after colon", "event:a\ndata:b\n\n", []SSEEvent{{Event: "a", Data: "b"}}},
		{"only one space stripped", "data:  two\n\n", []SSEEvent{{Event: "message", Data: " two"}}},
		{"multi-line data joined with LF", "data: a\ndata: b\ndata:\n\n", []SSEEvent{{Event: "message", Data: "a\nb\n"}}},
		{"empty data still dispatches", "data\n\n", []SSEEvent{{Event: "message", Data: ""}}},
		{"comments ignored", ": keep-alive\ndata: x\n: more\n\n", []SSEEvent{{Event: "message", Data: "x"}}},
		{"CRLF", "event: a\r\ndata: b\r\n\r\n", []SSEEvent{{Event: "a", Data: "b"}}},
		{"CR only", "event: a\rdata: b\r\rdata: c\r\r", []SSEEvent{{Event: "a", Data: "b"}, {Event: "message", Data: "c"}}},
		{"mixed endings", "data: a\r\n\ndata: b\r\r\ndata: c\n\r", []SSEEvent{{Event: "message", Data: "a"}, {Event: "message", Data: "b"}, {Event: "message", Data: "c"}}},
		{"event without data is not dispatched and type resets", "event: x\n\ndata: y\n\n", []SSEEvent{{Event: "message", Data: "y"}}},
		{"unterminated event discarded", "data: a\n\ndata: b\n", []SSEEvent{{Event: "message", Data: "a"}}},
		{"unterminated line discarded", "data: a\n\ndata: b", []SSEEvent{{Event: "message", Data: "a"}}},
		{"id persists", "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []SSEEvent{{"message", "a", "1"}, {"message", "b", "1"}, {"message", "c", ""}}},
		{"id with NUL ignored", "id: 7\ndata: a\n\nid: x\x00y\ndata: b\n\n", []SSEEvent{{"message", "a", "7"}, {"message", "b", "7"}}},
		{"unknown fields and retry ignored", "retry: 10\nfoo: bar\ndata: a\n\n", []SSEEvent{{Event: "message", Data: "a"}}},
		{"field names are case sensitive", "Data: a\nDATA: b\ndata: c\n\n", []SSEEvent{{Event: "message", Data: "c"}}},
		{"colon in value kept", "data: {\"a\":1}\n\n", []SSEEvent{{Event: "message", Data: `{"a":1}`}}},
		{"BOM skipped once", "\xEF\xBB\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n", []SSEEvent{{Event: "message", Data: "a"}}},
		{"long line", "data: " + long + "\n\n", []SSEEvent{{Event: "message", Data: long}}},
		{"OpenAI done", "data: {\"x\":1}\n\ndata: [DONE]\n\n", []SSEEvent{{Event: "message", Data: `{"x":1}`}, {Event: "message", Data: "[DONE]"}}},
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		"data+EOF": func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
	}
	for _, tt := range tests {
		for rname, mk := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got, err := readAll(t, mk(tt.in))
				if err != nil {
					t.Fatalf("Next() error: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("events mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestSSEReaderPassesReadErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	got, err := readAll(t, r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if diff := cmp.Diff([]SSEEvent{{Event: "message", Data: "a"}}, got); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// FuzzSSEReader checks that the parser never panics and that how the input
// is split into reads never changes the events.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"", "data: a\n\n", "event: ping\ndata: {}\r\n\r\n", "data: a\rdata: b\r\r", ":c\nid: 1\ndata\n\n",
		"\xEF\xBB\xBFdata: x\n\n", "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n",
		"data: [DONE]\n\n", "data: a\r", "\r\n\r\n\n\r", "id: \x00\ndata: z\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		whole, err := readAll(t, strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		bytewise, err := readAll(t, iotest.OneByteReader(strings.NewReader(in)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(whole, bytewise); diff != "" {
			t.Fatalf("split reads changed the events (-whole +bytewise):\n%s", diff)
		}
		if diff := cmp.Diff(whole, refParse(in)); diff != "" {
			t.Fatalf("differs from the reference parser (-got +ref):\n%s", diff)
		}
	})
}

// refParse is a direct, slow transcription of the WHATWG algorithm, used as
// the oracle of FuzzSSEReader.
func refParse(in string) []SSEEvent {
	in = strings.TrimPrefix(in, "\xEF\xBB\xBF")
	var lines []string
	for {
		i := strings.IndexAny(in, "\r\n")
		if i < 0 {
			break // an unterminated last line is never processed
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	var evs []SSEEvent
	var event, data, id string
	for _, l := range lines {
		if l == "" {
			if data == "" {
				event = ""
				continue
			}
			if event == "" {
				event = "message"
			}
			evs = append(evs, SSEEvent{Event: event, Data: strings.TrimSuffix(data, "\n"), ID: id})
			event, data = "", ""
			continue
		}
		if l[0] == ':' {
			continue
		}
		field, value, found := strings.Cut(l, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "event":
			event = value
		case "data":
			data += value + "\n"
		case "id":
			if !strings.Contains(value, "\x00") {
				id = value
			}
		}
	}
	return evs
}
