package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/retrylab/retrylab/report/internal/golden"
	"github.com/retrylab/retrylab/trace"
)

// TestExportFailuresGolden: every RetryAttempt of a trace is one row, in
// both formats; a malformed line is reported and skipped; wrong types leave
// their field empty; keys are redacted; CSV cells are safe to open in a
// spreadsheet.
func TestExportFailuresGolden(t *testing.T) {
	t.Parallel()
	in := filepath.Join("testdata", "failures", "trace.jsonl")
	for _, format := range FailureFormats {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			var bad []string
			n, err := ExportFailures(context.Background(), []string{in}, format, &out, false, func(le *trace.LineError) { bad = append(bad, le.Error()) })
			if err != nil {
				t.Fatal(err)
			}
			if n != 4 || len(bad) != 1 || !strings.Contains(bad[0], "trace.jsonl:6") {
				t.Errorf("rows %d, malformed %q: want 4 rows and line 6 reported", n, bad)
			}
			golden.Check(t, filepath.Join("failures", "want."+format), out.Bytes())
			if strings.Contains(out.String(), "AAAAAAAAAAAAAAAA") {
				t.Errorf("a key reached the %s output:\n%s", format, out.String())
			}
		})
	}
	t.Run("strict", func(t *testing.T) {
		var out bytes.Buffer
		n, err := ExportFailures(context.Background(), []string{in}, "csv", &out, true, nil)
		var le *trace.LineError
		if !asLineError(err, &le) || le.Line != 6 || n != 3 {
			t.Errorf("strict: %d rows, %v; want the 3 rows before line 6, then its error", n, err)
		}
	})
}

func asLineError(err error, le **trace.LineError) bool {
	for err != nil {
		if e, ok := err.(*trace.LineError); ok {
			*le = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// FuzzExportFailures: whatever a trace line holds, the CSV parses back
// into rows of FailureColumns cells with no control character and no cell a
// spreadsheet would run, and every JSONL line is a JSON object.
func FuzzExportFailures(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "failures", "trace.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f.Add(line)
	}
	f.Add(`{"type":"RetryAttempt","runId":"\u2028x","payload":{"model":"@SUM(1)","errorMessage":"\t=1","tags":["+1","a\u0000b"]}}`)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, line string) {
		path := filepath.Join(dir, "t.jsonl")
		if err := os.WriteFile(path, []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var c, j bytes.Buffer
		if _, err := ExportFailures(context.Background(), []string{path}, "csv", &c, false, nil); err != nil {
			// A line that starts with gzip's magic bytes makes the file a
			// (corrupt) gzip stream: an error that says so, not a row.
			var pe *trace.PathError
			if strings.HasPrefix(line, "\x1f\x8b") && errors.As(err, &pe) && strings.Contains(pe.Error(), "gzip") {
				return
			}
			t.Fatal(err)
		}
		if _, err := ExportFailures(context.Background(), []string{path}, "jsonl", &j, false, nil); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&c).ReadAll()
		if err != nil {
			t.Fatalf("CSV does not parse: %v\n%q", err, c.String())
		}
		for _, rec := range recs {
			if len(rec) != len(FailureColumns) {
				t.Fatalf("a row of %d cells, want %d: %q", len(rec), len(FailureColumns), rec)
			}
			for _, cellText := range rec {
				if strings.IndexFunc(cellText, unicode.IsControl) >= 0 {
					t.Errorf("control character in a cell: %q", cellText)
				}
				if cellText != "" && strings.ContainsRune("=+@", rune(cellText[0])) {
					t.Errorf("a cell a spreadsheet would run: %q", cellText)
				}
			}
		}
		for _, l := range bytes.Split(bytes.TrimSpace(j.Bytes()), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(l, &m); err != nil {
				t.Errorf("JSONL line does not parse: %v: %q", err, l)
			}
		}
	})
}

// BenchmarkExportFailures: rows stream; allocations per event stay flat.
func BenchmarkExportFailures(b *testing.B) {
	var buf bytes.Buffer
	line := `{"v":1,"ts":"2026-11-20T10:00:00.5Z","type":"RetryAttempt","runId":"r1","payload":{"provider":"anthropic","model":"claude-haiku-4-5","attempt":1,"maxAttempts":4,"failureType":"rate_limit","status":429,"errorMessage":"Number of requests has exceeded your rate limit","willRetry":true,"delayMs":2000,"delaySource":"retry-after","requestId":"req_1"}}` + "\n"
	for range 10000 {
		buf.WriteString(line)
	}
	path := filepath.Join(b.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ExportFailures(context.Background(), []string{path}, "csv", discard{}, false, nil); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
