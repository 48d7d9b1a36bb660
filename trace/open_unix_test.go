//go:build unix

package trace

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// TestAnalyzeCancelNamedFIFO is a regression test: a FIFO named on the
// command line that no one opens for writing blocked Analyze in open(2),
// past any cancel.
func TestAnalyzeCancelNamedFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "never.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	err := analyzeCanceled(t, []string{fifo}, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Analyze = %v, want an error wrapping context.Canceled", err)
	}
}

// TestAnalyzeCancelDevZero: /dev/zero named explicitly is read (no line
// ever ends) until the context is cancelled.
func TestAnalyzeCancelDevZero(t *testing.T) {
	err := analyzeCanceled(t, []string{"/dev/zero"}, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Analyze = %v, want an error wrapping context.Canceled", err)
	}
}
