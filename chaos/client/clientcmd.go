package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/retry/provider"
)

// CommandError is a client.command whose program cannot be started: it
// names the program as written, the path it was resolved to and against
// what, and why that path cannot be run.
type CommandError struct {
	Program string // argv[0] as written in client.command
	Path    string // what it resolved to; "" for a bare name not in PATH
	From    string // what Path is relative to, for the message
	Reason  string // "does not exist", "is a folder", "is not executable (mode -rw-r--r--)", "is not in PATH"
}

func (e *CommandError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("client.command %q %s", e.Program, e.Reason)
	}
	return fmt.Sprintf("client.command %q (resolved to %s, %s) %s", e.Program, e.Path, e.From, e.Reason)
}

// Hint says what to do about it.
func (e *CommandError) Hint() string {
	switch {
	case e.Path == "":
		return "install " + e.Program + " or put it in PATH, or write the program's path; list it in client.requires to skip the scenario where it is missing"
	case strings.HasPrefix(e.Reason, "is not executable"):
		return "make it executable (chmod +x " + e.Path + "), or start it through its interpreter, e.g. [\"sh\", \"" + e.Program + "\"]"
	case e.Reason == "is a folder":
		return "client.command's first item is the program to run: name the executable inside the folder"
	}
	return "a program with a slash is looked up from the folder retrylab runs in, then next to the scenario file; check the path, or build the client first"
}

// commandProblem returns why the program of argv (sc's client.command as
// resolveArgs made it) cannot be started, or nil. A bare name is looked up
// in PATH as exec does; a path with a slash is resolved against the
// current folder, where the client runs.
func commandProblem(sc *scenario.Scenario, argv []string) *CommandError {
	if len(argv) == 0 || len(sc.Client.Command) == 0 {
		return nil
	}
	prog, written := argv[0], sc.Client.Command[0]
	if !strings.ContainsAny(prog, `/\`) {
		if _, err := exec.LookPath(prog); err != nil && !errors.Is(err, exec.ErrDot) {
			return &CommandError{Program: written, Reason: "is not in PATH"}
		}
		return nil
	}
	e := &CommandError{Program: written, Path: prog, Reason: programReason(prog)}
	if e.Reason == "" {
		return nil
	}
	switch {
	case prog != written:
		e.From = "from the scenario file's folder"
	case filepath.IsAbs(prog):
		e.From = "an absolute path"
	default:
		wd, _ := os.Getwd()
		e.From = "from the current folder " + wd
		if abs, err := filepath.Abs(prog); err == nil {
			e.Path = abs
		}
		// resolveArgs tried the scenario file's folder too.
		if alt := filepath.Join(filepath.Dir(sc.File), prog); sc.File != "" && e.Reason == "does not exist" && filepath.Dir(sc.File) != "." {
			e.From += "; " + alt + " next to the scenario file was tried too"
		}
	}
	return e
}

// programReason says why the program at path cannot be run, or "".
func programReason(path string) string {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case err != nil:
		return "cannot be read: " + strings.TrimPrefix(err.Error(), "stat "+path+": ")
	case fi.IsDir():
		return "is a folder"
	case runtime.GOOS != "windows" && fi.Mode()&0o111 == 0:
		return fmt.Sprintf("is not executable (mode %v)", fi.Mode())
	}
	return ""
}

// CheckCommands reports, before anything runs, the scenarios whose
// client.command cannot be started here (the program does not exist, is
// a folder, is not executable, or is not in PATH), each as a LoadError at
// client.command with a hint. Scenarios whose client.requires are missing
// (they are skipped) are not checked, nor is any with clientCmd (chaos
// run's --client-cmd, which replaces client.command).
func CheckCommands(scs []*scenario.Scenario, clientCmd string) scenario.LoadErrors {
	if clientCmd != "" {
		return nil
	}
	var errs scenario.LoadErrors
	for _, sc := range scs {
		if scenario.MissingRequirement(sc) != nil {
			continue
		}
		argv, _ := ClientArgv(sc, "")
		if ce := commandProblem(sc, argv); ce != nil {
			errs = append(errs, &scenario.LoadError{File: sc.File, Line: sc.Lines["client.command"], Field: "client.command",
				Msg: strings.TrimPrefix(ce.Error(), "client.command "), Hint: ce.Hint()})
		}
	}
	return errs
}

// StartProblem says why the external client of sc (argv; cmd is
// --client-cmd) could not be started with err, and what to do: the
// program's CommandError when it has one, else err itself.
func StartProblem(sc *scenario.Scenario, cmd string, argv []string, err error) (problem, hint string) {
	if cmd == "" {
		if ce := commandProblem(sc, argv); ce != nil {
			return ce.Error(), ce.Hint()
		}
	}
	what := "client.command"
	if cmd != "" {
		what = "--client-cmd (run with sh -c)"
	}
	return provider.Redact(err.Error()), "check " + what + ": its program must exist and be executable from the folder retrylab runs in"
}

// ClientArgv is the command line of an external client and how it is
// shown: cmd (--client-cmd) under `sh -c`, else the scenario's
// client.command with paths resolved.
func ClientArgv(sc *scenario.Scenario, cmd string) (argv []string, display string) {
	if cmd != "" {
		return []string{"sh", "-c", cmd}, cmd
	}
	return resolveArgs(sc.Client.Command, sc.File), strings.Join(sc.Client.Command, " ")
}

// resolveArgs resolves client.command's relative paths for a scenario file
// stored elsewhere: the command runs in the current folder, and an argument
// that names no file there but names one relative to the scenario file's
// folder is replaced by that path. The program (argv[0]) is resolved so only
// when it has a slash (a bare name is looked up in PATH); flags ("-...") and
// absolute paths are left alone.
func resolveArgs(args []string, scenarioFile string) []string {
	out := slices.Clone(args)
	if scenarioFile == "" {
		return out
	}
	base := filepath.Dir(scenarioFile)
	for i, a := range out {
		if a == "" || strings.HasPrefix(a, "-") || filepath.IsAbs(a) || (i == 0 && !strings.Contains(a, "/")) {
			continue
		}
		if _, err := os.Stat(a); err == nil {
			continue
		}
		p := filepath.Join(base, a)
		if _, err := os.Stat(p); err == nil {
			if i == 0 && !strings.Contains(p, "/") {
				p = "./" + p
			}
			out[i] = p
		}
	}
	return out
}
