package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/runfolder"
)

// TestChaosOutputsAfterFailedWrite: when --junit cannot be written at the
// end (a full disk; here a file open for reading only), the report is
// still printed, the run folder's junit.xml still written, and the error
// returned names --junit. (chaos_hostile_outputs.txtar made the failure
// with /dev/full, which --junit now refuses before the run.)
func TestChaosOutputsAfterFailedWrite(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "ci.xml")
	if err := os.WriteFile(junit, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ro, err := os.Open(junit) // every write fails
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	sum := &chaos.Summary{RunDir: dir, Scenarios: []chaos.Result{{Name: "quick", File: "quick.yaml", Verdict: chaos.VerdictPass, Passed: true}}}
	sum.Finish()
	cfg := chaosRunConfig{format: "table", junit: junit}
	var stdout, stderr bytes.Buffer
	errs := writeChaosOutputs(cfg, sum, ro, &stdout, &stderr)
	var oe *runfolder.OutputError
	if err := errors.Join(errs...); !errors.As(err, &oe) || oe.What != "--junit" {
		t.Errorf("errors = %v, want an OutputError for --junit", err)
	}
	if !strings.Contains(stdout.String(), "1 passed, 0 failed") {
		t.Errorf("the report was not printed:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "junit.xml")); err != nil {
		t.Errorf("the run folder's junit.xml: %v", err)
	}
}
