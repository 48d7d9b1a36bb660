package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/retry/provider"
)

// runExternal runs an external client: cmd with `sh -c` if set, else the
// scenario's client.command as an argument vector, in the current folder.
// It is given the proxy URL, the fake API key, the trace path and the
// scenario's model and request count in its environment, and a HOME of its
// own in dir, and of the runner's environment only what externalEnv lets
// through; its stdout and
// stderr go to the run folder with secrets redacted. Exit code 0 is the
// success outcome, any other exit is failure; a client still running at the
// deadline is killed (its whole process group) and fails the "client" check,
// unless it was still retrying and the scenario expects an outcome (the
// outcome check speaks for it: verify.KillIsOutcome).
// Its process group is killed after every exit, too, so that nothing it left
// in the background outlives it; on Linux a supervisor kills it if the
// runner dies first (see StartClient). Its output is kept for
// clientWaitDelay after its exit, and up to MaxKeptOutput per stream.
//
// A fleet's client (who) is given its own API key (mock/fleet.go).
func (r *Runner) runExternal(ctx context.Context, sc *scenario.Scenario, baseURL, dir, tracePath, cmd string, scale float64, deadline time.Duration, sec *redact.Secrets, who fleetMember) clientRun {
	argv, display := client.ClientArgv(sc, cmd)
	stdout := &redact.RedactFile{Path: filepath.Join(dir, "stdout.txt"), Sec: sec, Limit: redact.MaxKeptOutput}
	stderr := &redact.RedactFile{Path: filepath.Join(dir, "stderr.txt"), Sec: sec, Limit: redact.MaxKeptOutput}
	defer stdout.Close()
	defer stderr.Close()
	exit := &client.ClientExit{Command: display, ExitCode: -1}
	out := clientRun{outcome: "failure", exit: exit}
	inherit := client.InheritNames(sc, r.InheritEnv)
	env, vars, missing, err := externalEnv(sc, inherit, baseURL, dir, tracePath, scale, r.telemetryEnv(sc, dir, inherit))
	if err != nil {
		exit.Problem = "could not start: " + provider.Redact(err.Error())
		fmt.Fprintln(stderr, exit.Problem)
		return out
	}
	env, vars = who.withKey(env, vars)
	if len(missing) > 0 {
		// Not an error: a variable the runner lacks is one the client
		// would lack run by hand too. Said where the client's own
		// output is read.
		fmt.Fprintf(stderr, "retrylab: inheritEnv: %s not set in retrylab's environment: the client runs without it\n", strings.Join(missing, ", "))
	}
	if cmd == "" {
		for i, a := range argv {
			argv[i] = client.ExpandHarness(a, vars)
		}
	}
	p, err := client.StartClient(argv, env, stdout, stderr)
	if err != nil {
		problem, hint := client.StartProblem(sc, cmd, argv, err)
		exit.Problem, out.hint = "could not start: "+problem, hint
		fmt.Fprintln(stderr, exit.Problem)
		return out
	}
	out.pgid = p.Pgid
	client.TicketFrom(ctx).Started(p.Pgid)
	if p.Pgid != 0 {
		unwatch := r.lag.Watch(p.Pgid)
		defer unwatch()
	}
	st := client.WaitClient(ctx, p, r.killTimer(dir, deadline), exit)
	if strings.HasPrefix(exit.Problem, "killed after ") {
		out.stopped = time.Now()
	}
	// A process the client leaves behind (a setsid daemon, say) may hold
	// stdout or stderr open for ever: its output is kept for
	// clientWaitDelay after the exit, no longer.
	if !p.Drain(clientWaitDelay, ctx.Done()) && exit.Problem == "" && ctx.Err() == nil {
		exit.Problem = fmt.Sprintf("left processes running: the client exited (code %d) but its stdout/stderr were still held open %s later; its process group was killed (a process in another session cannot be), and output after the exit is not kept", st.Code, clientWaitDelay)
	}
	// Whatever ended the client, what it left running in its process group
	// (a background job that does not hold its output) could go on sending
	// requests: kill it. ESRCH (the group is gone) is fine.
	p.Kill()
	p.Drain(0, nil)
	if ctx.Err() != nil {
		// Interrupted: the supervisor ends once its group is killed, but
		// nothing more of the run waits for it (if the runner exits first,
		// Pdeathsig ends it).
		go func() { _ = p.Reap() }()
	} else if err := p.Reap(); err != nil {
		fmt.Fprintln(stderr, "retrylab:", err)
	}
	exitStatus(st, exit)
	if exit.ExitCode == 0 && exit.Problem == "" {
		out.outcome = "success"
	}
	if err := redact.RedactTrace(tracePath, sec); err != nil {
		fmt.Fprintln(stderr, "retrylab: redacting the client's trace:", err)
	}
	return out
}

// externalEnv is an external client's whole environment, in the layers
// client/clientenv.go describes: what it takes of the runner's environment (the
// allowlist, BaseEnv), the toolchains' caches, QuietEnv, the runner's
// variables named in inherit (InheritedEnv), client.env, then the
// harness's own variables (telemetry: the run's OTLP receiver,
// telemetry.go) and the client's home in dir, which client.env cannot
// name. It makes that home, with QuietHome and client.home in it, and
// returns the harness's variables too, for ${NAME} in client.command
// (client.env values and client.home contents are expanded here), and the
// names of inherit the runner's environment lacks.
func externalEnv(sc *scenario.Scenario, inherit []string, baseURL, dir, tracePath string, scale float64, telemetry []string) (env []string, vars map[string]string, missing []string, err error) {
	home, err := client.ClientHome(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	harness := clientEnv(sc, baseURL, tracePath, scale)
	vars = client.HarnessVars(harness, telemetry, home)
	if err := client.WriteHomeFiles(filepath.Join(dir, client.ClientHomeDir), sc.Client.Home, vars); err != nil {
		return nil, nil, nil, err
	}
	runner := os.Environ()
	env = client.BaseEnv(runner)
	userHome, _ := os.UserHomeDir()
	userCache, _ := os.UserCacheDir()
	env = append(env, client.ToolchainEnv(env, userHome, userCache)...)
	env = append(env, client.QuietEnv...)
	inherited, missing := client.InheritedEnv(runner, inherit)
	env = append(env, inherited...)
	env = append(env, client.ScenarioEnv(sc.Client.Env, vars)...)
	env = append(env, harness...)
	env = append(env, telemetry...)
	return append(env, home...), vars, missing, nil
}

// clientEnv is what an external client is told in its environment: where
// the provider APIs are (the proxy), a fake key, where to write its trace,
// and the scenario's provider, model, requests and time scale.
func clientEnv(sc *scenario.Scenario, baseURL, tracePath string, scale float64) []string {
	env := wire.BaseURLEnv(baseURL)
	env = append(env, "RETRYLAB_BASE_URL="+baseURL)
	env = append(env, wire.KeyEnv(redact.FakeAPIKey)...)
	return append(env,
		"RETRYLAB_TRACE="+tracePath,
		"RETRYLAB_PROVIDER="+sc.Provider,
		"RETRYLAB_MODEL="+sc.Model,
		fmt.Sprintf("RETRYLAB_REQUESTS=%d", sc.Requests),
		fmt.Sprintf("RETRYLAB_TIME_SCALE=%g", scale),
		"RETRYLAB_SCENARIO="+sc.Name,
	)
}

// exitStatus records how the client ended: its exit code, or the signal
// that killed it, or why it could not be waited for.
func exitStatus(st client.ClientStatus, exit *client.ClientExit) {
	switch {
	case st.Err != nil:
		exit.Problem = "wait: " + st.Err.Error()
	case st.Signaled:
		if exit.Problem == "" {
			exit.Problem = "crashed: killed by signal " + st.Signal
		}
	default:
		exit.ExitCode = st.Code
	}
}

// clientWaitDelay is how long an exited client's output may stay open.
const clientWaitDelay = 2 * time.Second

// killTimer is the kill timer of the client of the scenario running in
// dir (Runner.StartGrace).
func (r *Runner) killTimer(dir string, deadline time.Duration) client.KillTimer {
	kt := client.KillTimer{Deadline: deadline}
	if r.StartGrace <= 0 {
		return kt
	}
	if first, ok := r.firsts.Load(dir); ok {
		kt.Grace, kt.First = r.StartGrace, first.(<-chan struct{})
	}
	return kt
}
