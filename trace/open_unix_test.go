//go:build unix

package trace

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/retrylab/retrylab/internal/regfile"
)

// TestOpenNeverBlocks: Open (without a context) of a FIFO nothing writes
// to blocked for ever in open(2); now it is an error wrapping
// regfile.ErrNoWriter at once. A FIFO with a writer (bash's <(...)) is
// read; a device and a folder are refused unopened. The 10 s limit only
// detects a hang.
func TestOpenNeverBlocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	prompt := func(f func() error) error {
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Open blocked")
			return nil
		}
	}
	open := func(path string) func() error {
		return func() error {
			r, err := Open(path)
			if err == nil {
				r.Close()
			}
			return err
		}
	}
	if err := prompt(open(fifo)); !errors.Is(err, regfile.ErrNoWriter) {
		t.Errorf("Open(a FIFO nothing writes to) = %v, want regfile.ErrNoWriter", err)
	}
	var nr *regfile.NotRegularError
	for _, path := range []string{"/dev/zero", dir} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if err := prompt(open(path)); !errors.As(err, &nr) {
			t.Errorf("Open(%s) = %v, want a *regfile.NotRegularError", path, err)
		}
	}
	// A writer holds it open (O_RDWR does not wait for a reader) and writes
	// one event: it is read.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString(`{"type":"RunStarted","payload":{}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	var r *Reader
	if err := prompt(func() (err error) { r, err = Open(fifo); return err }); err != nil {
		t.Fatalf("Open(a FIFO with a writer) = %v", err)
	}
	defer r.Close()
	w.Close()
	var ev *RawEvent
	if err := prompt(func() (err error) { ev, err = r.Next(); return err }); err != nil || ev.Type != "RunStarted" {
		t.Errorf("Next() = %q, %v; want the writer's RunStarted", ev.Type, err)
	}
}
