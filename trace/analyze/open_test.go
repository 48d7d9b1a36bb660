package analyze

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"github.com/retrylab/retrylab/trace"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrylab/retrylab/trace/internal/tracetest"
)

// TestReaderTruncatedGzipClearError: a .gz cut short says so.
func TestReaderTruncatedGzipClearError(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for range 1000 {
		io.WriteString(zw, "{\"type\":\"A\",\"payload\":{\"n\":12345}}\n")
	}
	zw.Close()
	path := t.TempDir() + "/cut.jsonl.gz"
	if err := os.WriteFile(path, buf.Bytes()[:buf.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), []string{path}, Options{})
	var pe *trace.PathError
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "cut short") {
		t.Fatalf("Run = %v, want a PathError saying the gzip stream is cut short", err)
	}
}

// analyzeCanceled runs Run, cancels its context once reading (the
// caller's reading, when not nil, returns when the read is underway and
// blocked) and returns Run's error; the guard only catches a hang.
func analyzeCanceled(t *testing.T, files []string, opts Options, reading func()) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, files, opts)
		done <- err
	}()
	if reading != nil {
		reading()
	}
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
		return nil
	}
}

// TestAnalyzeCancelNeverWritingPipe is a regression test: Run blocked
// for ever reading a pipe that nobody writes to, whatever its context said.
// The context is cancelled once the read of the pipe has begun.
func TestAnalyzeCancelNeverWritingPipe(t *testing.T) {
	t.Parallel()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pw.Close(); pr.Close() })
	began := make(chan struct{})
	var once sync.Once
	stdin := readFunc(func(p []byte) (int, error) {
		once.Do(func() { close(began) })
		return pr.Read(p) // blocks: nothing is ever written
	})
	err = analyzeCanceled(t, []string{trace.StdinName}, Options{Stdin: stdin}, func() { <-began })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want an error wrapping context.Canceled", err)
	}
}

// endless is an input that never ends and holds no newline, like /dev/zero.
type endless struct{}

func (endless) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestAnalyzeCancelEndlessInput is a regression test: on a line-less
// endless input (/dev/zero) no line ever completed, so the check of the
// context every 65536 lines never came, and memory grew without bound.
func TestAnalyzeCancelEndlessInput(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	// Cancel once 64 MiB have been read: far past the line limit.
	src := readFunc(func(p []byte) (int, error) {
		if n += len(p); n > 64<<20 {
			cancel()
		}
		return endless{}.Read(p)
	})
	_, err := Run(ctx, []string{trace.StdinName}, Options{Stdin: src})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want an error wrapping context.Canceled", err)
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// TestReaderGzipTrailingDataClearError is a regression test: data after
// the last gzip member was reported as "the gzip stream is cut short" (a
// few bytes) or "invalid header" (more); it is now named for what it is,
// and a second member cut short is still "cut short".
func TestReaderGzipTrailingDataClearError(t *testing.T) {
	t.Parallel()
	member := tracetest.Gzipped(t, "{\"type\":\"A\"}\n")
	tests := []struct {
		name   string
		tail   []byte
		reason string
	}{
		{"short garbage", []byte("garbage\n"), "data that is not gzip after the end of the gzip stream (after 1 complete member(s))"},
		{"long garbage", bytes.Repeat([]byte("x"), 5000), "data that is not gzip after the end"},
		{"zero padding", make([]byte, 4096), "data that is not gzip after the end"},
		{"one stray byte", []byte{0x1f}, "data that is not gzip after the end"},
		{"second member header cut short", []byte{0x1f, 0x8b, 8}, "cut short"},
		{"second member cut short", tracetest.Gzipped(t, strings.Repeat("{\"type\":\"B\"}\n", 100))[:30], "cut short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl.gz")
			if err := os.WriteFile(path, append(append([]byte(nil), member...), tt.tail...), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Run(context.Background(), []string{path}, Options{})
			var pe *trace.PathError
			if !errors.As(err, &pe) || !strings.Contains(pe.Reason, tt.reason) || pe.Hint() == "" {
				t.Fatalf("Run = %v, want a PathError with a hint, saying %q", err, tt.reason)
			}
		})
	}
}
