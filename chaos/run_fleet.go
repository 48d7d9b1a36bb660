package chaos

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/retrylab/retrylab/chaos/fleet"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// fleetMember is which client of a fleet a client run is: index 1..n, 0
// outside a fleet. A built-in client calls ready once it is set up, just
// before its first request: its start, the fleet's gate (nil outside a
// fleet).
type fleetMember struct {
	index int
	gate  *fleetGate
	once  *sync.Once
	// deadline, when above 0, is the client's deadline, counted from its
	// start (ready), not from its setup; began is set to its start.
	deadline time.Duration
	began    *time.Time
}

// ready waits until the member's start: every client of the fleet set up
// (the gate open), then (index−1) staggers more. It returns false when
// ctx ends first.
func (m fleetMember) ready(ctx context.Context) bool {
	if m.gate == nil {
		return true
	}
	m.once.Do(m.gate.arrive)
	select {
	case <-m.gate.open:
	case <-ctx.Done():
		return false
	}
	if d := time.Until(m.gate.at.Add(time.Duration(m.index-1) * m.gate.stagger)); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
	if m.began != nil {
		*m.began = time.Now()
	}
	return ctx.Err() == nil
}

// fleetGate holds a fleet's built-in clients until every one is set up
// (its policy, trace and retrier made), so that their setup, slower on a
// busy machine for some than for others, does not spread their starts:
// clients meant to start together send their first requests together.
type fleetGate struct {
	n       int
	stagger time.Duration // wall
	mu      sync.Mutex
	arrived int
	open    chan struct{}
	at      time.Time // when it opened; read after open is closed
}

func newFleetGate(n int, stagger time.Duration) *fleetGate {
	return &fleetGate{n: n, stagger: stagger, open: make(chan struct{})}
}

// arrive counts one client as set up (or ended before it was); the last
// opens the gate.
func (g *fleetGate) arrive() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.arrived++
	if g.arrived == g.n {
		g.at = time.Now()
		close(g.open)
	}
}

// apiKey is the key the client sends: its own in a fleet, by which the
// mock tells it apart (mock/fleet.go), else the fake key every client gets.
func (m fleetMember) apiKey() string {
	if m.index == 0 {
		return redact.FakeAPIKey
	}
	return mock.FleetKey(m.index)
}

// seedSuffix varies the jitter seed by client.
func (m fleetMember) seedSuffix() string {
	if m.index == 0 {
		return ""
	}
	return fmt.Sprintf("\x00client %d", m.index)
}

// withKey puts the member's key in place of the fake key in an external
// client's environment and harness variables.
func (m fleetMember) withKey(env []string, vars map[string]string) ([]string, map[string]string) {
	if m.index == 0 {
		return env, vars
	}
	key := m.apiKey()
	names := map[string]bool{}
	for _, kv := range wire.KeyEnv("") {
		name, _, _ := strings.Cut(kv, "=")
		names[name] = true
	}
	for i, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); names[name] {
			env[i] = name + "=" + key
		}
	}
	for name := range vars {
		if names[name] {
			vars[name] = key
		}
	}
	return env, vars
}

// fleetClientDir is the run sub-folder of client i of n: clients/07.
func fleetClientDir(dir string, i, n int) string {
	width := max(2, len(fmt.Sprint(n)))
	return filepath.Join(dir, "clients", fmt.Sprintf("%0*d", width, i))
}

// fleetRun is one fleet client's run: what it produced and when it ran.
type fleetRun struct {
	clientRun
	dir          string
	began, ended time.Time
	started      bool
}

// runFleet runs the fleet's clients against env, client i starting
// (i−1)·stagger (scaled) after the first, each in its own run sub-folder
// with its own key, trace and deadline, and returns their runs once all
// have ended. Once ctx ends no client starts.
func (r *Runner) runFleet(ctx context.Context, sc *scenario.Scenario, res *Result, env *mock.Env, dir, runID string, scale float64, sec *redact.Secrets) []fleetRun {
	n := sc.FleetClients()
	runs := make([]fleetRun, n)
	stagger := time.Duration(float64(sc.Fleet.Stagger.D()) * scale)
	deadline := clientDeadline(sc)
	external := r.ClientCmd != "" || len(sc.Client.Command) > 0
	r.logf(sc.Name, "fleet of %d clients, %s apart (wall), each in %s", n, stagger, filepath.Join(dir, "clients"))
	var infraOnce sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	gate := newFleetGate(n, stagger)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fr := &runs[i]
			fr.dir = fleetClientDir(dir, i+1, n)
			who := fleetMember{index: i + 1}
			if !external {
				// A built-in client waits for its start at the gate, once
				// set up; one that ends before it still counts there.
				who.gate, who.once, who.deadline, who.began = gate, &sync.Once{}, deadline, &fr.began
				defer who.once.Do(gate.arrive)
			}
			if d := time.Duration(i) * stagger; d > 0 && external {
				t := time.NewTimer(time.Until(start.Add(d)))
				defer t.Stop()
				select {
				case <-t.C:
				case <-ctx.Done():
					return
				}
			}
			if ctx.Err() != nil {
				return
			}
			if err := os.MkdirAll(fr.dir, 0o755); err != nil {
				infraOnce.Do(func() { r.infraFailed(ctx, res, "", runfolder.OutputErr("", fr.dir, err)) })
				return
			}
			tracePath := filepath.Join(fr.dir, "trace.jsonl")
			fr.started, fr.began = true, time.Now() // a built-in client's start: at its gate (ready)
			defer func() { fr.ended = time.Now() }()
			if external {
				fr.clientRun = r.runExternal(ctx, sc, env.BaseURL(), fr.dir, tracePath, r.ClientCmd, scale, deadline, sec, who)
				if fr.exit != nil && strings.HasPrefix(fr.exit.Problem, "could not start") {
					infraOnce.Do(func() { res.Error, res.ErrorHint = fmt.Sprintf("client %d %s", i+1, fr.exit.Problem), fr.hint })
				}
				return
			}
			log := &redact.RedactFile{Path: filepath.Join(fr.dir, "client.log"), Sec: sec, Limit: redact.MaxKeptOutput}
			defer log.Close()
			cr, err := r.runBuiltin(ctx, sc, env.BaseURL(), tracePath, runID, scale, log, who)
			fr.clientRun = cr
			var ie *runfolder.InfraError
			if errors.As(err, &ie) || runfolder.IsInfraErr(err) {
				infraOnce.Do(func() { r.infraFailed(ctx, res, fmt.Sprintf("client %d: ", i+1), err) })
			} else if err != nil {
				infraOnce.Do(func() { res.Error = fmt.Sprintf("client %d: %v", i+1, err) })
			}
		}()
	}
	wg.Wait()
	return runs
}

// verifyFleet verifies a finished fleet: every client against the
// scenario's expect block, as one client is verified, on its own attempts
// (numbered as it met them) and trace; then the fleet's figures and
// expect.fleet. A check of the result passes when it passed for every
// client; otherwise it names the first client it did not pass for.
func (r *Runner) verifyFleet(sc *scenario.Scenario, res *Result, attempts []mock.ServerAttempt, runs []fleetRun, scale float64, start time.Time, journalErr error) {
	byClient := make([][]mock.ServerAttempt, len(runs)+1)
	for _, a := range attempts {
		if a.Client >= 1 && a.Client <= len(runs) {
			a.N = a.ClientN
			byClient[a.Client] = append(byClient[a.Client], a)
		}
	}
	var per [][]verify.Check
	survived := 0
	for i, fr := range runs {
		one := Result{Name: res.Name, Path: res.Path}
		if fr.started {
			r.verify(sc, &one, byClient[i+1], fr.clientRun, filepath.Join(fr.dir, "trace.jsonl"), scale, fr.began, journalErr, fr.ended)
		} else {
			one.Checks = []verify.Check{{Name: "client", State: verify.StateFail, Want: "the client runs", Got: "never started"}}
		}
		if one.Error != "" && res.Error == "" {
			res.Error = fmt.Sprintf("client %d: %s", i+1, one.Error)
		}
		if fr.outcome == "success" {
			survived++
		}
		per = append(per, one.Checks)
		// Each finding once, from the first client that shows it.
		for _, f := range one.Findings {
			if !slices.ContainsFunc(res.Findings, func(g verify.Finding) bool { return g.Code == f.Code }) {
				f.Evidence = fmt.Sprintf("client %d: %s", i+1, f.Evidence)
				res.Findings = append(res.Findings, f)
			}
		}
	}
	res.Checks = append(mergeClientChecks(per, runs, filepath.Dir(filepath.Dir(runs[0].dir))), res.Checks...)
	res.Outcome = "failure"
	if survived == len(runs) {
		res.Outcome = "success"
	}
	fa := fleetAttempts(attempts, scale)
	markStarts(fa, attempts, runs)
	in := fleet.Input{Clients: len(runs), Survived: survived, Attempts: fa}
	if sc.Outage != nil {
		in.HasOutage = true
		for _, p := range sc.Outage.Phases {
			in.OutageEnd += p.For.D()
		}
	}
	if sc.Limits != nil {
		in.RequestsPerMinute = sc.Limits.RequestsPerMinute
	}
	if scale > 0 {
		// Twice the worst timer lateness around the run, as a wait's
		// slack: a late client and a late mock stamp.
		// At most the window itself: past that the lockstep a lower
		// bound claims could not be told from a spread fleet at all.
		in.Noise = min(time.Duration(float64(2*r.probe.Lateness(start, time.Now()))/scale), fleet.SyncWindow)
	}
	fig := fleet.Compute(in)
	res.Fleet = &fig
	res.FleetTimeline = newFleetTimeline(sc, fa, in)
	if ex := sc.Expect.Fleet; ex != nil {
		c := verify.FleetCheck(ex, fig)
		c.Line = sc.ExpectLine("fleet")
		res.Checks = append(res.Checks, c)
	}
	res.Checks = verify.Settle(res.Checks)
}

// fleetAttempts are the mock's attempts as the fleet's figures read them,
// in policy time since the first arrival.
func fleetAttempts(attempts []mock.ServerAttempt, scale float64) []fleet.Attempt {
	if scale <= 0 {
		scale = 1
	}
	var t0 time.Time
	for _, a := range attempts {
		if t0.IsZero() || a.Arrived.Before(t0) {
			t0 = a.Arrived
		}
	}
	policy := func(t time.Time) time.Duration {
		if t.Before(t0) {
			return 0
		}
		return time.Duration(float64(t.Sub(t0)) / scale)
	}
	out := make([]fleet.Attempt, 0, len(attempts))
	for _, a := range attempts {
		end := a.Ended
		if end.IsZero() {
			end = a.Arrived
		}
		out = append(out, fleet.Attempt{Client: a.Client, At: policy(a.Arrived), End: policy(end), Status: a.Status,
			Succeeded: mock.Succeeded(a), OutputTokens: a.OutputTokens})
	}
	return out
}

// markStarts sets Known and First on fa (one per attempts[i]) for each
// client whose own trace accounts for its attempts exactly: its logical
// requests, each ProviderRequestFinished with its retries, in order, over
// the client's attempts in the order it sent them. A client without a
// trace (an external one that writes none), with one that does not parse,
// or whose requests add up to another number of attempts (one killed
// mid-request, attempts that never reached the mock) is left to the
// journal's reading (fleet.firsts).
func markStarts(fa []fleet.Attempt, attempts []mock.ServerAttempt, runs []fleetRun) {
	byClient := map[int][]int{}
	for i, a := range attempts {
		if a.Client >= 1 && a.Client <= len(runs) {
			byClient[a.Client] = append(byClient[a.Client], i)
		}
	}
	for c, idx := range byClient {
		slices.SortFunc(idx, func(x, y int) int { return cmp.Compare(attempts[x].ClientN, attempts[y].ClientN) })
		counts, ok := requestAttempts(filepath.Join(runs[c-1].dir, "trace.jsonl"))
		total := 0
		for _, n := range counts {
			total += n
		}
		if !ok || total != len(idx) {
			continue
		}
		k := 0
		for _, n := range counts {
			for j := range n {
				fa[idx[k]].Known, fa[idx[k]].First = true, j == 0
				k++
			}
		}
	}
}

// requestAttempts reads from a client's trace how many attempts each of
// its logical requests made (a ProviderRequestFinished's retries + 1), in
// order; ok is false without a trace, with a malformed line, or with a
// count that makes no sense.
func requestAttempts(path string) (counts []int, ok bool) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, false
	}
	defer r.Close()
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return counts, true
		}
		if err != nil {
			return nil, false
		}
		if ev.Type != trace.TypeProviderRequestFinished {
			continue
		}
		var p trace.ProviderRequestFinished
		if json.Unmarshal(ev.Payload, &p) != nil || p.Retries < 0 || p.Retries > 1_000_000 {
			return nil, false
		}
		counts = append(counts, p.Retries+1)
	}
}

// mergeClientChecks folds the clients' checks into one per name, in the
// order they first appear: passed when passed for every client, else in
// the worst state any client's is, with the words of the first client in
// that state, which it names, and how many more are.
func mergeClientChecks(per [][]verify.Check, runs []fleetRun, dir string) []verify.Check {
	rank := map[string]int{verify.StatePass: 0, verify.StateUnverified: 1, verify.StateInconclusive: 2, verify.StateFail: 3}
	type agg struct {
		c      verify.Check
		client int
		worse  int // clients in c's state
	}
	var order []string
	m := map[string]*agg{}
	for i, cs := range per {
		for _, c := range verify.Settle(cs) {
			a, ok := m[c.Name]
			if !ok {
				order = append(order, c.Name)
				a = &agg{c: c, client: i + 1, worse: 1}
				m[c.Name] = a
				continue
			}
			switch cmp.Compare(rank[c.State], rank[a.c.State]) {
			case 1:
				a.c, a.client, a.worse = c, i+1, 1
			case 0:
				a.worse++
			}
		}
	}
	out := make([]verify.Check, 0, len(order))
	for _, name := range order {
		a := m[name]
		c := a.c
		if c.State != verify.StatePass {
			rel, _ := filepath.Rel(dir, runs[a.client-1].dir)
			c.Got = fmt.Sprintf("client %d: %s", a.client, c.Got)
			if a.worse > 1 {
				c.Got += fmt.Sprintf(" (and %d more clients)", a.worse-1)
			}
			if c.Where != "" {
				c.Where = filepath.ToSlash(rel) + "/" + c.Where
			} else {
				c.Where = filepath.ToSlash(rel)
			}
		}
		out = append(out, c)
	}
	return out
}

// FleetTimeline is what the HTML report draws of a fleet (result.json's
// fleetTimeline): attempts per step of policy time by outcome class, the
// outage's phases and the account's request limit.
type FleetTimeline struct {
	StepMs  int64            `json:"stepMs"`
	Buckets []FleetBucket    `json:"buckets"`
	Phases  []FleetPhaseSpan `json:"phases,omitempty"`
	// LimitPerStep is the account's request limit as attempts per step;
	// 0 without limits:.
	LimitPerStep float64 `json:"limitPerStep,omitempty"`
}

// FleetBucket counts the attempts that arrived in one step, by class
// (fleet.Classes).
type FleetBucket struct {
	AtMs   int64          `json:"atMs"`
	Counts map[string]int `json:"counts"`
}

// FleetPhaseSpan is one outage phase on the fleet's clock.
type FleetPhaseSpan struct {
	FromMs int64 `json:"fromMs"`
	ToMs   int64 `json:"toMs"`
}

func newFleetTimeline(sc *scenario.Scenario, fa []fleet.Attempt, in fleet.Input) *FleetTimeline {
	bs, step := fleet.Timeline(fa)
	tl := &FleetTimeline{StepMs: step.Milliseconds(), Buckets: []FleetBucket{}}
	for _, b := range bs {
		tl.Buckets = append(tl.Buckets, FleetBucket{AtMs: b.At.Milliseconds(), Counts: b.Counts})
	}
	if sc.Outage != nil {
		var at time.Duration
		for _, p := range sc.Outage.Phases {
			tl.Phases = append(tl.Phases, FleetPhaseSpan{FromMs: at.Milliseconds(), ToMs: (at + p.For.D()).Milliseconds()})
			at += p.For.D()
		}
	}
	if in.RequestsPerMinute > 0 {
		tl.LimitPerStep = float64(in.RequestsPerMinute) * step.Minutes()
	}
	return tl
}
