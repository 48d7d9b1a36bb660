package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/yamldiag"
	"github.com/retrylab/retrylab/matrix"
	"github.com/retrylab/retrylab/probe"
	"github.com/retrylab/retrylab/probe/battery"
)

const matrixUsage = `Usage: retrylab matrix MANIFEST -o DIR [flags]

Probes every client of MANIFEST (as chaos probe does, each with the whole
battery) and writes the retry matrix to DIR: matrix.json (schema
retrylab.matrix/v1: each client's name, version, provider and whole probe
profile), matrix.md and index.html (one self-contained page, sortable and
filterable, every cell linked to the run folder of the probe it comes
from: DIR/runs/NAME/...). Clients are probed --parallel at once, each
within --budget per exhaustion run; their processes are started together:
2 × cores at once, more while the machine idles and the CPU the running
ones use leaves room (a client waiting out a backoff uses none), at most
64. Resumable: a client DIR/matrix.json
already holds at the same version, probed by this retrylab version, is
kept as it is unless --refresh. Progress of each probe goes to
DIR/runs/NAME/progress.log, what it measured to DIR/runs/NAME/observations.json
(as chaos probe --observations); stderr says when each client starts and ends.
Ctrl-C stops within a second and writes the clients that finished (exit 130).

MANIFEST is YAML (docs/matrix.md):
  clients:
    - name: anthropic-go
      versionCommand: "go -C testdata/sdk/go list -m -f '{{.Version}}' github.com/anthropics/anthropic-sdk-go"
      command: [testdata/sdk/go/bin/anthropic]    # or a string, run with sh -c
      provider: anthropic
      env: {SOME_VAR: "1"}                         # as a scenario's client.env
      home: {.config/x.json: "{}"}                 # as a scenario's client.home

With --against OLD/matrix.json every cell that changed is marked in all
three outputs (matrix.json: changes per client); --fail-on RULES exits 1
when a change matches a rule: COLUMN (any change), COLUMN=VALUE,
COLUMN>N, >=, <, <= (the new number crosses N), COLUMN.* (every column
under it), comma-separated, e.g. retryAfter.seconds,maxRetries>1.
Without --fail-on, --against reports changes and exits 0.

Exit 0; 1 when a --fail-on rule fired; 2 on bad input (the manifest's
problems each with file:line and a hint), or when no client could be probed.

Example:
  retrylab matrix docs/matrix/manifest.yaml -o docs/matrix
  retrylab matrix agents.yaml -o new --against docs/matrix/matrix.json --fail-on 'retryAfter.*,maxRetries<2'

Flags:
`

type matrixConfig struct {
	manifest, out, against, failOn, toxiURL string
	only                                    []string
	parallel, samples                       int
	budget, startGrace                      time.Duration
	timeScale                               float64
	refresh                                 bool
	// admit admits the client processes of every probe running at once
	// together, by the CPU they use (client.Admission).
	admit *client.Admission
}

// maxVersionOutput bounds what a versionCommand may print.
const maxVersionOutput = 4096

func parseMatrix(args []string, stdout, stderr io.Writer) (matrixConfig, error) {
	var cfg matrixConfig
	fs := newFlags("matrix", matrixUsage)
	fs.StringVarP(&cfg.out, "out", "o", "", "folder of the matrix: matrix.json, matrix.md, index.html and runs/ (required)")
	fs.StringVar(&cfg.against, "against", "", "an earlier matrix.json: mark every cell that changed")
	fs.StringVar(&cfg.failOn, "fail-on", "", "with --against: exit 1 when a change matches one of these rules (COLUMN, COLUMN=V, COLUMN>N, ...; see --help)")
	fs.StringVar(&cfg.toxiURL, "toxiproxy", os.Getenv("TOXIPROXY_URL"), "URL of a toxiproxy-server API; default: embedded")
	fs.StringSliceVar(&cfg.only, "clients", nil, "probe only these clients of the manifest (comma-separated names); the others are kept from DIR/matrix.json when there")
	fs.IntVar(&cfg.parallel, "parallel", defaultMatrixParallel(), "clients probed at once (default: the CPU count)")
	fs.IntVar(&cfg.samples, "samples", 4, "exhaustion runs per client (chaos probe --samples)")
	fs.DurationVar(&cfg.budget, "budget", 2*time.Minute, "wall time per exhaustion run of each client (chaos probe --budget)")
	fs.DurationVar(&cfg.startGrace, "start-grace", battery.DefaultStartGrace, "how long a client may take to send its first request (chaos probe --start-grace)")
	fs.Float64Var(&cfg.timeScale, "time-scale", 1, "told to each client (RETRYLAB_TIME_SCALE); chaos probe --time-scale")
	fs.BoolVar(&cfg.refresh, "refresh", false, "probe every client again, even one DIR/matrix.json holds at the same version")
	hint := "run 'retrylab matrix --help'"
	if err := parseFlags(fs, args, hint, stdout, stderr); err != nil {
		return cfg, err
	}
	if fs.NArg() != 1 {
		return cfg, usageErrorf(hint, "matrix takes one MANIFEST, got %d arguments", fs.NArg())
	}
	cfg.manifest = fs.Arg(0)
	switch {
	case cfg.out == "":
		return cfg, usageErrorf("give the folder to write, e.g. -o docs/matrix", "-o DIR is required")
	case cfg.parallel < 1 || cfg.parallel > maxProbeParallel:
		return cfg, usageErrorf(fmt.Sprintf("give 1 to %d", maxProbeParallel), "bad --parallel %d", cfg.parallel)
	case cfg.samples < 2 || cfg.samples > maxProbeSamples:
		return cfg, usageErrorf(fmt.Sprintf("give 2 to %d", maxProbeSamples), "bad --samples %d", cfg.samples)
	case cfg.budget < time.Second || cfg.budget > maxProbeBudget:
		return cfg, usageErrorf(fmt.Sprintf("give 1s to %s, e.g. --budget 30s", maxProbeBudget), "bad --budget %s", cfg.budget)
	case cfg.startGrace < 0 || cfg.startGrace > maxProbeBudget:
		return cfg, usageErrorf(fmt.Sprintf("give 0 to %s", maxProbeBudget), "bad --start-grace %s", cfg.startGrace)
	case cfg.failOn != "" && cfg.against == "":
		return cfg, usageErrorf("give the earlier matrix the rules compare with: --against OLD/matrix.json", "--fail-on needs --against")
	}
	if why := scenario.CheckTimeScale(cfg.timeScale); why != "" {
		return cfg, usageErrorf(scenario.TimeScaleHint, "bad --time-scale: %s", why)
	}
	return cfg, nil
}

// defaultMatrixParallel is --parallel's default: one client per CPU. A
// client waiting out a backoff uses none, so more would fit, but a Node
// or Python client's start-up takes a CPU for seconds, and a starved
// start-up shows as a late first request, not as the client's policy.
func defaultMatrixParallel() int { return max(1, runtime.NumCPU()) }

func retrylabMatrix(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseMatrix(args, stdout, stderr)
	if err != nil {
		return err
	}
	man, err := loadManifest(cfg.manifest)
	if err != nil {
		return err
	}
	for _, name := range cfg.only {
		if !containsClient(man, name) {
			return usageErrorf("the names are those of the manifest's clients[].name", "--clients: no client %q in %s", name, cfg.manifest)
		}
	}
	var rules []matrix.Rule
	if cfg.failOn != "" {
		if rules, err = matrix.ParseRules(cfg.failOn); err != nil {
			return usageErrorf("rules are COLUMN, COLUMN=VALUE or COLUMN>N (also >=, <, <=), comma-separated; columns: "+strings.Join(matrix.ColumnKeys(), ", "), "--fail-on: %v", err)
		}
	}
	var old *matrix.Matrix
	if cfg.against != "" {
		if old, err = readMatrix(cfg.against); err != nil {
			return usageErrorf("give a matrix.json written by retrylab matrix", "--against: %v", err)
		}
	}
	if err := runfolder.CheckOutDir(cfg.out); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return &runfolder.OutputError{What: "-o", Path: cfg.out, Err: err}
	}
	prev, err := readMatrix(filepath.Join(cfg.out, "matrix.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "note: %s/matrix.json is not a matrix (%v): every client is probed\n", cfg.out, err)
	}
	if prev == nil {
		prev = &matrix.Matrix{}
	}
	toxi, err := mock.StartToxiproxy(ctx, cfg.toxiURL)
	if err != nil {
		return fmt.Errorf("start toxiproxy: %w", err)
	}
	defer toxi.Close()

	// One admission for every probe: the processes of the clients probed
	// at once start while the CPU the running ones use leaves room.
	cfg.admit = client.NewAdmission()
	cfg.admit.Count *= cfg.parallel // each probe's count, as when each had its own
	m := &matrix.Matrix{Schema: matrix.Schema, Retrylab: version()}
	entries := make([]*matrix.Entry, len(man.Clients))
	var mu sync.Mutex // entries, and writes of the outputs
	write := func() error {
		mu.Lock()
		defer mu.Unlock()
		m.Clients = m.Clients[:0]
		for _, e := range entries {
			if e != nil {
				m.Clients = append(m.Clients, *e)
			}
		}
		if old != nil {
			m.Against = cfg.against
			matrix.Diff(old, m)
		}
		return writeMatrix(cfg.out, m)
	}
	var written onceGate
	defer atForcedExit(ctx, func(time.Duration) { written.do(func() { _ = write() }) })()

	sem := make(chan struct{}, cfg.parallel)
	var wg sync.WaitGroup
	dir := filepath.Dir(man.File)
	for i, c := range man.Clients {
		keep := len(cfg.only) > 0 && !contains(cfg.only, c.Name)
		if p := prev.Find(c.Name); keep && p != nil {
			// Not asked for (--clients): kept as it is, whatever it is.
			e := *p
			e.Changes = nil
			entries[i] = &e
			continue
		} else if keep {
			continue
		}
		ver, verErr := clientVersion(ctx, c, dir)
		if p := prev.Find(c.Name); p != nil && p.Profile != nil && !p.Profile.Interrupted && verErr == nil &&
			!cfg.refresh && p.Version == ver && p.Retrylab == version() {
			e := *p
			e.Changes = nil
			entries[i] = &e
			fmt.Fprintf(stderr, "%s %s: kept from %s/matrix.json (probed by %s)\n", c.Name, p.Version, cfg.out, p.Retrylab)
			continue
		}
		if verErr != nil {
			entries[i] = &matrix.Entry{Name: c.Name, Provider: c.Provider, Version: "unknown", Error: verErr.Error(), Retrylab: version()}
			fmt.Fprintf(stderr, "%s: not probed: %v\n", c.Name, verErr)
			continue
		}
		if why := clientMissing(c, man.File); why != "" {
			entries[i] = &matrix.Entry{Name: c.Name, Provider: c.Provider, Version: ver, Error: why, Retrylab: version()}
			fmt.Fprintf(stderr, "%s %s: not probed: %s\n", c.Name, ver, why)
			continue
		}
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			e := probeClient(ctx, cfg, toxi, man.File, c, ver, stderr)
			mu.Lock()
			entries[i] = e
			mu.Unlock()
			// Written as each client finishes: a run killed outright
			// (SIGKILL, a machine gone) resumes from there.
			if ctx.Err() == nil {
				if err := write(); err != nil {
					fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
				}
			}
		})
	}
	wg.Wait()
	var werr error
	written.do(func() { werr = write() })
	if werr != nil {
		return werr
	}
	fmt.Fprintf(stderr, "wrote %s/matrix.json, matrix.md, index.html (%d client(s))\n", cfg.out, len(m.Clients))
	if ctx.Err() != nil {
		return fmt.Errorf("%w: the matrix holds the clients that finished, in %s", context.Cause(ctx), cfg.out)
	}
	probed := 0
	for _, e := range m.Clients {
		if e.Profile != nil {
			probed++
		}
	}
	if probed == 0 {
		return usageErrorf("install the clients (each entry's requires), or fix their commands; each probe's progress.log is in "+filepath.Join(cfg.out, "runs"),
			"no client could be probed")
	}
	if old != nil {
		n := 0
		for _, e := range m.Clients {
			for _, c := range e.Changes {
				fmt.Fprintf(stderr, "  %s: %s: %s → %s\n", e.Name, c.Column, c.Before, c.After)
				n++
			}
		}
		fmt.Fprintf(stderr, "against %s: %d change(s)\n", cfg.against, n)
		if vs := matrix.Check(rules, m); len(vs) > 0 {
			for _, v := range vs {
				fmt.Fprintf(stderr, "fail-on: %s\n", v)
			}
			return fmt.Errorf("%d change(s) matched --fail-on: %w", len(vs), errFailed)
		}
	}
	return nil
}

func containsClient(m *matrix.Manifest, name string) bool {
	for _, c := range m.Clients {
		if c.Name == name {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func loadManifest(path string) (*matrix.Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErrorf("give the manifest's path (docs/matrix.md)", "%v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, matrix.MaxManifestBytes+1))
	if err != nil {
		return nil, usageErrorf("give a readable manifest file", "%v", err)
	}
	man, err := matrix.ParseManifest(path, data)
	var l yamldiag.List
	if errors.As(err, &l) {
		return nil, usageErrorf(l.Hint("fix each problem above (its hint is under it), then run again"), "%s", l.Error())
	}
	if err != nil {
		return nil, err
	}
	return man, nil
}

func readMatrix(path string) (*matrix.Matrix, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return matrix.Read(f)
}

// writeMatrix writes the three outputs, each atomically.
func writeMatrix(dir string, m *matrix.Matrix) error {
	for _, out := range []struct {
		name   string
		render func(io.Writer, *matrix.Matrix) error
	}{{"matrix.json", func(w io.Writer, m *matrix.Matrix) error { return m.Write(w) }}, {"matrix.md", matrix.Markdown}, {"index.html", matrix.HTML}} {
		var b bytes.Buffer
		if err := out.render(&b, m); err != nil {
			return err
		}
		p := filepath.Join(dir, out.name)
		if err := runfolder.WriteFileAtomic(p, b.Bytes()); err != nil {
			return &runfolder.OutputError{What: "-o", Path: p, Err: err}
		}
	}
	return nil
}

// clientVersion is the client's version: as given, or the first line its
// versionCommand prints (sh -c, from the current folder, as a string
// command runs), within 60s.
func clientVersion(ctx context.Context, c matrix.Client, _ string) (string, error) {
	if c.VersionCommand == "" {
		return c.Version, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", c.VersionCommand)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out, errb limitedBuffer
	out.max, errb.max = maxVersionOutput, maxVersionOutput
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("versionCommand %q: %v: %s", c.VersionCommand, err, strings.TrimSpace(lastLine(errb.String())))
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	line = strings.TrimSpace(line)
	if line == "" || len(line) > 120 {
		return "", fmt.Errorf("versionCommand %q printed no version (one line of at most 120 characters)", c.VersionCommand)
	}
	return line, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// limitedBuffer keeps the first max bytes written and drops the rest.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// clientFile is the manifest's client as a scenario file's client block:
// the battery runs it as chaos run runs a scenario's client (argv
// arguments resolved from the current folder, else the manifest's).
func clientFile(file string, c matrix.Client) *scenario.ClientFile {
	return &scenario.ClientFile{File: file, Provider: c.Provider, Model: c.Model,
		Client: scenario.Client{Command: c.Command, Env: c.Env, Home: c.Home, InheritEnv: c.InheritEnv,
			Requires: c.Requires, RequiresHint: c.RequiresHint}}
}

// clientMissing says what of the client's requires is not here ("" when
// all is, or it names none).
func clientMissing(c matrix.Client, file string) string {
	if len(c.Command) == 0 {
		return ""
	}
	why, hint := clientFile(file, c).Missing()
	if why == "" {
		return ""
	}
	if hint != "" {
		return why + " (" + hint + ")"
	}
	return why
}

// probeClient runs the battery on one client; the entry always comes
// back, with an Error when no profile did.
func probeClient(ctx context.Context, cfg matrixConfig, toxi *mock.Toxiproxy, file string, c matrix.Client, ver string, stderr io.Writer) *matrix.Entry {
	e := &matrix.Entry{Name: c.Name, Version: ver, Provider: c.Provider, Retrylab: version()}
	runs := filepath.Join(cfg.out, "runs", c.Name)
	if err := os.RemoveAll(runs); err != nil {
		e.Error = err.Error()
		return e
	}
	if err := os.MkdirAll(runs, 0o755); err != nil {
		e.Error = err.Error()
		return e
	}
	logf, err := os.Create(filepath.Join(runs, "progress.log"))
	if err != nil {
		e.Error = err.Error()
		return e
	}
	defer logf.Close()
	prov, _ := probe.LookupProvider(c.Provider) // checked by the manifest's parser
	opts := battery.Options{Provider: prov, Model: c.Model, Samples: cfg.samples, Budget: cmp.Or(c.Budget, cfg.budget),
		Repeat: c.Repeat, TimeScale: cfg.timeScale, StartGrace: cmp.Or(c.StartGrace, cfg.startGrace), CeilingRounds: battery.DefaultCeilingRounds}
	r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: runs, Progress: logf, Admit: cfg.admit}
	if len(c.Command) > 0 {
		r.ClientFile = clientFile(file, c)
	} else {
		r.ClientCmd = c.Shell
	}
	fmt.Fprintf(stderr, "%s %s: probing (progress in %s)\n", c.Name, ver, filepath.Join(runs, "progress.log"))
	start := time.Now()
	prof, runErr := r.Run(ctx, opts)
	e.WallMs = time.Since(start).Milliseconds()
	switch {
	case prof == nil:
		e.Error = fmt.Sprintf("the probe could not run: %v", runErr)
	case prof.Unreached != "":
		e.Error = "the client reached the mock in no probe: " + prof.Unreached
		e.Profile = prof
	default:
		e.Profile = prof
	}
	if e.Profile != nil {
		e.Profile.RunDir = relTo(cfg.out, e.Profile.RunDir)
		e.Evidence = evidence(cfg.out, runs)
		// What the profile was inferred from, beside its runs: the
		// journal probe.Infer reads again without the client.
		if data, err := r.Journal().Marshal(); err == nil {
			if err := runfolder.WriteFileAtomic(filepath.Join(runs, "observations.json"), data); err != nil {
				fmt.Fprintf(stderr, "%s: observations not written: %v\n", c.Name, err)
			}
		}
	}
	pruneHomes(runs)
	state := "done"
	if e.Error != "" {
		state = e.Error
	} else if prof.Interrupted {
		state = "interrupted"
	}
	fmt.Fprintf(stderr, "%s %s: %s in %.0fs\n", c.Name, ver, state, float64(e.WallMs)/1000)
	return e
}

func relTo(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(p)
}

// evidence maps each probe scenario to its run folder under runs (the
// last run folder that has it: a probe run again, as the exhaustion is
// when the noise was too high, is the one the profile read), relative to
// the matrix's folder.
func evidence(out, runs string) map[string]string {
	ev := map[string]string{}
	dirs, _ := os.ReadDir(runs)
	for _, d := range dirs { // run folders are named by time: in order
		if !d.IsDir() {
			continue
		}
		subs, _ := os.ReadDir(filepath.Join(runs, d.Name()))
		for _, s := range subs {
			if s.IsDir() && strings.HasPrefix(s.Name(), "probe-") {
				ev[s.Name()] = relTo(out, filepath.Join(runs, d.Name(), s.Name()))
			}
		}
	}
	return ev
}

// pruneHomes removes each probe run's home/ (the client's HOME: the
// harness's settings files and whatever the client wrote there), so that
// the matrix's runs/ hold the evidence alone (result.json, server.jsonl,
// mock.log, stdout.txt, stderr.txt) and stay small enough to publish.
func pruneHomes(runs string) {
	dirs, _ := os.ReadDir(runs)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		subs, _ := os.ReadDir(filepath.Join(runs, d.Name()))
		for _, s := range subs {
			if s.IsDir() {
				_ = os.RemoveAll(filepath.Join(runs, d.Name(), s.Name(), "home"))
			}
		}
	}
}
