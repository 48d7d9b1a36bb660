package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
)

const usage = `retrylab tests and analyses the retry logic of LLM agents.

Usage:
  retrylab chaos run [PATH...]        run scenario files or folders (default scenarios/)
  retrylab chaos serve --scenario F   mock server + proxy for a client you start yourself
  retrylab chaos validate PATH...     check scenario files without running them
  retrylab chaos probe --client-cmd C learn a client's retry policy by experiment
  retrylab trace analyze [PATH...]    retry rates, delays, escalations and alerts
  retrylab trace compare BASE CUR     metrics side by side, exit 1 on a regression
  retrylab trace export PATH...       trace v1 as OTLP/JSON spans (--format otlp)
  retrylab trace failures [PATH...]   every failed attempt, one row each (CSV or JSONL)
  retrylab report html PATH... -o F   one HTML page: charts and a timeline per scenario
  retrylab matrix MANIFEST -o DIR     probe every client of a manifest: the retry matrix
  retrylab version                    print the version

Run 'retrylab <command> --help' for a command's flags and a worked example.

Example:
  retrylab chaos run --out runs
  retrylab trace analyze runs/ --format markdown

Exit codes: 0 success, 1 a scenario failed or an alert fired, 2 bad usage or input,
130 interrupted by SIGINT (143 by SIGTERM).
`

// Exit codes, as DESIGN.md defines them.
const (
	exitOK      = 0
	exitFailed  = 1 // a scenario failed or an alert fired
	exitBadUser = 2 // bad usage or bad input
)

// errFailed is returned (wrapped or not) when the command ran correctly but
// its verdict is negative: a scenario failed or an alert fired. It maps to exit 1.
var errFailed = errors.New("failed")

// userError is bad usage or bad input: exit 2. Hint tells the user what to do next.
type userError struct {
	msg  string
	hint string
}

func (e *userError) Error() string { return e.msg }

// usageErrorf returns a *userError with a hint.
func usageErrorf(hint, format string, args ...any) error {
	return &userError{msg: fmt.Sprintf(format, args...), hint: hint}
}

// exitCode reports err on stderr the way the CLI promises
// ("error: ..." then "hint: ...") and returns the process exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errFailed) {
		return exitFailed
	}
	if errors.Is(err, errHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "error: %s\n", err)
	if isInterrupt(err) {
		// mainExit returns 143 instead when the signal was SIGTERM.
		return exitInterrupted
	}
	var ue *userError
	if errors.As(err, &ue) {
		if ue.hint != "" {
			fmt.Fprintf(stderr, "hint: %s\n", ue.hint)
		}
		return exitBadUser
	}
	var he interface{ Hint() string }
	if errors.As(err, &he) && he.Hint() != "" {
		fmt.Fprintf(stderr, "hint: %s\n", he.Hint())
	}
	// Anything else is bad input too (unreadable file, bad scenario...):
	// the command could not produce a verdict.
	return exitBadUser
}

// errHelp is returned after printing --help: exit 0.
var errHelp = errors.New("help requested")

// run is the whole CLI: main only calls it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageErrorf("run 'retrylab --help'", "no command given")
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "version", "--version":
		if len(args) == 2 && isHelp(args[1]) {
			fmt.Fprint(stdout, versionUsage)
			return nil
		}
		if len(args) > 1 {
			return usageErrorf("run 'retrylab version'", "version takes no arguments, got %q", strings.Join(args[1:], " "))
		}
		bi, _ := debug.ReadBuildInfo()
		fmt.Fprint(stdout, versionText(withLinkerStamp(bi)))
		return nil
	case "chaos":
		return runGroup(ctx, "chaos", chaosUsage, args[1:], stdout, stderr, map[string]command{
			"run":      chaosRun,
			"serve":    chaosServe,
			"validate": chaosValidate,
			"probe":    chaosProbe,
		})
	case "matrix":
		return retrylabMatrix(ctx, args[1:], stdout, stderr)
	case "trace":
		return runGroup(ctx, "trace", traceUsage, args[1:], stdout, stderr, map[string]command{
			"analyze":  traceAnalyze,
			"compare":  traceCompare,
			"export":   traceExport,
			"failures": traceFailures,
			"rules":    traceRules,
		})
	case "report":
		return runGroup(ctx, "report", reportUsage, args[1:], stdout, stderr, map[string]command{
			"html": reportHTML,
		})
	}
	return usageErrorf("run 'retrylab --help' for the list of commands", "unknown command %q", args[0])
}

type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

const versionUsage = `Usage: retrylab version

Example:
  retrylab version
`

const chaosUsage = `Usage: retrylab chaos <run|serve|validate|probe> [flags]

  run       run scenario files or folders (default scenarios/) and check the client's retries
  serve     mock server + proxy for one scenario, for a client you start yourself
  validate  check scenario files without running them
  probe     learn a client's retry policy by experiment and write it down

Run 'retrylab chaos <command> --help' for a command's flags.

Example:
  retrylab chaos validate scenarios/
  retrylab chaos run --time-scale 0.05 scenarios/
`

const traceUsage = `Usage: retrylab trace <analyze|compare|export|failures|rules> [flags]

  analyze   retry rates, delays, escalations and alerts from run folders or trace files
  compare   two sets of runs side by side, with a regression verdict per metric
  export    trace v1 as OTLP/JSON spans (--format otlp), for an OpenTelemetry backend
  failures  every failed attempt, one row each, for a spreadsheet or a database
  rules     Prometheus recording and alerting rules with analyze's alert verdicts

Run 'retrylab trace <command> --help' for its flags.

Example:
  retrylab trace analyze runs/ --format markdown
`

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "help"
}

// runGroup runs the subcommand args[0] of group; usage is the group's help
// text, which lists the subcommands.
func runGroup(ctx context.Context, group, usage string, args []string, stdout, stderr io.Writer, cmds map[string]command) error {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageErrorf(fmt.Sprintf("run 'retrylab %s %s --help'", group, names[0]), "missing %s subcommand", group)
	}
	if isHelp(args[0]) {
		fmt.Fprint(stdout, usage)
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		return usageErrorf(fmt.Sprintf("%s subcommands: %s", group, strings.Join(names, ", ")), "unknown %s subcommand %q", group, args[0])
	}
	return c(ctx, args[1:], stdout, stderr)
}

// Set by scripts/dist.sh with -ldflags -X: the release version and the
// VCS stamp, for builds where the go command stamps none (a git worktree,
// whose .git is a file the go command does not recognise, or a source
// tarball). What the go command stamped wins.
var (
	releaseVersion string
	vcsRevision    string
	vcsTime        string
	vcsModified    string
)

// withLinkerStamp returns bi with the -X values filling what it lacks.
func withLinkerStamp(bi *debug.BuildInfo) *debug.BuildInfo {
	if releaseVersion == "" && vcsRevision == "" {
		return bi
	}
	out := &debug.BuildInfo{}
	if bi != nil {
		c := *bi
		c.Settings = append([]debug.BuildSetting(nil), bi.Settings...)
		out = &c
	}
	if v := out.Main.Version; (v == "" || v == "(devel)") && releaseVersion != "" {
		out.Main.Version = "v" + strings.TrimPrefix(releaseVersion, "v")
	}
	has := map[string]bool{}
	for _, s := range out.Settings {
		has[s.Key] = true
	}
	for _, kv := range [][2]string{{"vcs.revision", vcsRevision}, {"vcs.time", vcsTime}, {"vcs.modified", vcsModified}} {
		if kv[1] != "" && !has[kv[0]] && !has["vcs.revision"] {
			out.Settings = append(out.Settings, debug.BuildSetting{Key: kv[0], Value: kv[1]})
		}
	}
	return out
}

// version is this binary's version as versionOf reads it (with the
// linker's stamp where the go command wrote none): what matrix.json
// records as the retrylab that probed.
func version() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(withLinkerStamp(bi))
}

// versionOf is the module version when built from a tagged module (go
// install module@v1.2.3, or a build at a tagged commit: Go 1.24+ stamps
// the tag), else the VCS revision, else "devel".
func versionOf(bi *debug.BuildInfo) string {
	if bi == nil {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel-" + s.Value[:12]
		}
	}
	return "devel"
}

// versionText is what 'retrylab version' prints: the version on the first
// line, then the VCS stamp the go command wrote into the binary (commit,
// its time, whether the tree had uncommitted changes) and the Go version
// and platform, one "key: value" a line, for bug reports and for checking
// that a release binary is what its tag says.
func versionText(bi *debug.BuildInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "retrylab %s\n", versionOf(bi))
	if bi == nil {
		return b.String()
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			fmt.Fprintf(&b, "commit: %s\n", s.Value)
		case "vcs.time":
			fmt.Fprintf(&b, "commit time: %s\n", s.Value)
		case "vcs.modified":
			fmt.Fprintf(&b, "modified: %s\n", s.Value)
		}
	}
	if bi.GoVersion != "" {
		fmt.Fprintf(&b, "go: %s\n", bi.GoVersion)
	}
	goos, goarch := "", ""
	for _, s := range bi.Settings {
		switch s.Key {
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "" && goarch != "" {
		fmt.Fprintf(&b, "platform: %s/%s\n", goos, goarch)
	}
	return b.String()
}
