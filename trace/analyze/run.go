package analyze

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/retrylab/retrylab/trace"
)

// Options control Run.
type Options struct {
	// By lists the grouping dimensions (see Dimensions); empty means
	// provider, model.
	By []string
	// Alerts are evaluated against Metrics; nil means no alerts (the CLI
	// passes DefaultAlerts).
	Alerts []Alert
	// MinSamples is the default minimum sample count of an alert.
	MinSamples int
	// Confidence is the one-sided confidence of the rates' exact
	// (Clopper–Pearson) bounds and of the alerts gated on them; 0 means 0.95.
	Confidence float64
	// Strict makes the first malformed line an error.
	Strict bool
	// Workers is how many files are read at once; 0 means GOMAXPROCS.
	Workers int
	// Malformed, if not nil, is called for each malformed line, in file
	// order, after all files are read.
	Malformed func(*trace.LineError)
	// Stdin is read for the path "-"; nil means os.Stdin.
	Stdin io.Reader
	// Streams are read for their paths instead of opening them: a pipe
	// (bash's <(...)) whose first bytes the caller has read already and
	// puts back in front.
	Streams map[string]io.Reader
}

// maxReportedPerFile bounds the malformed lines remembered per file.
const maxReportedPerFile = 100

// Run reads the trace files (as trace.Discover returns them) in parallel,
// one streaming pass each, and computes the Analysis. A file that cannot be
// read is an error; so is a malformed line with Options.Strict.
func Run(ctx context.Context, files []string, opts Options) (*Analysis, error) {
	by, conf, err := analyzeOptions(opts)
	if err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	tasks, err := planChunks(files, workers)
	if err != nil {
		return nil, err
	}
	workers = min(workers, max(len(tasks), 1))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results, accs := readTasks(ctx, cancel, tasks, workers, by, opts)
	if err := fileLines(tasks, results); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	total := accs[0]
	for _, a := range accs[1:] {
		total.merge(a)
	}
	if opts.Malformed != nil {
		reportMalformed(tasks, results, opts.Malformed)
	}
	an := total.result(len(files), repairThreshold(opts.Alerts))
	an.By = slices.Clone(by)
	an.Confidence = conf
	alerts, err := EvaluateAlerts(an, opts.Alerts, opts.MinSamples)
	if err != nil {
		return nil, err
	}
	an.Alerts = alerts
	return an, nil
}

// analyzeOptions checks the groupings and the confidence of opts, with
// their defaults.
func analyzeOptions(opts Options) (by []string, conf float64, err error) {
	by = opts.By
	if len(by) == 0 {
		by = defaultBy
	}
	for _, d := range by {
		if !slices.Contains(Dimensions, d) {
			return nil, 0, fmt.Errorf("unknown grouping %q (want one of %s)", d, strings.Join(Dimensions, ", "))
		}
	}
	conf = opts.Confidence
	if conf == 0 {
		conf = 0.95
	}
	if !(conf > 0.5 && conf < 1) {
		return nil, 0, fmt.Errorf("confidence %v is out of range (want 0.5 < c < 1)", conf)
	}
	return by, conf, nil
}

// defaultRepairThreshold is the threshold of orchestrator.repairIterations.above
// when no avg_repair_iterations alert is given (seed 003's "> 3").
const defaultRepairThreshold = 3

// repairThreshold is the threshold of the first avg_repair_iterations
// alert, or defaultRepairThreshold.
func repairThreshold(alerts []Alert) float64 {
	for _, al := range alerts {
		if al.Metric == "avg_repair_iterations" && al.Threshold != nil {
			return *al.Threshold
		}
	}
	return defaultRepairThreshold
}
