package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"testing"
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
