package chaos

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/trace"
)

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
	sec := redact.NewSecrets()
	sec.Add("hidden-key-value-123456")
	res := Result{Name: "s", Dir: dir, ErrorReports: []trace.ErrorReport{{Category: "non-retryable", FailureType: "auth_invalid",
		Message: "your key hidden-key-value-123456 is wrong", Tags: []string{"unrecoverable"},
		Step:    map[string]string{"plan": "hidden-key-value-123456"},
		Actions: []trace.ReportAction{{Priority: "critical", Text: "Fix API credentials", Command: "login hidden-key-value-123456"}}}}}
	scrubResult(sec, &res)
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
