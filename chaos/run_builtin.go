package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// The prompt the built-in client sends; the mock answers any prompt.
const builtinPrompt = "Say hello."

// runBuiltin runs the scenario's requests with the retry core and the
// provider client, writing the client's events to tracePath.
//
// who says which client of a fleet it is (the zero value outside one).
func (r *Runner) runBuiltin(ctx context.Context, sc *scenario.Scenario, baseURL, tracePath, runID string, scale float64, log io.Writer, who fleetMember) (clientRun, error) {
	pol, err := scenario.PolicyFor(sc)
	if err != nil {
		return clientRun{}, err
	}
	tw, err := trace.Create(tracePath, runID)
	if err != nil {
		return clientRun{}, err
	}
	defer tw.Close()
	_ = tw.Emit(trace.TypeRunStarted, trace.RunStarted{Scenario: sc.Name, Provider: sc.Provider, Model: sc.Model, Policy: pol.Name, Seed: r.Seed})
	rt := r.builtinRetrier(sc, pol, tw, log, scale, who)
	var sleeps []retry.Sleep
	rt.OnSleep = func(s retry.Sleep) { sleeps = append(sleeps, s) }
	// An attempt that failed for lack of file descriptors says nothing of
	// the client, and retrying it only waits: the client stops at once and
	// the scenario is an error of the run.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var infra error
	send := builtinAttempt(sc, &builtinClients{sc: sc, baseURL: baseURL, key: who.apiKey()}, func(err error) {
		if infra == nil {
			infra = err
			stop()
		}
	})
	if !who.ready(ctx) {
		_ = tw.Emit(trace.TypeRunFinished, trace.RunFinished{Success: false})
		return builtinOutcome(ctx, false, time.Now(), sleeps), nil
	}
	if who.deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, who.deadline)
		defer cancel()
	}
	start := time.Now()
	ok := true
	// ctx ends at the deadline or on an interrupt: no request starts after
	// that (Do ends its waits and attempts early by itself), so a client of
	// a hundred million requests stops as promptly as one of a single.
	for i := 0; i < sc.Requests && ctx.Err() == nil; i++ {
		if _, err := rt.Run(ctx, send); err != nil {
			ok = false
			fmt.Fprintf(log, "request %d failed: %v\n", i+1, err)
		}
	}
	_ = tw.Emit(trace.TypeRunFinished, trace.RunFinished{Success: ok, DurationMs: time.Since(start).Milliseconds()})
	if infra != nil {
		return clientRun{}, &runfolder.InfraError{Err: infra}
	}
	return builtinOutcome(ctx, ok, start, sleeps), nil
}

// builtinRetrier is the retry core as the scenario's client section sets
// it up: policy, model ladder and fallbacks, operation safety, response
// validation and error context, its trace and progress hooks.
func (r *Runner) builtinRetrier(sc *scenario.Scenario, pol *retry.Policy, tw *trace.Writer, log io.Writer, scale float64, who fleetMember) *retry.Retrier {
	// Each client of a fleet draws its own jitter: one seed for all would
	// put every client's "random" wait in lockstep.
	s1, s2 := scenarioSeed(r.Seed, sc.Name+who.seedSuffix())
	rt := &retry.Retrier{
		Policy: pol, Provider: sc.Provider, Model: sc.Model, Ladder: sc.Client.Escalation,
		Fallbacks: retry.Fallbacks{LargeContext: sc.Client.Fallback.LargeContext, Error: sc.Client.Fallback.Error,
			Provider: sc.Client.Fallback.Provider, ProviderModel: sc.Client.Fallback.ProviderModel},
		Trace: tw, Log: log, Rand: rand.New(rand.NewPCG(s1, s2)), TimeScale: scale,
		Operation: sc.Client.Safety(),
	}
	if v := sc.Client.Validate; v != nil && len(v.Contains) > 0 {
		rt.Validate = func(out string) error {
			for _, c := range v.Contains {
				if !strings.Contains(out, c) {
					return fmt.Errorf("the response does not contain %q", c)
				}
			}
			return nil
		}
	}
	rt.ErrorContext = sc.Client.ErrorContext
	if pw, ok := log.(*prefixWriter); ok && pw.progress != nil {
		rt.OnAttempt = pw.progress.attempt
	}
	return rt
}

// builtinClients are the built-in client's provider clients, one per
// provider it talks to, made on first use.
type builtinClients struct {
	sc      *scenario.Scenario
	baseURL string
	key     string // the API key it sends
	m       map[string]provider.Client
}

func (bc *builtinClients) get(name string) (provider.Client, error) {
	if name == "" {
		name = bc.sc.Provider
	}
	if c, ok := bc.m[name]; ok {
		return c, nil
	}
	// One transport per scenario, without keep-alive: every attempt is its
	// own connection, so per-attempt TCP toxics apply to it alone.
	c, err := provider.New(name, provider.Config{BaseURL: bc.baseURL, APIKey: bc.key, Timeout: bc.sc.Client.Timeout.D(),
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})
	if err != nil {
		return nil, err
	}
	if bc.m == nil {
		bc.m = map[string]provider.Client{}
	}
	bc.m[name] = c
	return c, nil
}

// builtinAttempt returns one attempt of the built-in client: the prompt
// (with the error context of the attempt before when the scenario asks)
// streamed to the attempt's provider and model. An infrastructure error
// is handed to onInfra.
func builtinAttempt(sc *scenario.Scenario, clients *builtinClients, onInfra func(error)) func(context.Context, retry.Attempt) (string, error) {
	return func(ctx context.Context, a retry.Attempt) (string, error) {
		c, err := clients.get(a.Provider)
		if err != nil {
			return "", err
		}
		model := a.Model
		if model == "" {
			model = sc.Model
		}
		prompt := builtinPrompt
		if sc.Client.ErrorContext {
			prompt = a.Prompt(builtinPrompt, suggestion(sc.Client.Validate))
		}
		resp, err := c.Stream(ctx, provider.Request{Model: model, Messages: []provider.Message{{Role: "user", Content: prompt}}, MaxTokens: 64})
		if runfolder.IsInfraErr(err) {
			onInfra(err)
		}
		if err != nil {
			return "", err
		}
		return resp.Text, nil
	}
}

// builtinOutcome is the built-in client's run as the checks see it: its
// outcome, its sleeps, and a problem when the deadline stopped it.
func builtinOutcome(ctx context.Context, ok bool, start time.Time, sleeps []retry.Sleep) clientRun {
	out := clientRun{outcome: "success", sleeps: sleeps}
	if !ok {
		out.outcome = "failure"
	}
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		out.outcome, out.stopped = "failure", time.Now()
		d := "the deadline"
		if dl, has := ctx.Deadline(); has {
			d = dl.Sub(start).Round(time.Millisecond).String()
		}
		out.problem = fmt.Sprintf("stopped after %s: still running at the deadline (expect.maxDuration, default %s)", d, client.DefaultDeadline)
	}
	return out
}

// suggestion is the enhanced prompt's advice for a built-in client that
// validates: what a good answer must hold.
func suggestion(v *scenario.Validate) string {
	if v == nil || len(v.Contains) == 0 {
		return ""
	}
	q := make([]string, len(v.Contains))
	for i, c := range v.Contains {
		q[i] = strconv.Quote(c)
	}
	return "The answer must contain " + strings.Join(q, " and ") + "."
}
