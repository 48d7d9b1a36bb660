package verify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/trace"
)

// TestObservedErrorReports: the client's ErrorReport events are kept from
// its trace, at most maxErrorReports of them (the rest counted), each made
// safe to show; a payload of the wrong shape is ignored.
func TestObservedErrorReports(t *testing.T) {
	t.Parallel()
	hostile := trace.ErrorReport{Category: "non-retryable", FailureType: "quota\x1b[31m", Message: "a\rb sk-ant-api03-SECRETSECRETSECRET" + strings.Repeat("x", 1<<20),
		Actions: make([]trace.ReportAction, 500)}
	evs := []trace.Event{{V: 1, Type: trace.TypeErrorReport, Payload: json.RawMessage(`{"status":"not a number"}`)},
		errorReportEvent(t, hostile)}
	for range maxErrorReports + 2 {
		evs = append(evs, errorReportEvent(t, trace.ErrorReport{Category: "retryable", FailureType: "overloaded"}))
	}
	var ob Observed
	ob.addTrace(evs)
	if len(ob.ErrorReports) != maxErrorReports || ob.ErrorReportsOmitted != 3 {
		t.Fatalf("kept %d, omitted %d; want %d kept, 3 omitted", len(ob.ErrorReports), ob.ErrorReportsOmitted, maxErrorReports)
	}
	got := ob.ErrorReports[0]
	if got.FailureType != "quota[31m" || strings.ContainsAny(got.Message, "\r\x1b") || strings.Contains(got.Message, "SECRET") ||
		len(got.Message) > 4<<10 || len(got.Actions) > 10 {
		t.Errorf("hostile report kept as %q / %q..., %d actions", got.FailureType, got.Message[:min(len(got.Message), 60)], len(got.Actions))
	}
	if len(got.Tags) != 1 || got.Tags[0] != "unrecoverable" {
		t.Errorf("tags %q, want unrecoverable (its category is non-retryable)", got.Tags)
	}
}

func errorReportEvent(t *testing.T, p trace.ErrorReport) trace.Event {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return trace.Event{V: 1, Type: trace.TypeErrorReport, Payload: b}
}
