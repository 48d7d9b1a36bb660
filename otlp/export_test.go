package otlp

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/trace"
)

// readLines reads trace v1 text as FromLines's input, each line kept.
func readLines(t *testing.T, text string) []Line {
	t.Helper()
	r, err := trace.NewReader(strings.NewReader(text), "t")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []Line
	for {
		raw, err := r.Next()
		if err != nil {
			return out
		}
		out = append(out, Line{Event: raw.Event(), Raw: RawLine(raw, nil), Seq: int64(len(out))})
	}
}

// exportJSON is FromLines written as OTLP/JSON and parsed back.
func exportJSON(t *testing.T, run string, lines []Line, maxItems int) []Payload {
	t.Helper()
	var out []Payload
	for _, p := range FromLines(run, lines, maxItems) {
		b, err := p.JSON()
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParseJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
	return out
}

const escalated = `{"v":1,"ts":"2026-11-21T10:00:00Z","type":"RetryAttempt","runId":"e","payload":{"provider":"anthropic","model":"claude-haiku-4-5","attempt":1,"failureType":"overloaded","status":503,"errorMessage":"x","willRetry":true,"delayMs":1000,"delaySource":"backoff"}}
{"v":1,"ts":"2026-11-21T10:00:01Z","type":"RetryAttempt","runId":"e","payload":{"provider":"anthropic","model":"claude-haiku-4-5","attempt":2,"failureType":"overloaded","status":503,"errorMessage":"x","willRetry":true,"delayMs":0,"delaySource":"backoff"}}
{"v":1,"ts":"2026-11-21T10:00:01Z","type":"RunEscalated","runId":"e","payload":{"from":"claude-haiku-4-5","to":"claude-sonnet-4-5","reason":"auto_after_retries"}}
{"v":1,"ts":"2026-11-21T10:00:02Z","type":"ProviderRequestFinished","runId":"e","payload":{"provider":"anthropic","model":"claude-sonnet-4-5","durationMs":1500,"success":true,"retries":2}}
{"v":1,"type":"ProviderRequestFinished","payload":{"provider":"anthropic","model":"m","durationMs":3000,"success":false,"retries":2,"error":"gave up","failureType":"overloaded"}}
{"v":1,"ts":"2026-11-21T10:00:03.5Z","type":"SomethingNew","runId":"e","payload":{"x":[1,{"y":"\u00e9\n"}]}}
{"v":1,"ts":"2026-11-21T10:00:04Z","type":"RetryAttempt","runId":"e","payload":{"provider":"openai","model":"o","attempt":1,"failureType":"timeout","errorMessage":"t","willRetry":false,"delayMs":0,"delaySource":"none"}}
`

// TestTraceLinesGiveTheTraceBack: what FromLines carries comes back
// byte for byte, in order, a line without runId given the run's name.
func TestTraceLinesGiveTheTraceBack(t *testing.T) {
	lines := readLines(t, escalated)
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(escalated), "\n") {
		if !strings.Contains(l, `"runId"`) {
			l = strings.Replace(l, `,"payload"`, `,"runId":"f.jsonl","payload"`, 1)
		}
		want = append(want, l)
	}
	for _, max := range []int{0, 1, 3} { // exports of at most max items
		ps := exportJSON(t, "f.jsonl", lines, max)
		if max == 1 && len(ps) != 10+2 {
			t.Errorf("max 1: %d exports, want 12 (10 spans, 2 log records)", len(ps))
		}
		c := TraceLines(ps)
		got, rest := c.Lines, c.Rest
		if len(rest) != 0 {
			t.Errorf("max %d: rest = %d payloads, want none", max, len(rest))
		}
		var gotS []string
		for _, l := range got {
			gotS = append(gotS, string(l))
		}
		if diff := cmp.Diff(want, gotS); diff != "" {
			t.Errorf("max %d: lines (-want +got):\n%s", max, diff)
		}
	}
}

// TestTraceLinesLeaveOtherTelemetry: spans of another scope, and an
// export of an older retrylab (its scope without retrylab.event), are
// left to the mappings.
func TestTraceLinesLeaveOtherTelemetry(t *testing.T) {
	ps := exportJSON(t, "e", readLines(t, escalated), 0)
	p := ps[0]
	other := p.Traces.ResourceSpans().AppendEmpty()
	other.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("POST")
	old := p.Traces.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	old.Scope().SetName(ExportScope) // no version: an older retrylab's
	old.Spans().AppendEmpty().SetName("chat m")
	c := TraceLines(ps)
	lines, rest := c.Lines, c.Rest
	if len(lines) != 7 || len(rest) != 1 || rest[0].Traces.SpanCount() != 2 {
		t.Errorf("got %d lines, %d payloads left (%d spans); want 7, 1 (2)", len(lines), len(rest), rest[0].Traces.SpanCount())
	}
}

// TestFromLinesShape: the spans an OpenTelemetry backend shows. An
// escalated request's attempts (its RetryAttempts name the model it began
// on) hang under its chat span with their statuses; retries no event
// describes are marked; an attempt no request takes hangs under the run;
// other events are log records of the run's span.
func TestFromLinesShape(t *testing.T) {
	ps := FromLines("e", readLines(t, escalated), 0)
	spans := ps[0].Traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	type row struct{ Name, Parent, Status, ErrType string }
	names := map[string]string{}
	var got []row
	for i := 0; i < spans.Len(); i++ {
		s := spans.At(i)
		names[s.SpanID().String()] = s.Name()
		r := row{Name: s.Name(), Parent: names[s.ParentSpanID().String()]}
		if v, ok := s.Attributes().Get("http.response.status_code"); ok {
			r.Status = v.AsString()
		}
		if v, ok := s.Attributes().Get("error.type"); ok {
			r.ErrType = v.AsString()
		}
		if _, ok := s.Attributes().Get("retrylab.undescribed"); ok {
			r.ErrType += " (undescribed)"
		}
		got = append(got, r)
	}
	want := []row{
		{Name: "retrylab run"},
		{"chat claude-sonnet-4-5", "retrylab run", "", ""},
		{"POST", "chat claude-sonnet-4-5", "503", "overloaded"},
		{"POST", "chat claude-sonnet-4-5", "503", "overloaded"},
		{"POST", "chat claude-sonnet-4-5", "200", ""},
		{"chat m", "retrylab run", "", "overloaded"},
		{"POST", "chat m", "", "unknown (undescribed)"},
		{"POST", "chat m", "", "unknown (undescribed)"},
		{"POST", "chat m", "", "overloaded"},
		{"POST", "retrylab run", "", "timeout"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	recs := ps[1].Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	if len(ps) != 2 || recs.Len() != 2 || recs.At(0).EventName() != "RunEscalated" || recs.At(1).EventName() != "SomethingNew" {
		t.Errorf("%d exports, log records %d; want spans, then RunEscalated and SomethingNew", len(ps), recs.Len())
	}
	if v, _ := recs.At(0).Body().Map().Get("to"); v.Str() != "claude-sonnet-4-5" || recs.At(0).SpanID() != spans.At(0).SpanID() {
		t.Errorf("RunEscalated's record: body to %q, span %v; want the payload, the run's span", v.Str(), recs.At(0).SpanID())
	}
	// The escalated request's first attempt ends at its RetryAttempt's ts
	// and the next begins delayMs (1000) later.
	a1, a2 := spans.At(2), spans.At(3)
	if d := a2.StartTimestamp().AsTime().Sub(a1.EndTimestamp().AsTime()); d.Milliseconds() != 1000 {
		t.Errorf("wait between attempts %v, want 1s", d)
	}
}

// TestDecodeBase64IDs: trace and span ids in base64 (the protobuf JSON
// mapping of bytes) read as their hex form does.
func TestDecodeBase64IDs(t *testing.T) {
	doc := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":%q,"spanId":%q,"parentSpanId":%q,"name":"POST"}]}]}],` +
		`"resourceLogs":[]}`
	hexDoc := fmt.Sprintf(doc, "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174", "eee19b7ec3c1b175")
	for _, ids := range [][3]string{
		{"W47/95gDgQPSabYzgT/GDA==", "7uGbfsPBsXQ=", "7uGbfsPBsXU="},
		{"W47_95gDgQPSabYzgT_GDA", "7uGbfsPBsXQ", "7uGbfsPBsXU"},
	} {
		p, err := Decode(Traces, JSON, []byte(fmt.Sprintf(doc, ids[0], ids[1], ids[2])))
		if err != nil {
			t.Fatalf("%v: %v", ids, err)
		}
		want, _ := Decode(Traces, JSON, []byte(hexDoc))
		s, w := p.Traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0), want.Traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		if s.TraceID() != w.TraceID() || s.SpanID() != w.SpanID() || s.ParentSpanID() != w.ParentSpanID() {
			t.Errorf("%v: ids %v %v %v, want %v %v %v", ids, s.TraceID(), s.SpanID(), s.ParentSpanID(), w.TraceID(), w.SpanID(), w.ParentSpanID())
		}
	}
	if _, err := Decode(Traces, JSON, []byte(fmt.Sprintf(doc, "nope", "x", "y"))); err == nil {
		t.Error("ids neither hex nor base64 decoded without error")
	}
}

// TestReadJSON: documents are cut by their braces, one a line or
// spanning lines, and what is not one is said with its lines.
func TestReadJSON(t *testing.T) {
	one := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a}{\"]"}]}]}]}`
	pretty := "{\n  \"resourceLogs\": [\n    {\"scopeLogs\": []}\n  ]\n}"
	tests := []struct {
		name, in string
		limit    int
		want     []string // per document: lines, then signal or error
	}{
		{"one a line", one + "\n" + one + "\r\n\n" + one, 0, []string{"1-1 traces", "2-2 traces", "4-4 traces"}},
		{"pretty", pretty + "\n" + pretty, 0, []string{"1-5 logs", "6-10 logs"}},
		{"two on a line", one + " " + one, 0, []string{"1-1 traces", "1-1 traces"}},
		{"garbage line", "# x {\n" + one + "\nnull\n", 0, []string{"1-1 not OTLP/JSON: not a JSON object", "2-2 traces", "3-3 not OTLP/JSON: not a JSON object"}},
		{"not an export", `{"not":"otlp"}`, 0, []string{"1-1 not OTLP/JSON: no resourceSpans, resourceLogs or resourceMetrics"}},
		{"cut by the next", `{"resourceSpans":[{` + "\n" + one, 0, []string{"1-2 an export cut short (a new one begins on line 2)", "2-2 traces"}},
		{"cut by the end", pretty[:20], 0, []string{"1-2 an export cut short by the end of the input"}},
		{"cut by the end, newline last", "{\"resourceLogs\":[\n{\n", 0, []string{"1-2 an export cut short by the end of the input"}},
		{"too big", one + "\n" + `{"resourceLogs":[]}`, 30, []string{"1-1 an OTLP/JSON export over 30 bytes", "2-2 logs"}},
		{"empty", " \n\n", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			limit := tt.limit
			if limit == 0 {
				limit = 1 << 20
			}
			err := ReadJSON(strings.NewReader(tt.in), limit, func(d Doc) error {
				s := fmt.Sprintf("%d-%d ", d.Line, d.EndLine)
				if d.Err != nil {
					s += d.Err.Error()
				} else {
					s += string(d.Payload.Signal)
				}
				got = append(got, s)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	stop := errors.New("stop")
	if err := ReadJSON(strings.NewReader("x\n"+one), 1<<20, func(Doc) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("each's error: got %v", err)
	}
}

// FuzzReadJSON: nothing panics, documents come in line order, and the
// documents of a stream of exports one a line are those lines.
func FuzzReadJSON(f *testing.F) {
	f.Add([]byte("{\n  \"resourceLogs\": [\n  ]\n}\n{\"resourceSpans\":[]}\n"), 64)
	f.Add([]byte(`{"resourceSpans":[{"x":"\"}"}]}{`), 16)
	f.Add([]byte("x\n[1,2\n{\"resourceMetrics\":[]}"), 1024)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		limit = 1 + abs(limit)%(1<<16)
		last, n := 0, 0
		err := ReadJSON(bytes.NewReader(in), limit, func(d Doc) error {
			n++
			if d.Line < last || d.EndLine < d.Line || d.Line < 1 {
				t.Fatalf("document at lines %d-%d after line %d", d.Line, d.EndLine, last)
			}
			if d.Err == nil {
				if _, err := d.Payload.JSON(); err != nil {
					t.Fatalf("a document read does not encode: %v", err)
				}
			}
			last = d.Line
			return nil
		})
		if err != nil {
			t.Fatalf("reading from memory: %v", err)
		}
		if n > len(in) {
			t.Fatalf("%d documents from %d bytes", n, len(in))
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
