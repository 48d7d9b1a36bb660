package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/report"
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

const reportUsage = `Usage: retrylab report <html> [flags]

  html      one self-contained HTML page of chaos run folders and traces

Run 'retrylab report <command> --help' for its flags.

Example:
  retrylab report html runs/ -o report.html
`

const reportHTMLUsage = `Usage: retrylab report html [flags] PATH... -o FILE

Writes one self-contained HTML page (inline CSS and SVG, no network, no
script framework; it opens from disk) of the chaos run folders and traces
in PATH: summary cards (requests, retry and failure rates with their
intervals, escalations, alert states, scenario verdicts), charts (failures
by type and by status, the distribution of waits, rates per group with
interval whiskers, and per day) and, for every chaos scenario, a timeline of its
attempts: the fault each met, each wait to scale (observed on the server's
clock and recorded by the client), the policy's envelope shaded, checks that
did not pass with their want and got. Passing scenarios are collapsed;
at most 500 scenarios that did not pass and 500 that passed are drawn, the
rest counted. Run folders are found by their summary.json (or result.json);
traces as 'retrylab trace analyze' finds them, grouped by provider and model
with its default alerts.

Flags:
%s
Example:
  retrylab chaos run --out runs scenarios/
  retrylab report html runs/ -o report.html

Exit codes: 0 written, 2 bad usage or bad input (no -o, a missing path,
a damaged summary.json, nothing to report).
`

func reportHTML(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report html", reportHTMLUsage)
	out := fs.StringP("output", "o", "", "write the page to `FILE` (- for stdout); required")
	if err := parseFlags(fs, args, "run 'retrylab report html --help'", stdout, stderr); err != nil {
		return err
	}
	if *out == "" {
		return usageErrorf("add -o report.html (or -o - for stdout)", "no output file given")
	}
	paths := fs.Args()
	if len(paths) == 0 {
		return usageErrorf("give chaos run folders or trace files, e.g. retrylab report html runs/ -o report.html", "no paths given")
	}
	// Where the page goes is checked before anything is read: a FIFO or a
	// device there would be replaced by the rename at the end.
	if *out != "-" {
		if err := runfolder.CheckOutFile("-o", *out); err != nil {
			return printableError{err}
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(analyzeMemoryLimit))
	}
	var page report.Page
	files, err := collectPageInputs(ctx, paths, &page, stderr)
	if err != nil {
		return err
	}
	if len(files) > 0 {
		if err := analyzeForPage(ctx, files, &page, stderr); err != nil {
			return err
		}
	}
	if page.Analysis == nil && len(page.Runs) == 0 {
		return usageErrorf("give chaos run folders (holding summary.json) or trace files (*.jsonl, *.jsonl.gz)", "nothing to report in %s", printable(fmt.Sprint(paths)))
	}
	var buf bytes.Buffer
	if err := report.PageHTML(&buf, page); err != nil {
		return err
	}
	if *out == "-" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	if err := runfolder.WriteFileAtomic(*out, buf.Bytes()); err != nil {
		return usageErrorf("choose a writable path for -o", "cannot write %s: %s", printable(*out), printable(err.Error()))
	}
	fmt.Fprintf(stderr, "wrote %s (%d bytes)\n", printable(*out), buf.Len())
	return nil
}

// collectPageInputs reads the chaos runs of each path into page (at most
// report.MaxRunFolders) and returns the trace files they hold: a path may
// hold runs (summary.json, result.json), traces, or both; a folder of runs
// without traces is fine.
func collectPageInputs(ctx context.Context, paths []string, page *report.Page, stderr io.Writer) ([]string, error) {
	var files []string
	seen := map[string]bool{}
	skipped := 0
	for _, p := range paths {
		runs, err := report.LoadRuns(ctx, []string{p})
		if err != nil {
			var re *report.RunFileError
			if errors.As(err, &re) {
				return nil, usageErrorf(re.Hint(), "%s", printable(re.Error()))
			}
			return nil, printableError{err}
		}
		skipped += runs.Skipped
		for _, r := range runs.Runs {
			if len(page.Runs) < report.MaxRunFolders {
				page.Runs = append(page.Runs, r)
			} else {
				skipped++
			}
		}
		if b := filepath.Base(p); b == "summary.json" || b == "result.json" {
			continue // a run, not a trace
		}
		found, err := trace.DiscoverContext(ctx, []string{p}, func(path, reason string) {
			fmt.Fprintf(stderr, "note: %s\n", printable(path+": "+reason))
		})
		if err != nil {
			var pe *trace.PathError
			switch {
			case errors.As(err, &pe) && len(runs.Runs) > 0:
				continue // runs without traces
			case errors.As(err, &pe):
				return nil, usageErrorf(pe.Hint(), "%s", printable(pe.Error()))
			}
			return nil, printableError{err}
		}
		for _, f := range found {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	if skipped > 0 {
		fmt.Fprintf(stderr, "note: %d run folders past the first %d were not read\n", skipped, report.MaxRunFolders)
	}
	return files, nil
}

// analyzeForPage analyses the traces for the page: by provider and model
// with the default alerts, and, in a second pass, by day.
func analyzeForPage(ctx context.Context, files []string, page *report.Page, stderr io.Writer) error {
	var malformed int64
	an, err := analyze.Run(ctx, files, analyze.Options{
		By: []string{"provider", "model"}, Alerts: analyze.DefaultAlerts(), MinSamples: 1, Confidence: 0.95,
		Malformed: func(*trace.LineError) { malformed++ },
	})
	if err != nil {
		var pe *trace.PathError
		if errors.As(err, &pe) {
			return usageErrorf(pe.Hint(), "%s", printable(pe.Error()))
		}
		return printableError{err}
	}
	if malformed > 0 {
		fmt.Fprintf(stderr, "note: %d malformed trace lines skipped (see 'retrylab trace analyze' for each)\n", malformed)
	}
	if an.Inputs.Events == 0 {
		return nil
	}
	page.Analysis = an
	if page.ByDay, err = analyze.Run(ctx, files, analyze.Options{By: []string{"day"}, Alerts: []analyze.Alert{}, MinSamples: 1, Confidence: 0.95}); err != nil {
		return printableError{err}
	}
	return nil
}
