package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/report"
	"github.com/retrylab/retrylab/trace"
)

const failuresUsage = `Usage: retrylab trace failures [flags] [PATH...]

Exports every failed attempt (every RetryAttempt event) of run folders, trace
files (*.jsonl, *.jsonl.gz), globs, or - for stdin, one row each, for a
spreadsheet or a database. Paths are found as 'retrylab trace analyze' finds
them; without PATH, runs/ is read. Rows stream: memory stays small whatever
the input.

Columns (CSV header; the same keys in JSONL):
  run time provider model attempt failureType status message willRetry
  waitMs delaySource requestId promptPattern tags file line
time is RFC 3339 UTC with milliseconds; waitMs is the wait before the next
attempt, empty (null) when none followed; tags are joined with ';' in CSV.
Keys are redacted; in CSV, control characters are written as \xNN and a
cell starting with = + - or @ gets a leading ' so that no spreadsheet runs
it as a formula.

Flags:
%s
Example:
  retrylab trace failures runs/ > failures.csv
  retrylab trace failures --format jsonl runs/ | jq -r .message | sort | uniq -c

Exit codes: 0 written (also when there was nothing to export), 2 bad usage or
bad input (missing path, unreadable file, malformed line with --strict).
`

func traceFailures(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trace failures", failuresUsage)
	format := fs.String("format", "csv", "output format: "+failureFormats.help())
	out := fs.StringP("output", "o", "", "write to this `FILE` instead of stdout")
	strict := fs.Bool("strict", false, "treat a malformed line as an error (exit 2)")
	if err := parseFlags(fs, args, "run 'retrylab trace failures --help'", stdout, stderr); err != nil {
		return err
	}
	if _, err := failureFormats.pick(*format); err != nil {
		return err
	}
	paths, err := pathsOrRuns(fs.Args(), "failures")
	if err != nil {
		return err
	}
	files, err := discoverTraces(ctx, paths, stderr)
	if err != nil {
		return err
	}
	w := stdout
	if *out != "" {
		if in := sameFileAs(*out, files); in != "" {
			return usageErrorf("write to another file: -o would empty the trace before it is read", "-o %s is the input %s", printable(*out), printable(in))
		}
		// A FIFO, a device or a folder at -o is refused at once: opening
		// a FIFO for writing waited for a reader.
		f, err := runfolder.CreateOutFile("-o", *out)
		if err != nil {
			return printableError{err}
		}
		defer f.Close()
		w = f
	}
	var malformed int
	rows, err := report.ExportFailures(ctx, files, *format, w, *strict, func(le *trace.LineError) {
		malformed++
		fmt.Fprintf(stderr, "%s\n", printable(le.Error()))
	})
	if err != nil {
		return readTracesError(fmt.Errorf("after %d row(s): %w", rows, err), "fix or remove that line, or drop --strict to skip malformed lines")
	}
	if *out != "" {
		if err := w.(*os.File).Close(); err != nil {
			return fmt.Errorf("writing %s: %w", printable(*out), err)
		}
	}
	note := fmt.Sprintf("%d failed attempt(s) from %d file(s)", rows, len(files))
	if malformed > 0 {
		note += fmt.Sprintf("; %d malformed line(s) skipped", malformed)
	}
	if *out != "" || rows == 0 {
		fmt.Fprintln(stderr, strings.TrimSpace(note))
	}
	return nil
}

// sameFileAs returns the first of files that is out itself (a hard link or
// another name for it included), "" when none is or out does not exist.
func sameFileAs(out string, files []string) string {
	oi, err := os.Stat(out)
	if err != nil {
		return ""
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && os.SameFile(oi, fi) {
			return f
		}
	}
	return ""
}

// failureFormats are trace failures' output formats.
var failureFormats = namesOnly(report.FailureFormats...)
