package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/retrylab/retrylab/report"
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

var analyzeUsage = strings.Replace(`Usage: retrylab trace analyze [flags] [PATH...]

Reads run folders, trace files (*.jsonl, *.jsonl.gz), globs, or - for stdin,
and reports retry and failure rates, recovered rate, amplification, duration
and delay percentiles, failures by type and status, escalations, the seed's
dashboard metrics, and alerts. Folders are searched recursively for
trace.jsonl and *.jsonl(.gz); the mock server's server.jsonl journal is read
but never counted as requests or runs. Without PATH, runs/ is read.

Alerts: the defaults are provider_retry_rate > 0.20, l2_escalation_rate > 0.30,
avg_repair_iterations > 3 and diagnosis_rate > 0.10. --alerts FILE replaces
them; each --alert adds one. A rate alert fires when its one-sided exact
binomial (Clopper–Pearson) bound at --confidence is past the threshold — so
a rate sitting at the threshold fires at most 1 − confidence of the time,
whatever n — warns when only the point value is, and reports
insufficient_data below --min-samples samples.

Alerts file (YAML):
  alerts:
    - name: provider_retry_rate    # defaults to the metric's name
      metric: provider_retry_rate  # any metric below
      op: ">"                      # > >= < <=
      threshold: 0.20
      minSamples: 20
      severity: page

Metrics (for --alert and alerts files; n is what a rate's exact interval
and --min-samples count; thresholds of durations are in seconds, and
--alert also takes 30s or 500ms):
{{metrics}}
Flags:
%s
Example:
  retrylab trace analyze runs/ --by provider,model --alert 'provider_failure_rate>0.05'
  zcat old.jsonl.gz | retrylab trace analyze - --format json | jq .metrics
  retrylab trace analyze runs/ --format html > retries.html

Exit codes: 0 no alert firing, 1 an alert fired, 2 bad usage or bad input
(missing path, unreadable file, bad alert, malformed line with --strict).
`, "{{metrics}}", metricsHelp(), 1)

// metricsHelp lists analyze.Registry for --help: name, kind, samples, help.
func metricsHelp() string {
	var b strings.Builder
	for _, d := range analyze.Registry {
		kind := string(d.Kind)
		if d.Unit != "" {
			kind += ", " + d.Unit
		}
		fmt.Fprintf(&b, "  %s (%s; n = %s)\n      %s\n", d.Name, kind, d.Samples, d.Help)
	}
	return b.String()
}

func traceAnalyze(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trace analyze", analyzeUsage)
	format := fs.String("format", "table", "output format: "+analysisFormats.help())
	alertFlags := fs.StringArray("alert", nil, "add an alert METRIC OP VALUE, e.g. 'provider_retry_rate>0.2' (repeatable)")
	alertsFile := fs.String("alerts", "", "read alerts from this YAML `FILE` instead of the defaults")
	minSamples := fs.Int("min-samples", 1, "alerts with fewer samples report insufficient_data")
	confidence := fs.Float64("confidence", 0.95, "one-sided confidence of the rates' exact (Clopper–Pearson) bounds and the alerts gated on them (0.5 < F < 1)")
	by := fs.String("by", "provider,model", "group requests by these dimensions: provider, model, failureType, run, day, promptPattern")
	strict := fs.Bool("strict", false, "treat a malformed line as an error (exit 2)")
	if err := parseFlags(fs, args, "run 'retrylab trace analyze --help'", stdout, stderr); err != nil {
		return err
	}
	render, err := analysisFormats.pick(*format)
	if err != nil {
		return err
	}
	if !(*confidence > 0.5 && *confidence < 1) {
		return usageErrorf("use a value such as 0.95 or 0.99", "--confidence %v is out of range (want 0.5 < F < 1)", *confidence)
	}
	if *minSamples < 0 {
		return usageErrorf("use 0 or more", "--min-samples %d is negative", *minSamples)
	}
	dims, err := parseBy(*by)
	if err != nil {
		return err
	}
	alerts, err := analyzeAlerts(ctx, *alertsFile, *alertFlags)
	if err != nil {
		return err
	}
	paths, err := pathsOrRuns(fs.Args(), "analyze")
	if err != nil {
		return err
	}
	// Memory: the heap is kept under a soft limit (see analyzeMemoryLimit).
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(analyzeMemoryLimit))
	}
	files, err := discoverTraces(ctx, paths, stderr)
	if err != nil {
		return err
	}
	// OTLP/JSON files (a Collector's file exporter, a run's otlp/*.json)
	// are read as the account of requests they give.
	in, err := otlpInputs(ctx, files, *strict, stderr)
	if err != nil {
		return readTracesError(err, "give OTLP/JSON exports (ExportTraceServiceRequest, ExportLogsServiceRequest), one a line or pretty-printed, each retrylab.event one trace v1 line, or drop --strict to skip what is not one")
	}
	defer in.cleanup()
	an, err := analyze.Run(ctx, in.files, analyze.Options{
		By: dims, Alerts: alerts, MinSamples: *minSamples, Confidence: *confidence, Strict: *strict,
		Stdin: in.stdin, Streams: in.streams,
		Malformed: func(le *trace.LineError) { fmt.Fprintf(stderr, "%s\n", printable(le.Error())) },
	})
	if err != nil {
		return readTracesError(err, "fix or remove that line, or drop --strict to count and skip malformed lines")
	}
	if err := render(stdout, an); err != nil {
		return err
	}
	appendStepSummary(stderr, func(w io.Writer) error { return report.AnalysisMarkdown(w, an) })
	return firingError(an, stderr)
}

// analysisFormats are trace analyze's output formats.
var analysisFormats = formats[func(io.Writer, *analyze.Analysis) error]{list: []format[func(io.Writer, *analyze.Analysis) error]{
	{"table", report.AnalysisTable}, {"json", report.AnalysisJSON}, {"markdown", report.AnalysisMarkdown},
	{"openmetrics", report.AnalysisOpenMetrics}, {"html", report.AnalysisHTML},
}}

// parseBy reads --by: known dimensions, comma-separated, each once (a
// repeated dimension would repeat a label).
func parseBy(by string) ([]string, error) {
	var dims []string
	for _, d := range strings.Split(by, ",") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		if !slices.Contains(analyze.Dimensions, d) {
			return nil, usageErrorf("--by takes a comma-separated list of: "+strings.Join(analyze.Dimensions, ", "), "unknown --by dimension %q", d)
		}
		if !slices.Contains(dims, d) {
			dims = append(dims, d)
		}
	}
	return dims, nil
}

// analyzeAlerts are the alerts of a run: the defaults, or those of
// --alerts, plus each --alert.
func analyzeAlerts(ctx context.Context, file string, flags []string) ([]analyze.Alert, error) {
	alerts := analyze.DefaultAlerts()
	if file != "" {
		var err error
		if alerts, err = analyze.LoadAlertsContext(ctx, file); err != nil {
			return nil, alertUsageError(err)
		}
	}
	for _, s := range flags {
		a, err := analyze.ParseAlert(s)
		if err != nil {
			return nil, alertUsageError(err)
		}
		alerts = append(alerts, a)
	}
	return alerts, nil
}

// firingError says which alerts fire (exit 1), nil when none does.
func firingError(an *analyze.Analysis, stderr io.Writer) error {
	var firing []string
	for _, a := range an.Alerts {
		if a.State == analyze.StateFiring {
			firing = append(firing, fmt.Sprintf("%s (%s %s %g: value %.4g, bound %.4g, n=%d)",
				a.Name, a.Metric, a.Op, a.Threshold, a.Value, boundOf(a), a.Samples))
		}
	}
	if len(firing) == 0 {
		return nil
	}
	fmt.Fprintf(stderr, "alert firing: %s\n", strings.Join(firing, "; "))
	return fmt.Errorf("%d alert(s) firing: %w", len(firing), errFailed)
}

// pathsOrRuns returns the PATH arguments of trace command cmd, or runs/
// when none are given and it exists.
func pathsOrRuns(paths []string, cmd string) ([]string, error) {
	if len(paths) > 0 {
		return paths, nil
	}
	if _, err := os.Stat("runs"); err != nil {
		return nil, usageErrorf("give run folders or trace files, e.g. retrylab trace "+cmd+" runs/ (or - for stdin)", "no paths given and there is no runs/ folder here")
	}
	return []string{"runs"}, nil
}

// discoverTraces finds the trace files of paths as every trace command
// does: what it skips is a note on stderr, a path that cannot be read a
// usage error with its hint.
func discoverTraces(ctx context.Context, paths []string, stderr io.Writer) ([]string, error) {
	files, err := trace.DiscoverContext(ctx, paths, func(path, reason string) {
		fmt.Fprintf(stderr, "note: %s\n", printable(path+": "+reason))
	})
	if err != nil {
		var pe *trace.PathError
		if errors.As(err, &pe) {
			return nil, usageErrorf(pe.Hint(), "%s", printable(pe.Error()))
		}
		return nil, printableError{err}
	}
	return files, nil
}

// readTracesError is the CLI error of a failed read of trace files: a
// malformed line (--strict) or an unreadable file is a usage error
// (malformedHint says what to do about the line); anything else, such as
// an interrupt ("FILE: stopped reading: interrupted by SIGINT"), is printed
// as it is.
func readTracesError(err error, malformedHint string) error {
	var le *trace.LineError
	var pe *trace.PathError
	switch {
	case errors.As(err, &le):
		return usageErrorf(malformedHint, "malformed line: %s", printable(le.Error()))
	case errors.As(err, &pe):
		return usageErrorf(pe.Hint(), "%s", printable(pe.Error()))
	}
	return printableError{err}
}

// printable is a message about a trace made fit for stderr: no key (file
// names and messages may hold one), no control character.
func printable(s string) string { return report.Visible(report.RedactLabel(s)) }

// printableError is an error whose message names files found in folders
// (a name may hold a key or a terminal escape), printed through printable;
// errors.Is and errors.As see the error it wraps.
type printableError struct{ err error }

func (e printableError) Error() string { return printable(e.err.Error()) }
func (e printableError) Unwrap() error { return e.err }

// analyzeMemoryLimit is the soft limit of the heap that trace analyze sets,
// unless GOMEMLIMIT says otherwise: past it the garbage collector works
// harder rather than let the heap double, which keeps peak RSS under 64 MB
// for inputs of up to some tens of thousands of distinct groups (see
// docs/analyze.md). Beyond, memory grows with the groups and runs kept.
const analyzeMemoryLimit = 48 << 20

func boundOf(a analyze.AlertResult) float64 {
	if a.Op == "<" || a.Op == "<=" {
		return a.Upper
	}
	return a.Lower
}

func alertUsageError(err error) error {
	var ae *analyze.AlertError
	if errors.As(err, &ae) {
		// One problem a line, each made printable (yaml quotes values as
		// they are).
		lines := strings.Split(ae.Error(), "\n")
		for i, l := range lines {
			lines[i] = printable(l)
		}
		return usageErrorf(ae.Hint(), "%s", strings.Join(lines, "\n"))
	}
	return printableError{err} // an interrupt while reading a FIFO
}
