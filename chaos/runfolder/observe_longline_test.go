package runfolder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/trace"
)

// TestReadTraceLongLine (issue 18): a client's RetryAttempt with a 2 MiB
// errorMessage is an event for the checks, as for trace analyze, not a
// malformed line.
func TestReadTraceLongLine(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "trace.jsonl")
	line := `{"type":"RetryAttempt","payload":{"attempt":1,"failureType":"rate_limit","status":429,"errorMessage":"` +
		strings.Repeat("x", 2<<20) + `","willRetry":true,"delayMs":2000}}` + "\n"
	if err := os.WriteFile(p, []byte(line+`{"type":"ProviderRequestFinished","payload":{"success":true,"retries":1}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, notes, err := ReadTrace(p)
	if err != nil || len(notes) > 0 || len(evs) != 2 {
		t.Fatalf("readTrace = %d events, notes %q, %v; want 2 events", len(evs), notes, err)
	}
	var ra trace.RetryAttempt
	if err := evs[0].Decode(&ra); err != nil || ra.FailureType != "rate_limit" || ra.Status != 429 || ra.DelayMs != 2000 || !strings.HasPrefix(ra.ErrorMessage, "xxx") {
		t.Errorf("RetryAttempt = %+v (message %d bytes), %v", ra, len(ra.ErrorMessage), err)
	}
}
