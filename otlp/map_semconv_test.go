package otlp

import (
	stdcmp "cmp"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sp is one hand-written span of an export: times in ms after t0, ids
// short (padded to their size), attributes by key (an int is an intValue).
type sp struct {
	trace, id, parent string
	name              string
	kind              int // 1 internal, 2 server, 3 client
	start, end        int64
	attrs             map[string]any
	errMsg            string // status code ERROR with this message ("-": no message)
	exception         string // an exception event with this message
}

const t0ns = int64(1795255204950000000)

// export renders spans as one OTLP/JSON traces export of service svc.
func export(svc string, spans ...sp) string {
	var out []map[string]any
	for _, s := range spans {
		var attrs []map[string]any
		for k, v := range s.attrs {
			val := map[string]any{"stringValue": fmt.Sprint(v)}
			if n, ok := v.(int); ok {
				val = map[string]any{"intValue": fmt.Sprint(n)}
			}
			attrs = append(attrs, map[string]any{"key": k, "value": val})
		}
		m := map[string]any{"traceId": pad(s.trace, 32), "spanId": pad(s.id, 16), "name": s.name, "kind": s.kind,
			"startTimeUnixNano": fmt.Sprint(t0ns + s.start*1e6), "endTimeUnixNano": fmt.Sprint(t0ns + s.end*1e6), "attributes": attrs}
		if s.parent != "" {
			m["parentSpanId"] = pad(s.parent, 16)
		}
		if s.errMsg != "" {
			m["status"] = map[string]any{"code": 2, "message": strings.TrimPrefix(s.errMsg, "-")}
		}
		if s.exception != "" {
			m["events"] = []map[string]any{{"name": "exception", "timeUnixNano": fmt.Sprint(t0ns + s.end*1e6),
				"attributes": []map[string]any{{"key": "exception.message", "value": map[string]any{"stringValue": s.exception}}}}}
		}
		out = append(out, m)
	}
	b, _ := json.Marshal(map[string]any{"resourceSpans": []any{map[string]any{
		"resource":   map[string]any{"attributes": []any{map[string]any{"key": "service.name", "value": map[string]any{"stringValue": svc}}}},
		"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "x"}, "spans": out}}}}})
	return string(b)
}

func pad(id string, n int) string {
	if id == "" {
		return ""
	}
	return strings.Repeat("0", n-len(id)) + id
}

// post is an HTTP client span of the current conventions.
func post(trace, id, parent, url string, start int64, status, resend int) sp {
	a := map[string]any{"http.request.method": "POST", "url.full": url, "http.response.status_code": status}
	if resend > 0 {
		a["http.request.resend_count"] = resend
	}
	if status >= 400 {
		a["error.type"] = fmt.Sprint(status)
	}
	return sp{trace: trace, id: id, parent: parent, name: "POST", kind: 3, start: start, end: start + 100, attrs: a}
}

// chat is a gen_ai chat CLIENT span.
func chat(trace, id, parent string, start, end int64) sp {
	return sp{trace: trace, id: id, parent: parent, name: "chat claude-haiku-4-5", kind: 3, start: start, end: end,
		attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-haiku-4-5"}}
}

const msgs = "http://127.0.0.1:4000/v1/messages"

// summary renders an account compactly: per request its provider, model,
// whether uncounted, and each attempt as status@start-ms (err: an error
// without a status, retried: one filled in, 200!: a 2xx that failed).
func summary(acc Account) []string {
	var out []string
	for _, r := range acc.Requests {
		var ats []string
		for _, a := range r.Attempts {
			s := fmt.Sprint(a.Status)
			switch {
			case a.Untimed:
				s = "retried"
			case a.Status == 0 && a.Failed():
				s = "err:" + stdcmp.Or(a.Error, a.ErrorType)
			case a.Status < 300 && a.Failed():
				s += "!" // a 2xx that failed after its headers
			}
			if !a.Untimed {
				s += fmt.Sprintf("@%d", (a.Start.UnixNano()-t0ns)/1e6)
			}
			ats = append(ats, s)
		}
		u := ""
		if r.Uncounted != "" {
			u = " uncounted"
		}
		out = append(out, fmt.Sprintf("%s %s%s: %s", r.Provider, r.Model, u, strings.Join(ats, " ")))
	}
	return out
}

// TestSemconvCases reads hand-written exports of the cases the semantic
// conventions leave to the reader (the hostile tester's repro scripts
// 03-semconv-grouping, 04-selfreport-side-and-dup and 10-otlp-silent
// among them).
func TestSemconvCases(t *testing.T) {
	app := sp{trace: "a1", id: "f0", name: "agent turn", kind: 1, start: 0, end: 10000}
	tests := []struct {
		name    string
		exports []string
		want    []string
		notes   []string // substrings, one per note expected
		unknown int
		dups    int
	}{
		{name: "four calls under an app span are four requests (repro 03a)",
			exports: []string{export("app", app, post("a1", "1", "f0", msgs, 0, 200, 0), post("a1", "2", "f0", msgs, 1000, 200, 0),
				post("a1", "3", "f0", msgs, 2000, 200, 0), post("a1", "4", "f0", msgs, 3000, 200, 0))},
			want:    []string{"anthropic : 200@0", "anthropic : 200@1000", "anthropic : 200@2000", "anthropic : 200@3000"},
			unknown: 1},
		{name: "root spans resend_count 0,1,2 in traces of their own are one request (repro 03b)",
			exports: []string{export("app", post("1", "1", "", msgs, 0, 529, 0), post("2", "2", "", msgs, 1000, 529, 1), post("3", "3", "", msgs, 2000, 200, 2))},
			want:    []string{"anthropic : 529@0 529@1000 200@2000"}},
		{name: "old conventions: http.method, http.url, http.status_code (repro 10)",
			exports: []string{export("app",
				sp{trace: "1", id: "1", kind: 3, start: 0, end: 100, attrs: map[string]any{"http.method": "POST", "http.url": msgs, "http.status_code": 529, "error.type": "529"}},
				sp{trace: "2", id: "2", kind: 3, start: 1000, end: 1100, attrs: map[string]any{"http.method": "POST", "http.url": msgs, "http.status_code": 529, "http.request.resend_count": 1}},
				sp{trace: "3", id: "3", kind: 3, start: 2000, end: 2100, attrs: map[string]any{"http.method": "POST", "http.target": "/v1/messages?beta=true", "http.status_code": 200, "http.request.resend_count": 2}})},
			want: []string{"anthropic : 529@0 529@1000 200@2000"}},
		{name: "count_tokens beside a gen_ai call is a side request (repro 04 ct)",
			exports: []string{export("c", post("9", "9", "", msgs+"/count_tokens", 0, 200, 0),
				post("a1", "1", "c1", msgs, 100, 529, 0), post("a1", "2", "c1", msgs, 400, 200, 1), chat("a1", "c1", "", 100, 600))},
			want:    []string{"anthropic claude-haiku-4-5: 529@100 200@400"},
			notes:   []string{"POST /v1/messages/count_tokens (1)"},
			unknown: 1},
		{name: "the same export twice counts once (repro 04 dup)",
			exports: []string{
				export("c", post("a1", "1", "c1", msgs, 0, 529, 0), post("a1", "2", "c1", msgs, 300, 200, 1), chat("a1", "c1", "", 0, 500)),
				export("c", post("a1", "1", "c1", msgs, 0, 529, 0), post("a1", "2", "c1", msgs, 300, 200, 1), chat("a1", "c1", "", 0, 500))},
			want:  []string{"anthropic claude-haiku-4-5: 529@0 200@300"},
			notes: []string{"3 span(s) and log record(s) received more than once"},
			dups:  3},
		{name: "side requests of every format are no attempts",
			exports: []string{export("c", post("1", "1", "", "http://h/v1/responses/input_tokens", 0, 200, 0),
				post("2", "2", "", "http://h/v1/messages/batches", 0, 200, 0),
				post("3", "3", "", "http://h/v1beta/models/gemini-2.5-flash:countTokens", 0, 200, 0),
				sp{trace: "4", id: "4", kind: 3, attrs: map[string]any{"http.request.method": "GET", "url.full": "http://h/v1/models", "http.response.status_code": 200}},
				sp{trace: "5", id: "5", kind: 3, attrs: map[string]any{"http.request.method": "GET", "url.full": msgs, "http.response.status_code": 405}})},
			notes:   []string{"5 HTTP client span(s) of other endpoints", "no mapping reads"},
			unknown: 5},
		{name: "gemini's model paths and a gateway's base path are attempts",
			exports: []string{export("c", post("1", "1", "", "http://h/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", 0, 503, 0),
				post("2", "2", "", "http://h/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", 1000, 200, 1),
				post("3", "3", "", "https://openrouter.ai/api/v1/chat/completions", 5000, 200, 0))},
			want: []string{"gemini : 503@0 200@1000", "openai : 200@5000"}},
		{name: "concurrent calls interleaved under one app span keep their own chains",
			exports: []string{export("app", app,
				post("a1", "a", "f0", msgs, 0, 529, 0), post("a1", "b", "f0", "http://h/v1/chat/completions", 50, 429, 0),
				post("a1", "c", "f0", msgs, 1000, 529, 1), post("a1", "d", "f0", "http://h/v1/chat/completions", 1050, 429, 1),
				post("a1", "e", "f0", msgs, 3000, 200, 2), post("a1", "f", "f0", "http://h/v1/chat/completions", 3050, 200, 2))},
			want:    []string{"anthropic : 529@0 529@1000 200@3000", "openai : 429@50 429@1050 200@3050"},
			unknown: 1},
		{name: "concurrent calls to one URL: each resend goes to the request waiting longest",
			exports: []string{export("app", app,
				post("a1", "a", "f0", msgs, 0, 529, 0), post("a1", "b", "f0", msgs, 50, 529, 0),
				post("a1", "c", "f0", msgs, 1000, 200, 1), post("a1", "d", "f0", msgs, 1200, 529, 1), post("a1", "e", "f0", msgs, 3000, 200, 2))},
			want:    []string{"anthropic : 529@0 200@1000", "anthropic : 529@50 529@1200 200@3000"},
			unknown: 1},
		{name: "a resend whose earlier attempts were not exported",
			exports: []string{export("app", post("1", "1", "", msgs, 2000, 200, 2))},
			want:    []string{"anthropic : retried retried 200@2000"},
			notes:   []string{"resend a request"}},
		{name: "resend_count 0, 1, 5: the numbers between are filled in (hostile repro 06)",
			exports: []string{export("app", post("1", "1", "", msgs, 0, 529, 0), post("1", "2", "", msgs, 1000, 529, 1), post("1", "3", "", msgs, 2000, 200, 5))},
			want:    []string{"anthropic : 529@0 529@1000 retried retried retried 200@2000"},
			notes:   []string{"3 attempt(s) numbered"}},
		{name: "resend_count 0, 2 under a chat span: the one between is filled in (hostile repro 12)",
			exports: []string{export("app", chat("1", "c", "", 0, 3000), post("1", "1", "c", msgs, 0, 529, 0), post("1", "2", "c", msgs, 2000, 529, 2))},
			want:    []string{"anthropic claude-haiku-4-5: 529@0 retried 529@2000"},
			notes:   []string{"1 attempt(s) numbered"}},
		{name: "resend_count 0, 1, 2 under a chat span: nothing filled in",
			exports: []string{export("app", chat("1", "c", "", 0, 3000), post("1", "1", "c", msgs, 0, 529, 0), post("1", "2", "c", msgs, 1000, 529, 1), post("1", "3", "c", msgs, 2000, 200, 2))},
			want:    []string{"anthropic claude-haiku-4-5: 529@0 529@1000 200@2000"}},
		{name: "gen_ai spans alone, as OpenLLMetry writes them (repro 10)",
			exports: []string{export("app",
				sp{trace: "1", id: "1", name: "openai.chat", kind: 3, start: 0, end: 100, errMsg: "rate limited",
					attrs: map[string]any{"gen_ai.system": "openai", "llm.request.type": "chat", "gen_ai.request.model": "gpt-4o", "error.type": "429"}},
				sp{trace: "2", id: "2", name: "chat gpt-4o", kind: 3, start: 1000, end: 1100, exception: "Connection reset by peer",
					attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o"}},
				sp{trace: "3", id: "3", name: "chat gpt-4o", kind: 3, start: 2000, end: 2100,
					attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o", "http.status_code": 200}},
				sp{trace: "4", id: "4", name: "embeddings", kind: 3, start: 3000, end: 3100,
					attrs: map[string]any{"gen_ai.operation.name": "embeddings", "gen_ai.provider.name": "openai", "gen_ai.request.model": "e"}})},
			want: []string{"openai gpt-4o uncounted: 429@0", "openai gpt-4o uncounted: err:Connection reset by peer@1000",
				"openai gpt-4o uncounted: 200@2000"},
			notes:   []string{"3 gen_ai span(s) with no HTTP client span under them"},
			unknown: 1},
		{name: "OpenInference's LLM spans under its chain span",
			exports: []string{export("app",
				sp{trace: "1", id: "1", name: "RunnableSequence", kind: 1, start: 0, end: 3000, attrs: map[string]any{"openinference.span.kind": "CHAIN"}},
				sp{trace: "1", id: "2", parent: "1", name: "ChatOpenAI", kind: 1, start: 10, end: 1000, errMsg: "-", exception: "RateLimitError: Error code: 429",
					attrs: map[string]any{"openinference.span.kind": "LLM", "llm.provider": "openai", "llm.model_name": "gpt-4o-mini"}},
				sp{trace: "1", id: "3", parent: "1", name: "ChatOpenAI", kind: 1, start: 2000, end: 2900,
					attrs: map[string]any{"openinference.span.kind": "LLM", "llm.provider": "openai", "llm.model_name": "gpt-4o-mini"}})},
			want:    []string{"openai gpt-4o-mini uncounted: err:RateLimitError: Error code: 429@10", "openai gpt-4o-mini uncounted: 0@2000"},
			notes:   []string{"2 gen_ai span(s)"},
			unknown: 1},
		{name: "a framework's gen_ai span over the SDK's is not a call of its own",
			exports: []string{export("app",
				sp{trace: "1", id: "1", name: "ChatAnthropic.chat", kind: 1, start: 0, end: 500, attrs: map[string]any{"gen_ai.system": "anthropic", "gen_ai.request.model": "m", "llm.request.type": "chat"}},
				sp{trace: "1", id: "2", parent: "1", name: "anthropic.chat", kind: 3, start: 10, end: 490, attrs: map[string]any{"gen_ai.system": "anthropic", "gen_ai.request.model": "m", "llm.request.type": "chat"}})},
			want:    []string{"anthropic m uncounted: 0@10"},
			notes:   []string{"1 gen_ai span(s)"},
			unknown: 1},
		{name: "a gen_ai call in error fails its last attempt, whose HTTP span ended at a 200's headers",
			exports: []string{export("app", func() sp { c := chat("1", "c", "", 0, 2000); c.errMsg = "stream cut"; return c }(),
				post("1", "1", "c", msgs, 0, 503, 0), post("1", "2", "c", msgs, 1000, 200, 1))},
			want: []string{"anthropic claude-haiku-4-5: 503@0 200!@1000"}},
		{name: "an HTTP span over the HTTP spans of its attempts (requests over urllib3)",
			exports: []string{export("app", post("1", "1", "", msgs, 0, 200, 0),
				post("1", "2", "1", msgs, 10, 529, 0), post("1", "3", "1", msgs, 1010, 200, 0))},
			want: []string{"anthropic : 529@10 200@1010"}},
		{name: "a gen_ai call's HTTP spans without a URL are its attempts; without a call, they say nothing",
			exports: []string{export("app", chat("1", "c", "", 0, 3000),
				sp{trace: "1", id: "1", parent: "c", kind: 3, start: 0, end: 100, attrs: map[string]any{"http.request.method": "POST", "http.response.status_code": 503}},
				sp{trace: "1", id: "2", parent: "c", kind: 3, start: 1000, end: 1100, attrs: map[string]any{"http.request.method": "POST", "http.response.status_code": 200}},
				sp{trace: "2", id: "3", kind: 3, start: 5000, end: 5100, attrs: map[string]any{"http.request.method": "POST", "http.response.status_code": 200}})},
			want:    []string{"anthropic claude-haiku-4-5: 503@0 200@1000"},
			notes:   []string{"1 HTTP client span(s) with no URL"},
			unknown: 1},
		{name: "HTTP spans under an agent's gen_ai span (not a model call) are grouped by resend_count",
			exports: []string{export("app",
				sp{trace: "1", id: "a", name: "invoke_agent", kind: 1, start: 0, end: 5000, attrs: map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "openai"}},
				post("1", "1", "a", "http://h/v1/responses", 0, 200, 0), post("1", "2", "a", "http://h/v1/responses", 2000, 200, 0))},
			want:    []string{"openai-responses : 200@0", "openai-responses : 200@2000"},
			unknown: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ps []Payload
			for _, e := range tt.exports {
				p, err := ParseJSON([]byte(e))
				if err != nil {
					t.Fatal(err)
				}
				ps = append(ps, p)
			}
			acc := Read(Collect(ps))
			if diff := cmp.Diff(tt.want, summary(acc)); diff != "" {
				t.Errorf("requests mismatch (-want +got):\n%s", diff)
			}
			if acc.Unknown != tt.unknown || acc.Duplicates != tt.dups {
				t.Errorf("unknown %d, duplicates %d; want %d, %d", acc.Unknown, acc.Duplicates, tt.unknown, tt.dups)
			}
			if len(acc.Notes) != len(tt.notes) {
				t.Errorf("notes %q, want %d like %q", acc.Notes, len(tt.notes), tt.notes)
			}
			for _, n := range tt.notes {
				if !strings.Contains(strings.Join(acc.Notes, "\n"), n) {
					t.Errorf("notes %q, want one with %q", acc.Notes, n)
				}
			}
		})
	}
}

// TestDedupeLogs: a logs export received twice (Codex's real one) gives
// the account it gives once.
func TestDedupeLogs(t *testing.T) {
	p := readPayload(t, "codex-real-503-503-ok-logs.json")
	once := Read(Collect([]Payload{p}))
	twice := Read(Collect([]Payload{p, readPayload(t, "codex-real-503-503-ok-logs.json")}))
	if diff := cmp.Diff(once.Requests, twice.Requests); diff != "" {
		t.Errorf("requests of an export received twice (-once +twice):\n%s", diff)
	}
	if twice.Items != once.Items || twice.Duplicates != once.Items || twice.Unknown != once.Unknown {
		t.Errorf("twice: items %d, duplicates %d, unknown %d; want %d, %d, %d", twice.Items, twice.Duplicates, twice.Unknown, once.Items, once.Items, once.Unknown)
	}
}

// TestAttemptEndpoint: the answer endpoints, as the mock's wire formats
// decide (internal/wire holds the two in step), and a gateway's base
// path before them.
func TestAttemptEndpoint(t *testing.T) {
	tests := []struct {
		method, url string
		want        bool
	}{
		{"POST", "/v1/messages", true},
		{"post", "http://127.0.0.1:1/v1/messages?beta=true", true},
		{"", "/v1/chat/completions", true},
		{"POST", "/v1/responses", true},
		{"POST", "/v1beta/models/gemini-2.5-pro:generateContent", true},
		{"POST", "/v1/models/gemini-2.5-pro:streamGenerateContent?alt=sse", true},
		{"POST", "https://openrouter.ai/api/v1/chat/completions", true},
		{"POST", "/v1/messages/count_tokens", false},
		{"POST", "/v1/messages/batches", false},
		{"POST", "/v1/responses/input_tokens", false},
		{"POST", "/v1beta/models/gemini-2.5-pro:countTokens", false},
		{"POST", "/v1beta/models/a/b:generateContent", false},
		{"GET", "/v1/models", false},
		{"GET", "/v1/messages", false},
		{"POST", "/v2/messages", false},
		{"POST", "/v1/messagesx", false},
		{"POST", "", false},
		{"POST", "http://[::1", false},
	}
	for _, tt := range tests {
		if got := AttemptEndpoint(tt.method, tt.url); got != tt.want {
			t.Errorf("AttemptEndpoint(%q, %q) = %v, want %v", tt.method, tt.url, got, tt.want)
		}
	}
}

// TestDedupeLogsWithinExport: log records alike in every field within one
// export are all kept (only a later export's copy is a retry).
func TestDedupeLogsWithinExport(t *testing.T) {
	rec := `{"timeUnixNano":"1795255204950000000","eventName":"codex.sse_event","attributes":[{"key":"event.kind","value":{"stringValue":"response.output_text.delta"}}]}`
	exp := `{"resourceLogs":[{"resource":{},"scopeLogs":[{"scope":{},"logRecords":[` + rec + `,` + rec + `]}]}]}`
	p, err := ParseJSON([]byte(exp))
	if err != nil {
		t.Fatal(err)
	}
	q, _ := ParseJSON([]byte(exp))
	if acc := Read(Collect([]Payload{p})); acc.Items != 2 || acc.Duplicates != 0 {
		t.Errorf("one export: items %d, duplicates %d; want 2, 0", acc.Items, acc.Duplicates)
	}
	if acc := Read(Collect([]Payload{p, q})); acc.Items != 2 || acc.Duplicates != 2 {
		t.Errorf("the export twice: items %d, duplicates %d; want 2, 2", acc.Items, acc.Duplicates)
	}
}

// TestDedupeSpanConflict: spans received again under the same ids are an
// exporter's retry when alike (counted once), a contradiction when not
// (hostile repro 01: every status flipped to 200): the first copy is
// read and the ids are listed in Conflicts.
func TestDedupeSpanConflict(t *testing.T) {
	truth := export("app", post("1", "1", "", msgs, 0, 529, 0), post("1", "2", "", msgs, 1000, 200, 1))
	lie := export("app", post("1", "1", "", msgs, 0, 200, 0), post("1", "2", "", msgs, 1000, 200, 1))
	for _, tt := range []struct {
		name      string
		exports   []string
		want      []string
		dups      int
		conflicts []string
	}{
		{"retry", []string{truth, truth}, []string{"anthropic : 529@0 200@1000"}, 2, nil},
		{"lie after", []string{truth, lie}, []string{"anthropic : 529@0 200@1000"}, 1, []string{pad("1", 32) + "/" + pad("1", 16)}},
		{"lie first", []string{lie, truth}, []string{"anthropic : 200@0 200@1000"}, 1, []string{pad("1", 32) + "/" + pad("1", 16)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ps []Payload
			for _, e := range tt.exports {
				p, err := ParseJSON([]byte(e))
				if err != nil {
					t.Fatal(err)
				}
				ps = append(ps, p)
			}
			acc := Read(Collect(ps))
			if diff := cmp.Diff(tt.want, summary(acc)); diff != "" {
				t.Errorf("requests mismatch (-want +got):\n%s", diff)
			}
			if acc.Duplicates != tt.dups || !cmp.Equal(acc.Conflicts, tt.conflicts) {
				t.Errorf("duplicates %d, conflicts %q; want %d, %q", acc.Duplicates, acc.Conflicts, tt.dups, tt.conflicts)
			}
		})
	}
}
