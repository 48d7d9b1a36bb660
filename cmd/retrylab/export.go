package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/retrylab/retrylab/otlp"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

const exportUsage = `Usage: retrylab trace export --format otlp [flags] [PATH...]

Turns trace v1 (run folders, trace files, globs, or - for stdin; without
PATH, runs/) into OTLP/JSON for the observability stack a team already has,
one export a line as an OpenTelemetry Collector's file exporter writes them:
for each run, its spans (ExportTraceServiceRequest), then its other events
as log records (ExportLogsServiceRequest), at most 1000 a line. Under a
"retrylab run" span, each logical request (ProviderRequestFinished) is a
gen_ai "chat" span; each of its attempts an HTTP CLIENT span under it with
http.request.resend_count, http.response.status_code and error.type (the
failure type), laid out so that the waits between them are the trace's
delayMs. Every span and log record carries its event's line
(retrylab.event), so 'retrylab trace analyze' of the export gives the
figures of the trace, all of them. Keys are redacted.

Flags:
%s
Example:
  retrylab trace export --format otlp runs/ > otel.json
  retrylab trace analyze otel.json

Exit codes: 0 written, 2 bad usage or bad input (missing path, unreadable
file, malformed line with --strict).
`

func traceExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trace export", exportUsage)
	format := fs.String("format", "otlp", "output format: "+exportFormats.help()+" (OTLP/JSON)")
	strict := fs.Bool("strict", false, "treat a malformed line as an error (exit 2)")
	if err := parseFlags(fs, args, "run 'retrylab trace export --help'", stdout, stderr); err != nil {
		return err
	}
	if _, err := exportFormats.pick(*format); err != nil {
		return err
	}
	paths, err := pathsOrRuns(fs.Args(), "export")
	if err != nil {
		return err
	}
	files, err := discoverTraces(ctx, paths, stderr)
	if err != nil {
		return err
	}
	var seq int64 // the lines' positions, across files: a runId in two files keeps their order
	for _, f := range files {
		if err := exportOTLP(ctx, f, *strict, &seq, stdout, stderr); err != nil {
			return readTracesError(err, "fix or remove that line, or drop --strict to skip malformed lines")
		}
	}
	return nil
}

// exportOTLP writes the runs of one trace file as OTLP/JSON lines, in the
// order of their first event, its lines numbered on from seq; lines
// without runId make a run named after the file.
func exportOTLP(ctx context.Context, path string, strict bool, seq *int64, w, stderr io.Writer) error {
	r, err := trace.OpenContext(ctx, path)
	if err != nil {
		return err
	}
	defer r.Close()
	var order []string
	runs := map[string][]otlp.Line{}
	for {
		raw, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var le *trace.LineError
		if errors.As(err, &le) && !strict {
			fmt.Fprintf(stderr, "%s\n", printable(le.Error()))
			continue
		}
		if err != nil {
			return err
		}
		run := string(raw.RunID)
		if raw.RunID == nil {
			run = path // the run of lines without runId is their file
		}
		if _, ok := runs[run]; !ok {
			order = append(order, run)
		}
		*seq++
		runs[run] = append(runs[run], otlp.Line{Event: raw.Event(), Raw: otlp.RawLine(raw, nil), Seq: *seq})
	}
	for _, run := range order {
		for _, p := range otlp.FromLines(run, runs[run], maxExportItems) {
			b, err := p.JSON()
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintln(w, provider.Redact(string(b))); err != nil {
				return fmt.Errorf("writing the export: %w", err)
			}
		}
	}
	return nil
}

// maxExportItems bounds the spans or log records of one export line, so
// that a long run's lines stay far below what trace analyze reads of one
// (maxOTLPLine) and what a Collector takes in one request.
const maxExportItems = 1000

// exportFormats are trace export's output formats.
var exportFormats = namesOnly("otlp")
