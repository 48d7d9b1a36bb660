package otlp

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

const carriedTrace = `{"v":1,"ts":"2026-11-21T10:00:00Z","type":"RetryAttempt","runId":"e","payload":{"provider":"anthropic","model":"m","attempt":1,"failureType":"overloaded","status":503,"errorMessage":"x","willRetry":true,"delayMs":1000,"delaySource":"backoff"}}
{"v":1,"ts":"2026-11-21T10:00:02Z","type":"RetryAttempt","runId":"e","payload":{"provider":"anthropic","model":"m","attempt":2,"failureType":"rate_limit","status":429,"errorMessage":"y","willRetry":true,"delayMs":500,"delaySource":"backoff"}}
{"v":1,"ts":"2026-11-21T10:00:03Z","type":"ProviderRequestFinished","runId":"e","payload":{"provider":"anthropic","model":"m","durationMs":3500,"success":true,"retries":2}}
{"v":1,"ts":"2026-11-21T10:00:03Z","type":"RunFinished","runId":"e","payload":{"success":true,"durationMs":3600}}
`

// eachCarrier calls edit with the attributes of every span and log
// record of ps that carries a line, and that line.
func eachCarrier(ps []Payload, edit func(a pcommon.Map, line string)) {
	do := func(a pcommon.Map) {
		if v, ok := a.Get(AttrEvent); ok {
			edit(a, v.Str())
		}
	}
	for _, p := range ps {
		for i := 0; p.Signal == Traces && i < p.Traces.ResourceSpans().Len(); i++ {
			ss := p.Traces.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					do(ss.At(j).Spans().At(k).Attributes())
				}
			}
		}
		for i := 0; p.Signal == Logs && i < p.Logs.ResourceLogs().Len(); i++ {
			sl := p.Logs.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sl.Len(); j++ {
				for k := 0; k < sl.At(j).LogRecords().Len(); k++ {
					do(sl.At(j).LogRecords().At(k).Attributes())
				}
			}
		}
	}
}

// TestTraceLinesCarried: what TraceLines does with carried lines a
// collector, an exporter's retry or a forger changed. An export is two
// payloads: the spans (the run's, the request's, its three attempts), the
// log record (RunFinished).
func TestTraceLinesCarried(t *testing.T) {
	isType := func(typ string) func(string) bool {
		return func(l string) bool { return strings.Contains(l, `"type":"`+typ+`"`) }
	}
	for _, tc := range []struct {
		name                             string
		twice                            bool            // the export received twice
		edit                             func([]Payload) // applied to the (first) export
		edit2                            func([]Payload) // applied to the second
		lines, items, mapped, dups, reqs int             // reqs: requests the mappings read in Rest
		retries                          int             // of those requests
		problems                         []string
	}{
		{name: "intact", lines: 4, items: 6},
		{name: "stripped (an attribute filter)", items: 1, mapped: 5, reqs: 1, retries: 2,
			edit: func(ps []Payload) {
				eachCarrier(ps, func(a pcommon.Map, _ string) { a.Remove(AttrEvent); a.Remove(AttrSeq) })
			}},
		{name: "received twice", twice: true, lines: 4, items: 12, dups: 4},
		{name: "received twice, one line changed", twice: true, lines: 4, items: 12, dups: 3,
			edit2: func(ps []Payload) {
				eachCarrier(ps, func(a pcommon.Map, l string) {
					if isType("RunFinished")(l) {
						a.PutStr(AttrEvent, strings.Replace(l, "3600", "9", 1))
					}
				})
			},
			problems: []string{`3: log record 1 "RunFinished": retrylab.seq 3 of run "e" carried again with another line (the first kept, this one not read)`}},
		{name: "a line repeated with newlines", lines: 1, items: 2, mapped: 4, reqs: 1, retries: 2,
			edit: func(ps []Payload) {
				eachCarrier(ps, func(a pcommon.Map, l string) {
					if isType("ProviderRequestFinished")(l) {
						a.PutStr(AttrEvent, strings.Repeat(l+"\n", 1000))
					}
				})
			},
			problems: []string{`0: span 50201b2bebbcf7c6 "chat m": retrylab.event holds more than one line (1000 line breaks): a trace v1 line is one (not read; the span read by the mappings)`}},
		{name: "not one JSON object", lines: 3, items: 6,
			edit: func(ps []Payload) {
				eachCarrier(ps, func(a pcommon.Map, l string) {
					if isType("RunFinished")(l) {
						a.PutStr(AttrEvent, "}{ bogus \x1b[31m")
					}
				})
			},
			problems: []string{`1: log record 1 "RunFinished": retrylab.event is not a trace v1 line: not a JSON object (not read)`}},
		{name: "two objects on one line", lines: 3, items: 6,
			edit: func(ps []Payload) {
				eachCarrier(ps, func(a pcommon.Map, l string) {
					if isType("RunFinished")(l) {
						a.PutStr(AttrEvent, l+l)
					}
				})
			},
			problems: []string{`1: log record 1 "RunFinished": retrylab.event is not a trace v1 line: trailing data after the JSON object (not read)`}},
		{name: "nested too deep (valid JSON)", lines: 3, items: 6, // hostile report 3, item 8
			edit: func(ps []Payload) {
				eachCarrier(ps, func(a pcommon.Map, l string) {
					if isType("RunFinished")(l) {
						a.PutStr(AttrEvent, `{"type":"RunFinished","payload":`+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+`}`)
					}
				})
			},
			problems: []string{`1: log record 1 "RunFinished": retrylab.event is not a trace v1 line: nested deeper than 512 levels`}},
		{name: "not a string", lines: 3, items: 6,
			edit: func(ps []Payload) {
				eachCarrier(ps, func(a pcommon.Map, l string) {
					if isType("RunFinished")(l) {
						a.PutInt(AttrEvent, 7)
					}
				})
			},
			problems: []string{`1: log record 1 "RunFinished": retrylab.event is int, not a string (not read)`}},
		{name: "not a trace v1 event", lines: 3, items: 6,
			edit: func(ps []Payload) {
				eachCarrier(ps, func(a pcommon.Map, l string) {
					if strings.Contains(l, `"status":429`) {
						a.PutStr(AttrEvent, `{"v":1,"type":7}`)
					}
				})
			},
			problems: []string{`0: span 50201b2bebbcf7c8 "POST": retrylab.event is not a trace v1 line: `}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := exportJSON(t, "e", readLines(t, carriedTrace), 0)
			if tc.edit != nil {
				tc.edit(ps)
			}
			if tc.twice {
				ps2 := exportJSON(t, "e", readLines(t, carriedTrace), 0)
				if tc.edit2 != nil {
					tc.edit2(ps2)
				}
				ps = append(ps, ps2...)
			}
			c := TraceLines(ps)
			acc := Read(Collect(c.Rest))
			retries := 0
			for _, r := range acc.Requests {
				retries += len(r.Attempts) - 1
			}
			got := fmt.Sprintf("lines %d, items %d, mapped %d, dups %d, requests %d, retries %d", len(c.Lines), c.Items, c.Mapped, c.Dups, len(acc.Requests), retries)
			want := fmt.Sprintf("lines %d, items %d, mapped %d, dups %d, requests %d, retries %d", tc.lines, tc.items, tc.mapped, tc.dups, tc.reqs, tc.retries)
			if got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			var gotP []string
			for _, p := range c.Problems {
				gotP = append(gotP, fmt.Sprintf("%d: %s", p.Payload, p))
			}
			if len(gotP) != len(tc.problems) {
				t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(gotP, "\n"), strings.Join(tc.problems, "\n"))
			}
			for i, w := range tc.problems {
				if !strings.HasPrefix(gotP[i], w) {
					t.Errorf("problem %d:\n got %s\nwant %s…", i, gotP[i], w)
				}
			}
		})
	}
}

// FuzzTraceLines: whatever a span's retrylab.event and retrylab.seq hold,
// TraceLines reads at most one line of it, a line without a line break,
// and never panics.
func FuzzTraceLines(f *testing.F) {
	f.Add(`{"v":1,"type":"RunFinished","payload":{}}`, int64(4), true)
	f.Add("{\"v\":1,\"type\":\"X\"}\n{\"v\":1,\"type\":\"X\"}", int64(0), false)
	f.Add("}{ bogus \x1b[31m", int64(-1), true)
	f.Add(`{"v":1,"ts":"2026-11-21T10:00:00Z","type":"RetryAttempt","payload":{"status":503}}`, int64(1), false)
	f.Add(`{"type":"X","payload":`+strings.Repeat("[", 600)+strings.Repeat("]", 600)+`}`, int64(2), false) // nested too deep
	f.Fuzz(func(t *testing.T, event string, seq int64, twice bool) {
		ps := exportJSON(t, "e", readLines(t, carriedTrace), 0)
		if twice {
			ps = append(ps, exportJSON(t, "e", readLines(t, carriedTrace), 0)...)
		}
		carriers := 0
		eachCarrier(ps, func(a pcommon.Map, l string) {
			carriers++
			if isRunFinished := strings.Contains(l, `"RunFinished"`); isRunFinished || carriers == 2 {
				a.PutStr(AttrEvent, event)
				a.PutInt(AttrSeq, seq)
			}
		})
		c := TraceLines(ps)
		if len(c.Lines) > carriers {
			t.Fatalf("%d lines from %d carriers", len(c.Lines), carriers)
		}
		for _, l := range c.Lines {
			if bytes.ContainsAny(l, "\n\r") {
				t.Fatalf("a line with a line break: %q", l)
			}
		}
	})
}
