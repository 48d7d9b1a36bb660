package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReaderGzipBombBounded is a regression test: a small .gz of zeros
// without a newline (one giant line) was buffered whole (a 4.5 MB .gz of
// 1 GB zeros took 3.5 GB). It is now decompressed as a stream and the line
// (not JSON) skipped without being kept.
func TestReaderGzipBombBounded(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range 32 {
		zw.Write(zeros)
	}
	io.WriteString(zw, "\n{\"type\":\"After\"}\n")
	zw.Close()
	rd, err := NewReader(&buf, "bomb.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	_, err = rd.Next()
	var le *LineError
	if !errors.As(err, &le) || le.Line != 1 || le.Reason != "not a JSON object" {
		t.Fatalf("first Next = %v, want line 1: not a JSON object", err)
	}
	if c := cap(rd.long); c > 2*MaxLineBytes {
		t.Errorf("the reader kept %d bytes of the long line, want at most about MaxLineBytes", c)
	}
	ev, err := rd.Next()
	if err != nil || ev.Type != "After" || ev.Line != 2 {
		t.Fatalf("second Next = %+v, %v; want After on line 2", ev, err)
	}
}

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
	_, err := Analyze(context.Background(), []string{path}, Options{})
	var pe *PathError
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "cut short") {
		t.Fatalf("Analyze = %v, want a PathError saying the gzip stream is cut short", err)
	}
}

// analyzeCanceled runs Analyze, cancels its context once reading (the
// caller's reading, when not nil, returns when the read is underway and
// blocked) and returns Analyze's error; the guard only catches a hang.
func analyzeCanceled(t *testing.T, files []string, opts Options, reading func()) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Analyze(ctx, files, opts)
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
		t.Fatal("Analyze did not return after its context was cancelled")
		return nil
	}
}

// TestAnalyzeCancelNeverWritingPipe is a regression test: Analyze blocked
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
	err = analyzeCanceled(t, []string{StdinName}, Options{Stdin: stdin}, func() { <-began })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Analyze = %v, want an error wrapping context.Canceled", err)
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
	_, err := Analyze(ctx, []string{StdinName}, Options{Stdin: src})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Analyze = %v, want an error wrapping context.Canceled", err)
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }
