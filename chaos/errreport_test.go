package chaos

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/trace"
)

func errorReportEvent(t *testing.T, p trace.ErrorReport) trace.Event {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return trace.Event{V: 1, Type: trace.TypeErrorReport, Payload: b}
}

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

// TestErrorReportsScrubbedAndWritten: a key the client sent that looks like
// no key is scrubbed from the result's reports as from every run file, and
// report.txt replaces a link a client planted at its place, never
// following it.
func TestErrorReportsScrubbedAndWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, reportFile)); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	sec := newSecrets()
	sec.add("hidden-key-value-123456")
	res := Result{Name: "s", Dir: dir, ErrorReports: []trace.ErrorReport{{Category: "non-retryable", FailureType: "auth_invalid",
		Message: "your key hidden-key-value-123456 is wrong", Tags: []string{"unrecoverable"},
		Step:    map[string]string{"plan": "hidden-key-value-123456"},
		Actions: []trace.ReportAction{{Priority: "critical", Text: "Fix API credentials", Command: "login hidden-key-value-123456"}}}}}
	sec.scrubResult(&res)
	(&Runner{}).writeErrorReports("s", dir, &res)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hidden-key") {
		t.Errorf("the key is in the result: %s", b)
	}
	txt, err := os.ReadFile(filepath.Join(dir, reportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(txt), "UNRECOVERABLE ERROR") || !strings.Contains(string(txt), "Fix API credentials") || strings.Contains(string(txt), "hidden-key") {
		t.Errorf("report.txt:\n%s", txt)
	}
	if fi, err := os.Lstat(filepath.Join(dir, reportFile)); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("report.txt is not a regular file: %v %v", fi, err)
	}
	if mine, _ := os.ReadFile(outside); string(mine) != "mine\n" {
		t.Errorf("the link's target was written: %q", mine)
	}
}
