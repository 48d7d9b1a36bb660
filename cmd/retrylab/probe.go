package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/probe"
	"github.com/retrylab/retrylab/probe/battery"
	"github.com/retrylab/retrylab/report/profile"
	"github.com/retrylab/retrylab/retry/policyfile"
)

const chaosProbeUsage = `Usage: retrylab chaos probe --client-cmd CMD | --client FILE [flags]

Learns a client's retry policy by experiment. Runs a battery of scenarios
against the client, in parallel, each with its own mock and proxy: every
fault once (400, 401, 403, 404, 408, 409, 429 with and without Retry-After
in seconds, in ms, as an HTTP date and a large one, 500, 502, 503, 504, 529,
an in-stream overload and invalid-request error, a stream cut mid-way, a
reset, a hang, x-should-retry true on a 400 and false on a 503), then a
steady 503 until the client gives up, --samples times, and a steady 429,
cut stream and (Anthropic) 529 the same way, twice each. Prints the profile (schema
retrylab.probe/v1): first how long a steady outage of each kind the client
survives (policy.survivesOutageMs, each checked by one outage just shorter
and one just longer), then what it retried, how often, how long it waited,
the fitted backoff with a confidence per figure, what stayed inconclusive
(never guessed), and how it holds against each preset.

The client is run as chaos run --client-cmd runs it (sh -c, with
ANTHROPIC_BASE_URL / OPENAI_BASE_URL and RETRYLAB_*; see docs/chaos.md
"External clients"), or, with --client FILE, exactly as chaos run runs
the client of that scenario file (client.command, env, home, requires,
and attemptsMatch, and its provider and model unless --provider or --model
is given; a whole scenario or a client block alone). Every deadline counts from the client's first
request at the mock (--start-grace: how long that may take to come), so a
slow start-up is not taken from the hang probe's 15s. Before it starts it
prints an upper bound on its wall time (every scenario running to its
deadline: each exhaustion run stops at --budget) and the figures a client
slower than the deadlines leaves unknown; progress goes to stderr, each line with the time elapsed against
that bound. When a small Retry-After is honoured and 3600s is not, up to
--ceiling-rounds more rounds bisect the ceiling. Ctrl-C prints what was learnt (exit 130).
The client is told to make two requests (RETRYLAB_REQUESTS=2) and the
first is answered ok (the warm-up); one probe runs alone first, and a
client that makes one request whatever it is told is probed without the
warm-up (the profile's warmUp says so).
Exit 0, or 1 with --against when something changed; 2 on bad input, when
the client reached the mock in no probe (the profile says what it showed:
its exit status and the end of its stderr), or when nothing at all was
learnt (learntNothing says why); then no policy is written.

Example:
  retrylab chaos probe --client-cmd 'node testdata/sdk/node/anthropic.mjs' --policy-out sdk.yaml
  retrylab chaos probe --client-cmd './my-agent' --against last-profile.json --format json > profile.json
  retrylab chaos probe --client scenarios/agents/claude-code-overloaded-twice.yaml --format json

Flags:
`

type probeConfig struct {
	clientCmd, clientFile, providerName, model, format, policyOut, against, out, toxiURL string
	parallel, samples, repeat, ceilingRounds                                             int
	budget, startGrace                                                                   time.Duration
	timeScale                                                                            float64
	only, inheritEnv                                                                     []string
	warmUp, perFault                                                                     bool
	// providerSet, modelSet: --provider, --model given (else --client's
	// file says them).
	providerSet, modelSet bool
	// observations is --observations FILE: the journal (probe.Journal).
	observations string
}

func parseChaosProbe(args []string, stdout, stderr io.Writer) (probeConfig, error) {
	var cfg probeConfig
	fs := newFlags("chaos probe", chaosProbeUsage)
	fs.StringVar(&cfg.clientCmd, "client-cmd", "", "the client to probe, run with sh -c (this or --client)")
	fs.StringVar(&cfg.clientFile, "client", "", "the client to probe as a scenario file describes it: its client block (command, env, home, requires) and attemptsMatch (this or --client-cmd)")
	addInheritEnvFlag(fs, &cfg.inheritEnv)
	fs.StringVar(&cfg.providerName, "provider", "anthropic", "wire format: "+strings.Join(probe.ProviderNames(), ", "))
	fs.StringVar(&cfg.model, "model", "", "model the client is told (RETRYLAB_MODEL); default: the provider's")
	fs.StringVar(&cfg.format, "format", "table", "profile format: "+probeFormats.help()+" (one page: the waits against the fitted curve)")
	fs.StringVar(&cfg.policyOut, "policy-out", "", "write the learnt policy as a policy YAML file (client.policy: FILE)")
	fs.StringVar(&cfg.observations, "observations", "", "write what was measured (the provider and every run's observation, probe/testdata/agents' format) as JSON to FILE: the profile is inferred from it again without the client")
	fs.StringVar(&cfg.against, "against", "", "an earlier profile (--format json): say what changed, exit 1 if anything did")
	fs.StringVar(&cfg.out, "out", "runs", "base folder of run folders")
	fs.StringVar(&cfg.toxiURL, "toxiproxy", os.Getenv("TOXIPROXY_URL"), "URL of a toxiproxy-server API; default: embedded")
	fs.IntVar(&cfg.parallel, "parallel", 0, "scenarios at once (default: all; external clients: 2 × cores, more while the machine idles and the CPU the running ones use leaves room, at most 64)")
	fs.IntVar(&cfg.samples, "samples", 4, "exhaustion runs, for the jitter band and the fit (2 or more)")
	fs.IntVar(&cfg.repeat, "repeat", 10, "failures each exhaustion run serves: a client retrying more is reported as 'at least N'")
	fs.DurationVar(&cfg.budget, "budget", 2*time.Minute, "wall time per exhaustion run (the hang and large Retry-After probes get min(budget, 15s)); less probes fewer attempts and leaves figures unknown")
	fs.DurationVar(&cfg.startGrace, "start-grace", battery.DefaultStartGrace, "every deadline counts from the client's first request at the mock, which may take this long to come (a slow start-up); a client that sends none by then is stopped; 0: deadlines count from the client's start")
	fs.Float64Var(&cfg.timeScale, "time-scale", 1, "told to the client (RETRYLAB_TIME_SCALE); waits are divided by it (for clients that scale their waits)")
	fs.IntVar(&cfg.ceilingRounds, "ceiling-rounds", battery.DefaultCeilingRounds, "rounds bisecting the Retry-After ceiling when a small value is honoured and 3600s is not (3 values each, in parallel, each waited up to what --budget allows); 0: off")
	fs.BoolVar(&cfg.perFault, "per-fault", false, "serve every fault --repeat times, not once, so each fault's own retry limit shows (slower)")
	fs.BoolVar(&cfg.warmUp, "warm-up", true, "make the client send a first request that succeeds (RETRYLAB_REQUESTS=2) before the probed one, when one probe run alone first shows it makes the two requests it is told; false: no warm-up and no such first probe")
	fs.StringSliceVar(&cfg.only, "only", nil, "probe only these faults (comma-separated names, e.g. 429,reset); the exhaustion always runs")
	hint := "run 'retrylab chaos probe --help'"
	if err := parseFlags(fs, args, hint, stdout, stderr); err != nil {
		return cfg, err
	}
	cfg.providerSet, cfg.modelSet = fs.Changed("provider"), fs.Changed("model")
	if fs.NArg() > 0 {
		return cfg, usageErrorf(hint, "chaos probe takes no arguments, got %q", strings.Join(fs.Args(), " "))
	}
	return cfg, checkProbeConfig(cfg)
}

// checkProbeConfig rejects bad values before anything runs.
// The probe's bounds: what a flag may ask for before the probe builds a
// single scenario (a million failures per run took gigabytes first).
const (
	maxProbeSamples  = 100
	maxProbeRepeat   = 1000
	maxCeilingRounds = 20
	maxProbeParallel = 1000
	maxProbeBudget   = 24 * time.Hour
)

func checkProbeConfig(cfg probeConfig) error {
	switch {
	case cfg.clientCmd != "" && cfg.clientFile != "":
		return usageErrorf("give one: --client-cmd CMD runs a command with sh -c, --client FILE the client a scenario file describes", "--client-cmd and --client both given")
	case strings.TrimSpace(cfg.clientCmd) == "" && cfg.clientFile == "":
		return usageErrorf("give the command that runs your client, e.g. --client-cmd 'python3 agent.py', or a scenario file that describes it, --client agent.yaml", "--client-cmd or --client is required")
	}
	if _, err := probeFormats.pick(cfg.format); err != nil {
		return err
	}
	switch {
	case cfg.samples < 2:
		return usageErrorf("the jitter band needs repeated samples: --samples 2 or more (default 4)", "bad --samples %d", cfg.samples)
	case cfg.startGrace < 0 || cfg.startGrace > maxProbeBudget:
		return usageErrorf(fmt.Sprintf("give 0 (deadlines from the client's start) up to %s, e.g. --start-grace 1m for an agent slow to start", maxProbeBudget), "bad --start-grace %s", cfg.startGrace)
	case cfg.repeat < 1 || cfg.parallel < 0 || cfg.ceilingRounds < 0:
		return usageErrorf("--repeat must be 1 or more, --parallel and --ceiling-rounds not negative", "bad --repeat, --parallel or --ceiling-rounds")
	case cfg.budget < time.Second:
		return usageErrorf("give at least 1s, e.g. --budget 30s", "bad --budget %s", cfg.budget)
	case cfg.samples > maxProbeSamples || cfg.repeat > maxProbeRepeat || cfg.ceilingRounds > maxCeilingRounds ||
		cfg.parallel > maxProbeParallel || cfg.budget > maxProbeBudget:
		return usageErrorf(fmt.Sprintf("at most --samples %d, --repeat %d, --ceiling-rounds %d, --parallel %d, --budget %s: each is a scenario, a failure or a round the probe builds and runs",
			maxProbeSamples, maxProbeRepeat, maxCeilingRounds, maxProbeParallel, maxProbeBudget),
			"--samples %d, --repeat %d, --ceiling-rounds %d, --parallel %d or --budget %s is too large", cfg.samples, cfg.repeat, cfg.ceilingRounds, cfg.parallel, cfg.budget)
	}
	if why := scenario.CheckTimeScale(cfg.timeScale); why != "" {
		return usageErrorf(scenario.TimeScaleHint, "bad --time-scale: %s", why)
	}
	if err := checkInheritEnv(cfg.inheritEnv); err != nil {
		return err
	}
	if _, err := probe.LookupProvider(cfg.providerName); err != nil {
		return usageErrorf("use --provider "+orList(probe.ProviderNames()), "%v", err)
	}
	return nil
}

func chaosProbe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseChaosProbe(args, stdout, stderr)
	if err != nil {
		return err
	}
	var client *scenario.ClientFile
	if cfg.clientFile != "" {
		if client, err = loadProbeClient(cfg.clientFile); err != nil {
			return err
		}
		if err := probeClientWire(&cfg, client, stderr); err != nil {
			return err
		}
	}
	prov, _ := probe.LookupProvider(cfg.providerName)
	for _, name := range cfg.only {
		if _, ok := prov.Fault(name); !ok {
			return usageErrorf("fault names are those of the profile's faults[].fault, e.g. 429, reset, hang", "--only: unknown fault %q", name)
		}
	}
	var before *probe.Profile
	if cfg.against != "" {
		if before, err = probe.LoadProfile(cfg.against); err != nil {
			return usageErrorf("give a profile written by chaos probe --format json", "--against: %v", err)
		}
	}
	if err := runfolder.CheckOutDir(cfg.out); err != nil {
		return err
	}
	// The learnt policy is written at the end: where, is checked now.
	if cfg.policyOut != "" {
		if err := runfolder.CheckOutFile("--policy-out", cfg.policyOut); err != nil {
			return err
		}
	}
	if cfg.observations != "" {
		if err := runfolder.CheckOutFile("--observations", cfg.observations); err != nil {
			return err
		}
	}
	toxi, err := mock.StartToxiproxy(ctx, cfg.toxiURL)
	if err != nil {
		return fmt.Errorf("start toxiproxy: %w", err)
	}
	defer toxi.Close()
	opts := battery.Options{Provider: prov, Model: cfg.model, Samples: cfg.samples, Repeat: cfg.repeat,
		Budget: cfg.budget, TimeScale: cfg.timeScale, Only: cfg.only, NoWarmUp: !cfg.warmUp, PerFault: cfg.perFault,
		CeilingRounds: cfg.ceilingRounds, StartGrace: cfg.startGrace}
	r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: cfg.out, ClientCmd: cfg.clientCmd, ClientFile: client,
		InheritEnv: cfg.inheritEnv, Parallel: cfg.parallel, Progress: stderr}
	if before != nil {
		r.Prior = &before.Policy
	}
	var reported onceGate // the profile is printed once: by the forced exit, or at the end
	defer atForcedExit(ctx, func(d time.Duration) {
		// As chaos run's (forcedExit): what finished is written, printed
		// (and --policy-out), the proxies deleted, within d.
		prof := r.Interim()
		var wg sync.WaitGroup
		wg.Go(func() { r.Flush(d) })
		wg.Go(func() { _ = toxi.DeleteAll(d) })
		if prof != nil {
			wg.Go(func() {
				reported.do(func() {
					_ = writeProbe(cfg, withChanges(prof, before), prov, stdout, stderr)
					_ = writeObservations(cfg, r.Journal(), stderr)
				})
			})
		}
		wg.Wait()
	})()
	prof, runErr := r.Run(ctx, opts)
	if prof == nil {
		return runErr
	}
	var werr error
	reported.do(func() {
		werr = writeProbe(cfg, withChanges(prof, before), prov, stdout, stderr)
		werr = cmp.Or(werr, writeObservations(cfg, r.Journal(), stderr))
	})
	if werr != nil {
		return werr
	}
	return probeExit(ctx, prof, before, runErr)
}

// loadProbeClient loads --client FILE as chaos run loads a scenario's
// client (scenario.LoadClient: file, line, field and a hint for each
// problem; exit 2), and refuses one whose client.requires is not here:
// every probe would be skipped.
func loadProbeClient(path string) (*scenario.ClientFile, error) {
	c, err := scenario.LoadClient(path)
	if err != nil {
		var le scenario.LoadErrors
		if errors.As(err, &le) {
			return nil, usageErrorf(le.Hint(), "--client: %s", le.Error())
		}
		return nil, usageErrorf("give a scenario file that describes the client", "--client: %v", err)
	}
	if why, hint := c.Missing(); why != "" {
		return nil, usageErrorf(cmp.Or(hint, "install it, or run from the folder the file's client.requires is relative to"), "--client %s: the client %s", path, why)
	}
	return c, nil
}

// withChanges sets prof.Changes from an earlier profile, if any.
func withChanges(prof, before *probe.Profile) *probe.Profile {
	if before != nil {
		prof.Changes = probe.Compare(before, prof)
	}
	return prof
}

// writeObservations writes --observations FILE: what the profile was
// inferred from (probe.Journal), written whatever was learnt, since it is
// what was measured.
func writeObservations(cfg probeConfig, j probe.Journal, stderr io.Writer) error {
	if cfg.observations == "" {
		return nil
	}
	data, err := j.Marshal()
	if err != nil {
		return fmt.Errorf("the observations do not encode (a bug of the probe): %w", err)
	}
	if err := runfolder.WriteFileAtomic(cfg.observations, data); err != nil {
		return &runfolder.OutputError{What: "--observations", Path: cfg.observations, Err: err}
	}
	fmt.Fprintf(stderr, "wrote %d observation(s) to %s\n", len(j.Observations), cfg.observations)
	return nil
}

// writeProbe prints the profile and writes the policy file.
func writeProbe(cfg probeConfig, prof *probe.Profile, prov probe.Provider, stdout, stderr io.Writer) error {
	render, _ := probeFormats.pick(cfg.format) // checked by checkProbeConfig
	if err := render(stdout, prof); err != nil {
		return err
	}
	if before := prof.Changes; cfg.against != "" {
		fmt.Fprintf(stderr, "against %s: %d change(s)\n", cfg.against, len(before))
		for _, c := range before {
			fmt.Fprintf(stderr, "  %s: %s → %s\n", c.Figure, c.Before, c.After)
		}
	}
	if cfg.policyOut == "" {
		return nil
	}
	if prof.Unreached != "" || prof.LearntNothing != "" || prof.Nondeterministic != "" {
		// A policy of nothing would claim what was never seen; a file
		// already there (an earlier probe's) is left as it was.
		fmt.Fprintf(stderr, "did not write the policy to %s: nothing was learnt\n", cfg.policyOut)
		return nil
	}
	// Learn → verify: the file holds every run it was learnt from, or
	// names what it leaves out (prof.Unmodelled, in the table too).
	text, _, holds := probe.LearntPolicy(prof, prov)
	if _, err := policyfile.Parse([]byte(text), cfg.policyOut); err != nil {
		return fmt.Errorf("the learnt policy does not parse (a bug of the probe): %w", err)
	}
	if !holds {
		return fmt.Errorf("the learnt policy does not hold the runs it was learnt from, even leaving out what it cannot model (a bug of the probe); not written to %s", cfg.policyOut)
	}
	if err := runfolder.WriteFileAtomic(cfg.policyOut, []byte(text)); err != nil {
		return &runfolder.OutputError{What: "--policy-out", Path: cfg.policyOut, Err: err}
	}
	fmt.Fprintf(stderr, "wrote the learnt policy to %s (client.policy: %s)\n", cfg.policyOut, cfg.policyOut)
	return nil
}

// probeFormats are chaos probe's profile formats.
var probeFormats = formats[func(io.Writer, *probe.Profile) error]{chaos: true, list: []format[func(io.Writer, *probe.Profile) error]{
	{"table", profile.Table}, {"json", profileJSON}, {"markdown", profile.Markdown}, {"html", profile.HTML},
}}

// profileJSON writes the profile as `chaos probe --format json` does: the
// document itself, indented.
func profileJSON(w io.Writer, p *probe.Profile) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// unreachedHint is the hint when the client reached the mock in no probe
// (exit 2: the client command, not a figure, is what is wrong).
var unreachedHint = "run the client (--client-cmd, or --client's client.command) by hand: it must send its requests to the base URL it is given " +
	"(" + orList(wire.BaseURLVars()) + "; docs/chaos.md \"External clients\"); " +
	"each probe's stdout.txt and stderr.txt are in "

// learntNothingHint is the hint when the client reached the mock but no
// decision and no figure could be told (exit 2: a profile of nothing is
// no result).
const learntNothingHint = "read each probe's stderr.txt and result.json to see why; a client slower than the deadlines needs a larger --budget, " +
	"one that makes one request whatever it is told --warm-up=false; the run folder is "

// nondeterministicHint is the hint when the client's runs of one fault
// disagree (exit 2: no decision of a run can be trusted).
const nondeterministicHint = "a client must decide alike on the same failure every run to be profiled: make its behaviour repeatable (a fixed seed, no state kept between runs, no other traffic on its key), then probe it again; the run folder is "

func probeExit(ctx context.Context, prof *probe.Profile, before *probe.Profile, runErr error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: the profile holds what was learnt; results so far in %s", context.Cause(ctx), prof.RunDir)
	}
	if runErr != nil {
		return runErr
	}
	if prof.Unreached != "" {
		return usageErrorf(unreachedHint+prof.RunDir, "nothing was measured: %s", prof.Unreached)
	}
	if prof.LearntNothing != "" {
		return usageErrorf(learntNothingHint+prof.RunDir, "nothing was learnt: %s", prof.LearntNothing)
	}
	if prof.Nondeterministic != "" {
		return usageErrorf(nondeterministicHint+prof.RunDir, "nothing was learnt: %s", prof.Nondeterministic)
	}
	if before != nil && len(prof.Changes) > 0 {
		return fmt.Errorf("%d change(s) since the earlier profile: %w", len(prof.Changes), errFailed)
	}
	return nil
}

// probeClientWire takes the wire format and model from --client's file,
// as chaos run runs its client, unless --provider or --model says
// otherwise (then said on stderr when it differs): a file's client told
// another provider than the one it speaks would never reach the mock.
func probeClientWire(cfg *probeConfig, c *scenario.ClientFile, stderr io.Writer) error {
	if !cfg.providerSet && c.Provider != "" {
		if _, err := probe.LookupProvider(c.Provider); err != nil {
			return usageErrorf("give --provider "+strings.Join(probe.ProviderNames(), ", ")+" to probe it with another wire format",
				"--client %s: provider %q: %v", c.File, c.Provider, err)
		}
		cfg.providerName = c.Provider
	} else if c.Provider != "" && c.Provider != cfg.providerName {
		fmt.Fprintf(stderr, "note: --provider %s, not the provider of %s (%s)\n", cfg.providerName, c.File, c.Provider)
	}
	if !cfg.modelSet && c.Model != "" && cfg.providerName == c.Provider {
		cfg.model = c.Model
	}
	return nil
}
