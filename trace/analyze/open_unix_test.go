//go:build unix

package analyze

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
// command line blocked Run past any cancel, in open(2) while no one
// opened it for writing, then in read(2) while the writer wrote nothing.
// The context is cancelled once Run has the FIFO open and is reading.
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
		t.Error("Run never opened the FIFO")
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want an error wrapping context.Canceled", err)
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
		t.Fatalf("Run = %v, want an error wrapping context.Canceled", err)
	}
}

// TestLoadAlertsCancelNamedFIFO: an alerts FIFO (bash's <(...)) whose
// writer never writes does not keep LoadAlertsContext from returning once
// its context is cancelled.
func TestLoadAlertsCancelNamedFIFO(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "alerts.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	// O_RDWR holds the FIFO open for writing without waiting for a reader.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := LoadAlertsContext(ctx, fifo)
		done <- err
	}()
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

// TestLoadAlertsNotRegular: an alerts FIFO nothing writes to (issue 18:
// it hung), a link to one, a device and a folder are each an error at
// once, naming the file, with a hint; a FIFO with a writer is read.
func TestLoadAlertsNotRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "alerts.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, fifo + ": is a FIFO (named pipe) that nothing writes to: not read"},
		{link, link + ": is a FIFO (named pipe) that nothing writes to: not read"},
		{"/dev/zero", "/dev/zero: is a character device, not a regular file: not read"},
		{dir, dir + ": is a folder, not an alerts file"},
	} {
		if _, err := os.Stat(tc.path); err != nil {
			continue
		}
		done := make(chan error, 1)
		go func() {
			_, err := LoadAlertsContext(context.Background(), tc.path)
			done <- err
		}()
		select {
		case err := <-done:
			var ae *AlertError
			if !errors.As(err, &ae) || err.Error() != tc.want || ae.Hint() == "" {
				t.Errorf("LoadAlertsContext(%s) = %v, want %q with a hint", tc.path, err, tc.want)
			}
		case <-time.After(10 * time.Second): // a hang detector, not a measure
			t.Fatalf("LoadAlertsContext(%s) blocked", tc.path)
		}
	}
	// With a writer that has written and gone, as bash's <(echo ...), the
	// FIFO is read. (r0 keeps the FIFO, and so its data, alive.)
	r0, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r0.Close()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("alerts:\n  - metric: provider_retry_rate\n    op: \">\"\n    threshold: 0.2\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan error, 1)
	go func() {
		als, err := LoadAlertsContext(context.Background(), link)
		if err == nil && len(als) != 1 {
			err = errors.New("not the one alert written")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("LoadAlertsContext of a FIFO with a writer: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("LoadAlertsContext of a FIFO with a writer blocked")
	}
}
