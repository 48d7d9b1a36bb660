package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/retrylab/retrylab/internal/regfile"
	"github.com/retrylab/retrylab/report"
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

const compareUsage = `Usage: retrylab trace compare [flags] BASE CURRENT

Sets the metrics of two sets of runs side by side, with deltas and a
regression verdict per metric. BASE and CURRENT are each one PATH as trace
analyze takes it (a run folder, a trace file, a quoted glob, - for stdin on
one side) or an analysis JSON file written by 'trace analyze --format json'
(detected by its schema retrylab.analysis/v1).

Verdicts (see docs/compare.md for the exact rule):
  rates (provider_retry_rate, ...)   one-sided two-proportion z-test
  delay_ms, duration_ms              one-sided Mann-Whitney U on the histogram
                                     buckets (trace input only)
  percentiles, avg_repair_iterations delta only ("not tested")
A metric regresses when its test is significant (p < --alpha) in the bad
direction (an increase for every metric today) and, when --max-increase is
given for it, the increase exceeds that. Fewer than --min-samples samples on
either side (or fewer than 5 expected events either way for a rate) is
"too few samples": never a regression.

Flags:
%s
Example:
  retrylab trace compare main-runs/ runs/ --max-increase provider_retry_rate=0.02
  retrylab trace analyze main-runs/ --format json > base.json
  retrylab trace compare base.json runs/ --format markdown >> "$GITHUB_STEP_SUMMARY"

Exit codes: 0 no regression, 1 a metric regressed, 2 bad usage or bad input.
`

func traceCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trace compare", compareUsage)
	format := fs.String("format", "table", "output format: "+compareFormats.help())
	alpha := fs.Float64("alpha", 0.05, "significance level of the one-sided tests (0 < A < 0.5)")
	minSamples := fs.Int64("min-samples", 30, "fewest samples on each side for a test to run")
	maxInc := fs.StringArray("max-increase", nil, "METRIC=VALUE: an absolute increase up to VALUE is not a regression (repeatable)")
	strict := fs.Bool("strict", false, "treat a malformed trace line as an error (exit 2)")
	if err := parseFlags(fs, args, "run 'retrylab trace compare --help'", stdout, stderr); err != nil {
		return err
	}
	render, err := compareFormats.pick(*format)
	if err != nil {
		return err
	}
	if !(*alpha > 0 && *alpha < 0.5) {
		return usageErrorf("use a value such as 0.05 or 0.01", "--alpha %v is out of range (want 0 < A < 0.5)", *alpha)
	}
	if *minSamples < 1 {
		return usageErrorf("use 1 or more (30 is the default)", "--min-samples %d is below 1", *minSamples)
	}
	opts := analyze.CompareOptions{Alpha: *alpha, MinSamples: *minSamples, MaxIncrease: map[string]float64{}}
	for _, s := range *maxInc {
		name, v, err := analyze.ParseMaxIncrease(s)
		if err != nil {
			return usageErrorf("e.g. --max-increase provider_retry_rate=0.05 (an absolute change: 5 percentage points)", "%s", printable(err.Error()))
		}
		opts.MaxIncrease[name] = v
	}
	if fs.NArg() != 2 {
		return usageErrorf("give two paths: retrylab trace compare BASE CURRENT (quote globs)", "want BASE and CURRENT, got %d argument(s)", fs.NArg())
	}
	if fs.Arg(0) == "-" && fs.Arg(1) == "-" {
		return usageErrorf("read one side from a file", "stdin (-) can be only one side")
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(analyzeMemoryLimit))
	}
	var sides [2]*analyze.Analysis
	for i, name := range []string{"BASE", "CURRENT"} {
		a, err := loadSide(ctx, fs.Arg(i), *strict, stderr)
		if err != nil {
			var ue *userError
			if errors.As(err, &ue) {
				ue.msg = name + ": " + ue.msg
				return ue
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		sides[i] = a
	}
	c := analyze.Compare(sides[0], sides[1], opts)
	if err := render(stdout, c); err != nil {
		return err
	}
	appendStepSummary(stderr, func(w io.Writer) error { return report.CompareMarkdown(w, c) })
	if c.Regressions > 0 {
		var names []string
		for _, r := range c.Rows {
			if r.Verdict == analyze.VerdictRegression {
				names = append(names, r.Metric)
			}
		}
		fmt.Fprintf(stderr, "regression: %s\n", strings.Join(names, ", "))
		return fmt.Errorf("%d regression(s): %w", c.Regressions, errFailed)
	}
	return nil
}

// loadSide reads one side of a comparison: an analysis JSON file, or trace
// paths analysed as trace analyze does.
func loadSide(ctx context.Context, path string, strict bool, stderr io.Writer) (*analyze.Analysis, error) {
	if a, ok, err := readAnalysisFile(path); ok || err != nil {
		return a, err
	}
	files, err := discoverTraces(ctx, []string{path}, stderr)
	if err != nil {
		return nil, err
	}
	a, err := analyze.Run(ctx, files, analyze.Options{By: []string{"provider"}, Strict: strict,
		Malformed: func(le *trace.LineError) { fmt.Fprintf(stderr, "%s\n", printable(le.Error())) }})
	if err != nil {
		return nil, readTracesError(err, "fix or remove that line, or drop --strict")
	}
	return a, nil
}

// readAnalysisFile reads path as an analysis JSON file when it is a
// regular file whose first non-space byte is '{' and that decodes as one
// object of schema retrylab.analysis/v1. ok is false otherwise (a trace).
func readAnalysisFile(path string) (*analyze.Analysis, bool, error) {
	if path == "-" || strings.HasSuffix(path, ".gz") {
		return nil, false, nil
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return nil, false, nil // a folder, a glob, a FIFO: trace discovery handles it
	}
	f, err := regfile.Open(path) // not a FIFO swapped in after the Stat
	if err != nil {
		return nil, false, nil
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	t := bytes.TrimLeft(head[:n], " \t\r\n")
	if len(t) == 0 || t[0] != '{' || bytes.IndexByte(head[:n], '\n') >= 0 && !bytes.Contains(head[:n], []byte(`"schema"`)) {
		return nil, false, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, false, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, analyze.MaxAnalysisJSON+1))
	if err != nil {
		return nil, false, printableError{fmt.Errorf("%s: %w", path, err)}
	}
	if len(data) > analyze.MaxAnalysisJSON {
		return nil, false, nil // far too large for an analysis: read it as a trace
	}
	a, ok, err := analyze.ReadAnalysisJSON(data)
	if err != nil {
		return nil, true, usageErrorf("write it again with 'retrylab trace analyze --format json'", "%s", printable(path+": "+err.Error()))
	}
	return a, ok, nil
}

// compareFormats are trace compare's output formats.
var compareFormats = formats[func(io.Writer, *analyze.Comparison) error]{list: []format[func(io.Writer, *analyze.Comparison) error]{
	{"table", report.CompareTable}, {"json", report.CompareJSON}, {"markdown", report.CompareMarkdown},
}}
