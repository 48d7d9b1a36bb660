//go:build unix

package trace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestAnalyzeCancelNamedFIFO is a regression test: a FIFO named on the
// command line blocked Analyze past any cancel, in open(2) while no one
// opened it for writing, then in read(2) while the writer wrote nothing.
// The context is cancelled once Analyze has the FIFO open and is reading.
func TestAnalyzeCancelNamedFIFO(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "never.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	var w *os.File
	t.Cleanup(func() {
		if w != nil {
			w.Close()
		}
	})
	err := analyzeCanceled(t, []string{fifo}, Options{}, func() {
		// A non-blocking open for writing fails (ENXIO) until a reader
		// has the FIFO open; the writer then never writes.
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w = f
				return
			}
		}
		t.Error("Analyze never opened the FIFO")
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Analyze = %v, want an error wrapping context.Canceled", err)
	}
}

// TestAnalyzeCancelDevZero: /dev/zero named explicitly is read (no line
// ever ends) until the context is cancelled; on Linux the cancel comes once
// the process holds /dev/zero open.
func TestAnalyzeCancelDevZero(t *testing.T) {
	t.Parallel()
	err := analyzeCanceled(t, []string{"/dev/zero"}, Options{}, func() {
		if runtime.GOOS != "linux" {
			return
		}
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			fds, _ := os.ReadDir("/proc/self/fd")
			for _, fd := range fds {
				if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); l == "/dev/zero" {
					return
				}
			}
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Analyze = %v, want an error wrapping context.Canceled", err)
	}
}

// TestLoadAlertsCancelNamedFIFO: an alerts FIFO (bash's <(...)) that its
// writer never writes to does not keep LoadAlertsContext from returning
// once its context is cancelled.
func TestLoadAlertsCancelNamedFIFO(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "alerts.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := LoadAlertsContext(ctx, fifo)
		done <- err
	}()
	var w *os.File
	for deadline := time.Now().Add(20 * time.Second); w == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		w, _ = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	}
	if w == nil {
		t.Fatal("LoadAlertsContext never opened the FIFO")
	}
	defer w.Close()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("LoadAlertsContext = %v, want an error wrapping context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("LoadAlertsContext did not return after its context was cancelled")
	}
}
