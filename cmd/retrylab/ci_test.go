package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/verify"
)

func TestFitSummary(t *testing.T) {
	line := strings.Repeat("é", 40) + "\n" // 81 bytes, two-byte runes
	md := []byte("<details open><summary>x</summary>\n\n" + strings.Repeat(line, 1000))
	tests := []struct {
		name    string
		room    int64
		cut     bool
		nothing bool
	}{
		{"fits", int64(len(md)) + 1, false, false},
		{"cut", 4000, true, false},
		{"cut small", int64(len(summaryCutNote)) + 200, true, false},
		{"no room", 10, false, true},
		{"file full", -5, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fitSummary(md, tt.room)
			if int64(len(got)) > max(tt.room-1, 0) {
				t.Fatalf("%d bytes for room %d", len(got), tt.room)
			}
			if tt.nothing != (len(got) == 0) {
				t.Fatalf("got %d bytes", len(got))
			}
			if tt.cut != bytes.HasSuffix(got, []byte(summaryCutNote)) {
				t.Fatalf("cut note: %v, want %v", !tt.cut, tt.cut)
			}
			if !utf8.Valid(got) {
				t.Fatal("a character was split")
			}
			if tt.cut && bytes.Contains(got, []byte("<details")) && !bytes.Contains(got, []byte("</details>")) {
				t.Fatal("a <details> left open")
			}
		})
	}
}

func TestAppendStepSummaryBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.md")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), maxStepSummary-3000), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITHUB_STEP_SUMMARY", path)
	var stderr bytes.Buffer
	for range 3 { // the second and third find no room
		appendStepSummary(&stderr, func(w io.Writer) error {
			_, err := io.WriteString(w, strings.Repeat("| row |\n", 10000))
			return err
		})
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > maxStepSummary || !bytes.HasPrefix(data, bytes.Repeat([]byte("x"), 100)) || !bytes.HasSuffix(data, []byte(summaryCutNote)) {
		t.Fatalf("%d bytes, suffix %q", len(data), data[len(data)-100:])
	}
	// The first call fills the file; the next two find it full and say so.
	if n := strings.Count(stderr.String(), "not appended"); n != 2 {
		t.Fatalf("stderr: %s", stderr.String())
	}
}

func TestWriteAnnotations(t *testing.T) {
	sum := &chaos.Summary{Scenarios: []chaos.Result{
		{Name: "a,b:c", File: "s/a%b.yaml", Verdict: chaos.VerdictFail, Checks: []verify.Check{
			{Name: "outcome", State: verify.StateFail, Want: "failure", Got: "100%\nline2\r", Line: 7},
			{Name: "delays.server", State: verify.StateInconclusive, Want: "1s", Got: "1.3s", Line: 9, Hint: "lower --parallel"},
			{Name: "failureTypes", State: verify.StateUnverified, Want: "x", Got: "x"},
			{Name: "attempts", State: verify.StatePass, Passed: true},
		}},
		{Name: "err", File: "e.yaml", Verdict: chaos.VerdictError, Error: "proxy gone"},
	}}
	var b bytes.Buffer
	writeAnnotations(&b, sum)
	want := "::error file=s/a%25b.yaml,line=7,title=retrylab%3A a%2Cb%3Ac%3A outcome::outcome fail: want failure, got 100%25%0Aline2%0D\n" +
		"::warning file=s/a%25b.yaml,line=9,title=retrylab%3A a%2Cb%3Ac%3A delays.server::delays.server inconclusive: want 1s, got 1.3s; hint: lower --parallel\n" +
		"::error file=e.yaml,title=retrylab%3A err could not run::proxy gone\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteAnnotationsBounded(t *testing.T) {
	var r chaos.Result
	r.Name, r.File, r.Verdict = "many", "m.yaml", chaos.VerdictFail
	for range 200 {
		r.Checks = append(r.Checks, verify.Check{Name: "outcome", State: verify.StateFail, Line: 3})
	}
	var b bytes.Buffer
	writeAnnotations(&b, &chaos.Summary{Scenarios: []chaos.Result{r}})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != maxAnnotations+1 || !strings.Contains(lines[len(lines)-1], "150 more check(s)") {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
