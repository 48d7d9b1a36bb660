package analyze

import (
	"context"
	"encoding/json"
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/internal/jsonval"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/trace/internal/tracetest"
)

// traceAround is a small trace of every kind of event the analysis counts,
// with one RetryAttempt line given whole by the caller.
func traceAround(line ...any) tracetest.Lines {
	g := tracetest.Lines{
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
func attempt(msg ...any) tracetest.Lines {
	g := tracetest.Lines{`{"ts":"2026-11-21T10:00:03.000Z","type":"RetryAttempt","runId":"r1","payload":{"provider":"anthropic","model":"claude-haiku-4-5","attempt":2,"failureType":"rate_limit","status":429,"errorMessage":"`}
	g = append(g, msg...)
	return append(g, `","willRetry":true,"delayMs":4000,"delaySource":"retry-after"}}`+"\n")
}

func analyzeGen(t *testing.T, g tracetest.Lines, opts Options) (*Analysis, []string) {
	t.Helper()
	var bad []string
	opts.Stdin = g.Reader()
	opts.Malformed = func(le *trace.LineError) { bad = append(bad, le.Error()) }
	an, err := Run(context.Background(), []string{trace.StdinName}, opts)
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
	model := tracetest.Repeat("claude-\\u00e9\\ud83d\\ude00\\ud800\xff\xe2\x82\U0001F600-", 2*mib)
	prov := tracetest.Repeat("é\U0001F600", 2*mib) // runes split by the pieces
	short := attempt("rate limited")
	tests := []struct {
		name       string
		long, want tracetest.Lines
		by         []string
		skipShort  bool
	}{
		{"2 MiB errorMessage", traceAround(attempt(tracetest.Repeat("x", 2*mib))...), traceAround(short...), nil, false},
		{"64 MiB errorMessage", traceAround(attempt(tracetest.Repeat("rate limited ", 64*mib))...), traceAround(short...), nil, true},
		{"escapes straddling every buffer boundary", traceAround(attempt(tracetest.Repeat(`\u00e9\ud83d\ude00\"\\\n\t\u0041é\ud800x`, 3*mib))...),
			traceAround(short...), nil, false},
		{"long message at the very end of a file without a newline",
			tracetest.Lines(traceAround())[:2].Concat(attempt(tracetest.Repeat("y", 2*mib)).TrimNewline()),
			tracetest.Lines(traceAround())[:2].Concat(short.TrimNewline()), nil, false},
		{"CRLF", traceAround(attempt(tracetest.Repeat("z", 2*mib)).CRLF()...), traceAround(short...), nil, false},
		{"long model and provider, grouped by them", traceAround(tracetest.Lines{`{"type":"RetryAttempt","payload":{"model":"`, model, `","failureType":"timeout","errorMessage":"m","willRetry":false}}` + "\n",
			`{"type":"ProviderRequestFinished","payload":{"provider":"`, prov, `","model":"`, model, `","success":false,"retries":1,"durationMs":5}}` + "\n"}...),
			traceAround(`{"type":"RetryAttempt","payload":{"model":`+string(jsonval.AppendString(nil, trace.Label(model.Text())))+`,"failureType":"timeout","errorMessage":"m","willRetry":false}}`+"\n",
				`{"type":"ProviderRequestFinished","payload":{"provider":`+string(jsonval.AppendString(nil, trace.Label(prov.Text())))+`,"model":`+string(jsonval.AppendString(nil, trace.Label(model.Text())))+`,"success":false,"retries":1,"durationMs":5}}`+"\n"),
			[]string{"provider", "model"}, false},
		{"long runId and unknown type", traceAround(`{"type":"Custom`, tracetest.Repeat("T", 2*mib), `","runId":"`, tracetest.Repeat("r", 2*mib), `"}`+"\n"),
			traceAround(`{"type":` + string(jsonval.AppendString(nil, trace.Label("Custom"+strings.Repeat("T", 2*mib)))) + `,"runId":` + string(jsonval.AppendString(nil, trace.Label(strings.Repeat("r", 2*mib)))) + `}` + "\n"),
			[]string{"run"}, false},
		{"long unknown string before the known fields", traceAround(`{"type":"RetryAttempt","payload":{"debug":"`, tracetest.Repeat("d", 2*mib), `","failureType":"timeout","status":408,"errorMessage":"t","willRetry":true,"delayMs":700}}`+"\n"),
			traceAround(`{"type":"RetryAttempt","payload":{"failureType":"timeout","status":408,"errorMessage":"t","willRetry":true,"delayMs":700}}` + "\n"), nil, false},
		{"long array of objects before the known fields (past the budget)",
			traceAround(`{"type":"RetryAttempt","payload":{"history":[`, tracetest.Repeat(`{"a":[1,2,{"b":"c"}],"d":null},`, 3*mib), `{}],"failureType":"timeout","status":408,"errorMessage":"t","willRetry":true,"delayMs":700}}`+"\n"),
			traceAround(`{"type":"RetryAttempt","payload":{"failureType":"timeout","status":408,"errorMessage":"t","willRetry":true,"delayMs":700}}` + "\n"), nil, false},
		{"many unknown members, then known ones twice (the last counts)",
			traceAround(`{"type":"RetryAttempt","payload":{"status":500,`, tracetest.Repeat(`"k":{"x":"yyyyyyyy"},`, 4*mib), `"failureType":"server_error","status":503,"errorMessage":"t","willRetry":true,"delayMs":700,"delayMs":800}}`+"\n"),
			traceAround(`{"type":"RetryAttempt","payload":{"failureType":"server_error","status":503,"errorMessage":"t","willRetry":true,"delayMs":800}}` + "\n"), nil, false},
		{"long unknown top-level member and nested object", traceAround(`{"extra":{"a":{"b":[`, tracetest.Repeat(`"v",`, 2*mib), `"w"]}},"type":"RetryAttempt","payload":{"failureType":"timeout","errorMessage":"t","willRetry":false,"n":{"deep":"`, tracetest.Repeat("e", 2*mib), `"}}}`+"\n"),
			traceAround(`{"type":"RetryAttempt","payload":{"failureType":"timeout","errorMessage":"t","willRetry":false}}` + "\n"), nil, false},
		{"payload before type", traceAround(`{"payload":{"failureType":"timeout","errorMessage":"`, tracetest.Repeat("p", 2*mib), `","status":504},"type":"RetryAttempt"}`+"\n"),
			traceAround(`{"payload":{"failureType":"timeout","errorMessage":"p","status":504},"type":"RetryAttempt"}` + "\n"), nil, false},
		{"long number", traceAround(`{"type":"RetryAttempt","payload":{"failureType":"timeout","errorMessage":"t","willRetry":true,"delayMs":0000`, tracetest.Repeat("0", 2*mib), `1500.4e0,"pad":"`, tracetest.Repeat("q", mib), `"}}`+"\n"),
			traceAround(`{"type":"RetryAttempt","payload":{"failureType":"timeout","errorMessage":"t","willRetry":true,"delayMs":1500}}` + "\n"), nil, false},
		{"a line of 2 MiB of white space is blank", traceAround(tracetest.Repeat(" \t", 2*mib), "\n"), traceAround(), nil, false},
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
