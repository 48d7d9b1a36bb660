package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/regfile"
	"github.com/retrylab/retrylab/report/results"
	"github.com/retrylab/retrylab/retry/errreport"
)

const chaosRunUsage = `Usage: retrylab chaos run [flags] [PATH...]

Runs scenario files (or every *.yaml, *.yml, *.json in folders; default
scenarios/) against a mock provider behind Toxiproxy, all in parallel, and
checks from the client's trace and the server's journal that the client
retried as its policy says. Writes one run folder per invocation:
OUT/<timestamp>/<scenario>/{trace.jsonl,server.jsonl,result.json} and
OUT/<timestamp>/{summary.json,junit.xml}.

The report goes to stdout, progress to stderr. Exit 0 when every scenario
passed (or was skipped for a missing client requirement), 1 when one failed
or stayed inconclusive, 2 on bad input or when a scenario could not be carried
out (verdict "error": the proxy failed, too few file descriptors). On SIGINT or SIGTERM the clients are
killed, the proxies removed and the results so far written, with unfinished
scenarios marked "interrupted" (exit 130, 143 for SIGTERM). A scenario whose timing checks fail
or cannot tell on a busy machine is re-run (--confirm) before it counts.

Example:
  retrylab chaos run --time-scale 0.05 --format junit scenarios/ > junit.xml
  # Does my agent honour Retry-After? (this one does not: exit 1, delays fail)
  retrylab chaos run --client-cmd 'bash testdata/clients/agent.sh' scenarios/forgeflare-429-retry-after.yaml

Flags:
`

const chaosValidateUsage = `Usage: retrylab chaos validate PATH...

Checks scenario files (or folders of them) without running anything: prints
"ok FILE" for each good file and every problem with its file, line, field and
a hint. Exit 2 if any file has a problem.

Example:
  retrylab chaos validate scenarios/
`

const chaosServeUsage = `Usage: retrylab chaos serve --scenario FILE [flags]

Starts the mock provider and the proxy for one scenario and waits for a client
you start yourself: it prints the base URLs to use, journals every request
(with --journal), and on exit (Ctrl-C) prints the server-side verdict: the
attempts counted by fault and status, the first and last 20, then PASS
or FAIL for each expectation of the scenario the server can check (outcome
when it can be told, attempts, failureTypes inferred from the faults, the
server's delays, the model switches as escalations), SKIP for the others.
Ctrl-C or SIGTERM is how serve ends, so its exit code is the verdict's:
0 when every check passed, 1 when one failed, 2 on bad input; 130 (143 for
SIGTERM) only when stopped before the verdict was printed (a second Ctrl-C).

Example:
  retrylab chaos serve --scenario scenarios/forgeflare-overloaded-529-503-backoff.yaml
  ANTHROPIC_BASE_URL=<printed URL> ./my-agent

Flags:
`

// flagSet is a command's flags with its help text.
type flagSet struct {
	*pflag.FlagSet
	usage string
}

// newFlags returns a flag set that prints nothing itself: parseFlags prints
// its usage, to stdout for --help and to stderr on an error. usage is the
// command's help text; a "%s" in it is replaced by the flags' defaults, else
// they follow it.
func newFlags(name, usage string) *flagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{fs, usage}
}

// writeUsage writes the help text with the flags to w.
func (fs *flagSet) writeUsage(w io.Writer) {
	if strings.Contains(fs.usage, "%s") {
		fmt.Fprintf(w, fs.usage, fs.FlagUsages())
		return
	}
	fmt.Fprint(w, fs.usage)
	fmt.Fprint(w, fs.FlagUsages())
}

// parseFlags parses args. --help (-h) prints the usage on stdout and returns
// errHelp (exit 0); a bad flag prints the usage on stderr and returns a
// usage error (exit 2) with hint.
func parseFlags(fs *flagSet, args []string, hint string, stdout, stderr io.Writer) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fs.writeUsage(stdout)
			return errHelp
		}
		fs.writeUsage(stderr)
		return usageErrorf(hint, "%v", err)
	}
	return nil
}

func chaosRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseChaosRun(args, stdout, stderr)
	if err != nil {
		return err
	}
	scs, err := loadChaosScenarios(cfg)
	if err != nil {
		return err
	}
	// Where the results go is checked before anything runs: a bad --out or
	// --junit used to fail only once every scenario had run.
	if err := runfolder.CheckOutDir(cfg.out); err != nil {
		return err
	}
	var junitFile *os.File
	if cfg.junit != "" {
		f, err := runfolder.CreateOutFile("--junit", cfg.junit)
		if err != nil {
			return err
		}
		defer f.Close()
		junitFile = f
	}
	toxi, err := mock.StartToxiproxy(ctx, cfg.toxiURL)
	if err != nil {
		return fmt.Errorf("start toxiproxy: %w", err)
	}
	defer toxi.Close()
	reportStale(stderr, toxi)
	name := "embedded"
	if cfg.toxiURL != "" {
		name = cfg.toxiURL
	}
	r := &chaos.Runner{Toxi: toxi, ToxiName: name, Out: cfg.out, Parallel: cfg.parallel, TimeScale: cfg.timeScale,
		ClientCmd: cfg.clientCmd, InheritEnv: cfg.inheritEnv, Seed: cfg.seed, Shard: cfg.shard, Progress: stderr, Confirm: cfg.confirm,
		Proxy: mock.ProxyMode(cfg.proxy)}
	if isTerminal(stderr) {
		r.Live = true
		r.Color = os.Getenv("NO_COLOR") == ""
	}
	// On an interrupt, junit.xml (and --junit) is written with summary.json
	// before anything slow is awaited; if the process must exit before Run
	// returns, what finished is written still and every proxy is deleted.
	r.OnInterrupt = func(sum *chaos.Summary) error { return writeJUnitFiles(cfg, sum, junitFile) }
	var reported onceGate // the report is printed once: by the forced exit, or at the end
	defer atForcedExit(ctx, forcedExit(cfg, r, toxi, &reported, stdout))()
	fmt.Fprintf(stderr, "running %d scenarios (seed %d, toxiproxy %s)\n", len(scs), cfg.seed, name)
	sum, runErr := r.Run(ctx, scs)
	if sum == nil {
		return runErr
	}
	// Whatever could not be written (a full disk), the rest is: every
	// output is attempted, and the first error returned after the report.
	var errs []error
	if !reported.do(func() { errs = writeChaosOutputs(cfg, sum, junitFile, stdout, stderr) }) {
		// The forced exit printed it; the process is ending.
		errs = writeChaosOutputs(cfg, sum, junitFile, io.Discard, stderr)
	}
	errs = append([]error{runErr}, errs...)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return chaosExit(ctx, cfg, sum)
}

// forcedExit is chaos run's exit hook (atForcedExit): within d, it writes
// what finished (r.Flush), deletes every proxy and prints the report of
// the same summary, taken from memory, unless reported says the report is
// printed already. A stdout nobody reads holds only this hook, which
// mainExit abandons after d.
func forcedExit(cfg chaosRunConfig, r *chaos.Runner, toxi *mock.Toxiproxy, reported *onceGate, stdout io.Writer) func(time.Duration) {
	return func(d time.Duration) {
		sum := r.Interim()
		var wg sync.WaitGroup
		wg.Go(func() { r.Flush(d) })
		wg.Go(func() { _ = toxi.DeleteAll(d) })
		if sum != nil {
			// Waits for the end of the command's own print, if it began.
			wg.Go(func() { reported.do(func() { _ = renderChaosReport(cfg, sum, stdout) }) })
		}
		wg.Wait()
	}
}

// chaosRunConfig is what the flags and arguments of chaos run ask for.
type chaosRunConfig struct {
	out, toxiURL, clientCmd, format, junit, shard string
	proxy                                         string // --proxy: auto or always
	inheritEnv                                    []string
	parallel, confirm                             int
	timeScale                                     float64
	seed                                          int64
	failOnSkip                                    bool
	paths                                         []string
}

// parseChaosRun reads and checks chaos run's flags: a bad value is a usage
// error with a hint before anything runs.
func parseChaosRun(args []string, stdout, stderr io.Writer) (chaosRunConfig, error) {
	var cfg chaosRunConfig
	fs := newFlags("chaos run", chaosRunUsage)
	fs.StringVar(&cfg.out, "out", "runs", "base folder of run folders")
	fs.StringVar(&cfg.toxiURL, "toxiproxy", os.Getenv("TOXIPROXY_URL"), "URL of a toxiproxy-server API (env TOXIPROXY_URL); default: embedded")
	fs.StringVar(&cfg.proxy, "proxy", string(mock.ProxyAuto), proxyFlagHelp)
	fs.IntVar(&cfg.parallel, "parallel", 0, "scenarios run at once (default: all)")
	fs.Float64Var(&cfg.timeScale, "time-scale", 0, "multiply every wait by this (0 < F <= 1000), overriding the scenarios' timeScale")
	fs.StringVar(&cfg.clientCmd, "client-cmd", "", "external client for every scenario, run with sh -c")
	addInheritEnvFlag(fs, &cfg.inheritEnv)
	fs.StringVar(&cfg.format, "format", "table", "report format: "+chaosFormats.help())
	fs.StringVar(&cfg.junit, "junit", "", "also write JUnit XML to this file")
	seedStr := fs.String("seed", "", "jitter seed (default: random; always recorded)")
	fs.StringVar(&cfg.shard, "shard", "", "run only shard I of N (I/N, 1-based)")
	fs.IntVar(&cfg.confirm, "confirm", 2, "re-run a scenario whose timing checks failed or were inconclusive up to N times; a failure counts when it reproduces (0: report the first run)")
	fs.BoolVar(&cfg.failOnSkip, "fail-on-skip", false, "a scenario skipped for a missing client requirement (client.requires) fails the run")
	hint := "run 'retrylab chaos run --help'"
	if err := parseFlags(fs, args, hint, stdout, stderr); err != nil {
		return cfg, err
	}
	if _, err := chaosFormats.pick(cfg.format); err != nil {
		return cfg, err
	}
	if _, err := parseProxyFlag(cfg.proxy); err != nil {
		return cfg, err
	}
	if cfg.parallel < 0 || cfg.confirm < 0 {
		return cfg, usageErrorf(hint, "--parallel and --confirm must not be negative")
	}
	if err := checkInheritEnv(cfg.inheritEnv); err != nil {
		return cfg, err
	}
	// 0 is the default: each scenario's own timeScale.
	if why := scenario.CheckTimeScale(cfg.timeScale); cfg.timeScale != 0 && why != "" {
		return cfg, usageErrorf(scenario.TimeScaleHint+"; 0 (the default) keeps each scenario's own",
			"bad --time-scale: %s", why)
	}
	cfg.seed = rand.Int64()
	if *seedStr != "" {
		s, err := strconv.ParseInt(*seedStr, 10, 64)
		if err != nil {
			return cfg, usageErrorf("give a whole number, e.g. --seed 42", "bad --seed %q", *seedStr)
		}
		cfg.seed = s
	}
	if cfg.paths = fs.Args(); len(cfg.paths) == 0 {
		cfg.paths = []string{"scenarios"}
	}
	return cfg, nil
}

// loadChaosScenarios loads the scenarios of cfg.paths (a folder walk skips
// --out and earlier run folders: their JSON files are results, not
// scenarios), keeping the shard asked for.
func loadChaosScenarios(cfg chaosRunConfig) ([]*scenario.Scenario, error) {
	scs, err := scenario.LoadPaths(cfg.paths, cfg.out)
	if err != nil {
		return nil, err
	}
	if cfg.shard != "" {
		i, n, ok := parseShard(cfg.shard)
		if !ok {
			return nil, usageErrorf("write --shard 2/4 to run the second quarter of the suite", "bad --shard %q", cfg.shard)
		}
		scs = chaos.Shard(scs, i, n)
	}
	if len(scs) == 0 {
		return nil, usageErrorf("give scenario files or folders that hold them", "no scenarios to run")
	}
	// A client.command that cannot start is said before anything runs.
	if errs := client.CheckCommands(scs, cfg.clientCmd); len(errs) > 0 {
		return nil, errs
	}
	return scs, nil
}

// writeChaosOutputs writes junit.xml in the run folder, --junit, the
// report in cfg.format on stdout, GitHub annotations and the job summary,
// returning what could not be written.
func writeChaosOutputs(cfg chaosRunConfig, sum *chaos.Summary, junitFile *os.File, stdout, stderr io.Writer) []error {
	errs := []error{writeJUnitFiles(cfg, sum, junitFile)}
	if junitFile != nil {
		if err := junitFile.Close(); err != nil {
			errs = append(errs, &runfolder.OutputError{What: "--junit", Path: cfg.junit, Err: err})
		}
	}
	if err := renderChaosReport(cfg, sum, stdout); err != nil {
		errs = append(errs, &runfolder.OutputError{What: "the report", Path: "stdout", Err: err})
	}
	// CI: annotations (on stdout after the report; on stderr when stdout
	// is JSON or JUnit, which a line more would break) and the job summary.
	if githubActions() {
		aw := stdout
		if cfg.format == "json" || cfg.format == "junit" {
			aw = stderr
		}
		writeAnnotations(aw, sum)
	}
	appendStepSummary(stderr, func(w io.Writer) error { return results.Markdown(w, sum) })
	return errs
}

// renderChaosReport writes the report of sum on stdout in cfg.format.
func renderChaosReport(cfg chaosRunConfig, sum *chaos.Summary, stdout io.Writer) error {
	// The renderers do not all check each write: ew keeps the first error.
	ew := &errWriter{w: stdout}
	render, _ := chaosFormats.pick(cfg.format) // checked by parseChaosRun
	if cfg.format == "table" {
		// The clients' error reports are boxes as wide as the terminal,
		// coloured only there and never with NO_COLOR.
		f, _ := stdout.(*os.File)
		st := errreport.StyleFor(f, os.Getenv)
		render = func(w io.Writer, s *chaos.Summary) error { return results.TableStyle(w, s, st) }
	}
	err := render(ew, sum)
	if err == nil {
		err = ew.err
	}
	return err
}

// chaosFormats are chaos run's report formats.
var chaosFormats = formats[func(io.Writer, *chaos.Summary) error]{chaos: true, list: []format[func(io.Writer, *chaos.Summary) error]{
	{"table", results.Table}, {"json", results.JSON}, {"markdown", results.Markdown}, {"junit", results.JUnit},
}}

// chaosExit maps a finished run to the command's error, hence its exit
// code: interrupted (130/143), an error of the run (2), failed scenarios
// or, with --fail-on-skip, skipped ones (1), else nil (0).
func chaosExit(ctx context.Context, cfg chaosRunConfig, sum *chaos.Summary) error {
	if ctx.Err() != nil {
		// The cause says which signal; it Is context.Canceled (exit 130
		// or 143). What finished is written; the rest is marked so.
		return fmt.Errorf("%w: %d of %d scenarios unfinished; results so far in %s",
			context.Cause(ctx), sum.Interrupted, len(sum.Scenarios), sum.RunDir)
	}
	if sum.Errors > 0 {
		// The run's infrastructure failed (the proxy, the file-descriptor
		// limit, the disk): no verdict on the client, exit 2.
		first, hint := firstRunError(sum)
		return usageErrorf(hint, "%d of %d scenarios could not be carried out (an error of the run, not of the client); first: %s",
			sum.Errors, len(sum.Scenarios), first)
	}
	if sum.Failed > 0 {
		msg := fmt.Sprintf("%d of %d scenarios failed", sum.Failed, len(sum.Scenarios))
		if sum.Inconclusive > 0 {
			msg += fmt.Sprintf(" (%d inconclusive: the machine was too busy to tell; lower --parallel or raise timeScale)", sum.Inconclusive)
		}
		return fmt.Errorf("%s: %w", msg, errFailed)
	}
	if cfg.failOnSkip && sum.Skipped > 0 {
		return fmt.Errorf("%d of %d scenarios skipped, and --fail-on-skip is set: %w", sum.Skipped, len(sum.Scenarios), errFailed)
	}
	return nil
}

// firstRunError names the cause of a run's errors, rather than the
// scenarios it stopped: the first error that is not "stopped: " or
// "not started: ", else the first error; and its hint (InfraHint unless
// the result has its own, such as a client.command that cannot start).
func firstRunError(sum *chaos.Summary) (first, hint string) {
	hint = runfolder.InfraHint
	for _, r := range sum.Scenarios {
		if r.Verdict != chaos.VerdictError {
			continue
		}
		consequence := strings.HasPrefix(r.Error, "stopped: ") || strings.HasPrefix(r.Error, "not started: ")
		if first == "" || !consequence {
			first, hint = r.Name+": "+r.Error, runfolder.InfraHint
			if r.ErrorHint != "" {
				hint = r.ErrorHint
			}
			if !consequence {
				break
			}
		}
	}
	return first, hint
}

func parseShard(s string) (i, n int, ok bool) {
	a, b, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, false
	}
	return i, n, true
}

// writeJUnitFiles writes junit.xml in the run folder and, when given,
// replaces the content of the --junit file (an interrupted run writes both
// twice: at the interrupt, then complete).
func writeJUnitFiles(cfg chaosRunConfig, sum *chaos.Summary, junitFile *os.File) error {
	err := writeJUnit(filepath.Join(sum.RunDir, "junit.xml"), sum)
	if junitFile == nil {
		return err
	}
	var b bytes.Buffer
	jerr := results.JUnit(&b, sum)
	if jerr == nil {
		_, jerr = junitFile.WriteAt(b.Bytes(), 0)
	}
	if jerr == nil {
		jerr = junitFile.Truncate(int64(b.Len()))
	}
	if err == nil && jerr != nil {
		err = &runfolder.OutputError{What: "--junit", Path: cfg.junit, Err: jerr}
	}
	return err // the first error: both files are attempted
}

func writeJUnit(path string, sum *chaos.Summary) error {
	// The run folder is the clients' sandbox: a link a client left at
	// junit.xml is replaced, never written through.
	var b bytes.Buffer
	err := results.JUnit(&b, sum)
	if err == nil {
		err = runfolder.WriteFileAtomic(path, b.Bytes())
	}
	if err != nil {
		return &runfolder.OutputError{What: filepath.Base(path), Path: path, Err: err}
	}
	return nil
}

func chaosValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("chaos validate", chaosValidateUsage)
	if err := parseFlags(fs, args, "run 'retrylab chaos validate --help'", stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErrorf("example: retrylab chaos validate scenarios/", "no scenario files given")
	}
	scs, err := scenario.LoadPaths(fs.Args())
	// A client that cannot start here is found now, not at run time.
	bad := client.CheckCommands(scs, "")
	failed := map[string]bool{}
	for _, e := range bad {
		failed[e.File] = true
	}
	if len(bad) > 0 {
		var errs scenario.LoadErrors // LoadPaths' problems, if any
		errors.As(err, &errs)
		err = append(errs, bad...)
	}
	for _, sc := range scs {
		if !failed[sc.File] {
			fmt.Fprintf(stdout, "ok %s\n", sc.File)
		}
	}
	return err
}

func chaosServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("chaos serve", chaosServeUsage)
	file := fs.String("scenario", "", "the scenario file whose faults the mock serves")
	toxiURL := fs.String("toxiproxy", os.Getenv("TOXIPROXY_URL"), "URL of a toxiproxy-server API (env TOXIPROXY_URL); default: embedded")
	proxyFlag := fs.String("proxy", string(mock.ProxyAuto), proxyFlagHelp)
	journal := fs.String("journal", "", "write the server journal there (about 650 B per attempt); default: none")
	verbose := fs.BoolP("verbose", "v", false, "a [mock] line on stderr per attempt")
	envFile := fs.String("env-file", "", "also write the client's KEY=VALUE lines to this file, whole, once serve listens (for test harnesses); default: none")
	if err := parseFlags(fs, args, "run 'retrylab chaos serve --help'", stdout, stderr); err != nil {
		return err
	}
	if *file == "" {
		return usageErrorf("example: retrylab chaos serve --scenario scenarios/forgeflare-overloaded-529-503-backoff.yaml", "--scenario is required")
	}
	proxyMode, err := parseProxyFlag(*proxyFlag)
	if err != nil {
		return err
	}
	sc, err := scenario.LoadScenario(*file)
	if err != nil {
		return err
	}
	// A journal that cannot be written is said now, with a hint, not once
	// the server is up.
	if *journal != "" {
		if err := checkJournal(*journal); err != nil {
			return err
		}
	}
	toxi, err := mock.StartToxiproxy(ctx, *toxiURL)
	if err != nil {
		return fmt.Errorf("start toxiproxy: %w", err)
	}
	defer toxi.Close()
	reportStale(stderr, toxi)
	// Serve runs until Ctrl-C (or SIGTERM), then prints the verdict:
	// PASS/FAIL for each server-side check of the scenario's expect. The
	// signal is how serve ends, so the verdict gives the exit code.
	signalEnds(ctx)
	v, err := chaos.ServeWith(ctx, sc, toxi, chaos.ServeOptions{Journal: *journal, Verbose: *verbose, EnvFile: *envFile, Proxy: proxyMode}, stdout, stderr)
	if err != nil {
		return err
	}
	if v.Failed() {
		return fmt.Errorf("scenario %s: a server-side check failed: %w", sc.Name, errFailed)
	}
	return nil
}

// proxyFlagHelp is --proxy's help, for chaos run and chaos serve.
const proxyFlagHelp = "when clients go through Toxiproxy: auto, only for a scenario whose faults need it (drop, reset, toxics; the others talk to the mock directly); always, every scenario"

// parseProxyFlag reads --proxy: a bad value is a usage error.
func parseProxyFlag(s string) (mock.ProxyMode, error) {
	m, err := mock.ParseProxyMode(s)
	if err != nil || s == "" {
		return "", usageErrorf("--proxy auto (the default: Toxiproxy only for a scenario whose faults need it) or --proxy always", "bad --proxy %q: auto or always", s)
	}
	return m, nil
}

// checkJournal makes sure that chaos serve can append to path: it opens
// it for appending, creating it and its folder.
func checkJournal(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &runfolder.OutputError{What: "--journal", Path: path, Err: err}
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return usageErrorf("give --journal a file path, e.g. runs/serve/server.jsonl", "--journal %s is %s", path, regfile.Kind(fi.Mode()))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return &runfolder.OutputError{What: "--journal", Path: path, Err: err}
	}
	return f.Close()
}

// errWriter remembers the first error of its writer and writes nothing
// after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// reportStale says which proxies of dead runs StartToxiproxy removed from
// an external server, and which it could not.
func reportStale(stderr io.Writer, toxi *mock.Toxiproxy) {
	names, err := toxi.Stale()
	if len(names) > 0 {
		fmt.Fprintf(stderr, "removed %d stale proxies of retrylab runs that died on this machine: %s\n", len(names), strings.Join(names, ", "))
	}
	if err != nil {
		fmt.Fprintf(stderr, "warning: stale proxies of dead runs left on the server: %v\n", err)
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
