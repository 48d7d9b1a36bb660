//go:build unix

package main

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAppendStepSummaryFIFO: a FIFO named as the summary (no reader) is a
// warning, not a command blocked for ever.
func TestAppendStepSummaryFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	t.Setenv("GITHUB_STEP_SUMMARY", path)
	var stderr bytes.Buffer
	appendStepSummary(&stderr, func(w io.Writer) error { _, err := io.WriteString(w, "x\n"); return err })
	if !strings.Contains(stderr.String(), "not a regular file") {
		t.Fatalf("stderr: %q", stderr.String())
	}
}
