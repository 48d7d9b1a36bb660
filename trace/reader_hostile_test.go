package trace

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/trace/internal/tracetest"
)

// TestReaderGzipMultiMember: a file of several gzip members (cat a.gz b.gz,
// as gzip -d reads it) is read whole, member after member, and empty
// members (thousands: bufio gives up after 100 empty reads) are no error.
func TestReaderGzipMultiMember(t *testing.T) {
	t.Parallel()
	var in []byte
	in = append(in, tracetest.Gzipped(t, "{\"type\":\"A\"}\n")...)
	for range 5000 {
		in = append(in, tracetest.Gzipped(t, "")...)
	}
	in = append(in, tracetest.Gzipped(t, "{\"type\":\"B\"}\n{\"type\":")...)
	in = append(in, tracetest.Gzipped(t, "\"C\"}\n")...) // a line across members
	got := readAll(t, bytes.NewReader(in))
	want := []readResult{{Line: 1, Type: "A"}, {Line: 2, Type: "B"}, {Line: 3, Type: "C"}}
	if len(got) != len(want) {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestReaderEmptyLinesCounted is a regression test of speed, checked by
// its result: runs of empty lines are skipped in one go (a gigabyte of
// newlines took 15 s), still counted for the line numbers, across buffer
// boundaries.
func TestReaderEmptyLinesCounted(t *testing.T) {
	t.Parallel()
	const n = 600_000 // more than two 256 KiB buffers
	in := strings.Repeat("\n", n) + `{"type":"A"}` + "\n\n\r\n" + `{"type":"B"}` + "\n" + strings.Repeat("\n", n) + `{"type":`
	got := readAll(t, strings.NewReader(in))
	want := []readResult{{Line: n + 1, Type: "A"}, {Line: n + 4, Type: "B"},
		{Line: 2*n + 5, Err: fmt.Sprintf("t.jsonl:%d: truncated last line (no newline at end of file): invalid JSON", 2*n+5)}}
	if len(got) != len(want) {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
