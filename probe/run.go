package probe

import (
	"context"
	"io"
	"time"

	"github.com/retrylab/retrylab/chaos"
)

// Runner runs a battery against a client with chaos.Runner and infers its
// profile. The caller owns Toxi and closes it.
type Runner struct {
	Toxi      *chaos.Toxiproxy
	ToxiName  string
	Out       string // base folder of the run folder, default "runs"
	ClientCmd string // run with sh -c, as chaos run --client-cmd
	Parallel  int    // scenarios at once (0: all; external clients are bounded by chaos)
	Progress  io.Writer
	Live      bool
	Color     bool
}

// Run plans the battery, runs it and returns the profile. When ctx ends
// (Ctrl-C) the scenarios still running are stopped and the profile holds
// what the finished ones showed (Profile.Interrupted). An error means no
// scenario could run at all.
func (r *Runner) Run(ctx context.Context, o Options) (*Profile, error) {
	o = o.withDefaults()
	start := time.Now()
	ps, err := Plan(o, start)
	if err != nil {
		return nil, err
	}
	scs := make([]*chaos.Scenario, len(ps))
	for i, p := range ps {
		scs[i] = p.Scenario
	}
	cr := &chaos.Runner{Toxi: r.Toxi, ToxiName: r.ToxiName, Out: r.Out, Parallel: r.Parallel, TimeScale: o.TimeScale,
		ClientCmd: r.ClientCmd, Progress: r.Progress, Live: r.Live, Color: r.Color, Confirm: 0}
	sum, err := cr.Run(ctx, scs)
	if sum == nil {
		return nil, err
	}
	byName := map[string]chaos.Result{}
	for _, res := range sum.Scenarios {
		byName[res.Name] = res
	}
	obs := make([]Observation, 0, len(ps))
	for _, p := range ps {
		obs = append(obs, Observe(p, byName[p.Scenario.Name], o.TimeScale))
	}
	prof := Infer(o.Provider, obs)
	prof.Client = r.ClientCmd
	prof.Model = o.Model
	prof.TimeScale = o.TimeScale
	prof.RunDir = sum.RunDir
	prof.DurationMs = time.Since(start).Milliseconds()
	prof.Interrupted = ctx.Err() != nil || sum.Interrupted > 0
	prof.Conformance = Conform(prof, o.Provider)
	return prof, err
}
