package verify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/preset"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// presetProviders is each agent and SDK preset with the wire format its
// client speaks.
var presetProviders = map[string]string{
	"anthropic-sdk": "anthropic", "anthropic-node": "anthropic", "anthropic-python": "anthropic", "anthropic-go": "anthropic",
	"openai-sdk": "openai", "openai-node": "openai", "openai-node-7": "openai", "openai-go": "openai", "openai-python": "openai",
	"gemini-sdk": "gemini", "gemini-cli": "gemini", "claude-code": "anthropic", "codex-cli": "openai",
	"vercel-ai-sdk": "anthropic", "langchain-js": "anthropic", "anthropic-java": "anthropic", "openai-java": "openai",
}

// mixedFaultPool is what a random sequence draws from: statuses the
// policies retry, re-send or refuse, Retry-After values, x-should-retry,
// errors inside the stream (before and after its first event), cuts and
// resets.
func mixedFaultPool() []scenario.Fault {
	st := func(s int) scenario.Fault { return scenario.Fault{Kind: fault.Status{Status: s}} }
	ra := func(s int, v string) scenario.Fault {
		return scenario.Fault{Kind: fault.Status{Status: s, RetryAfter: &v}}
	}
	hd := func(s int, k, v string) scenario.Fault {
		return scenario.Fault{Kind: fault.Status{Status: s, Headers: map[string]string{k: v}}}
	}
	sse := func(n int, typ string) scenario.Fault {
		return scenario.Fault{Kind: fault.SSEError{AfterEvents: n, Type: typ, Message: "x"}}
	}
	return []scenario.Fault{
		st(400), st(404), st(422), st(403), st(408), st(429), st(500), st(502), st(503), st(529),
		ra(429, "2"), ra(429, "61"), ra(529, "0"), ra(503, "5"), hd(429, "retry-after-ms", "1500"),
		hd(503, "x-should-retry", "false"), hd(529, "x-should-retry", "false"), hd(500, "x-should-retry", "true"),
		sse(3, "overloaded_error"), sse(3, "api_error"), sse(3, "invalid_request_error"), sse(0, "overloaded_error"),
		{Kind: fault.Drop{AfterBytes: 900}}, {Kind: fault.Reset{}},
	}
}

// coreRun is what the retry core did against a list of faults: the
// server's journal of it (fake time) and the trace it wrote.
type coreRun struct {
	journal []mock.ServerAttempt
	trace   string
	outcome string
}

// runCore runs the retry core following preset against faults (then
// success) under fake time, as the built-in client does.
func runCore(t *testing.T, sc *scenario.Scenario, pol *retry.Policy, seed uint64) coreRun {
	t.Helper()
	out := coreRun{trace: filepath.Join(t.TempDir(), "trace.jsonl")}
	synctest.Test(t, func(t *testing.T) {
		f, err := os.Create(out.trace)
		if err != nil {
			t.Fatal(err)
		}
		tw := trace.NewWriter(f, "mixed")
		r := &retry.Retrier{Policy: pol, Provider: sc.Provider, Model: "m", Trace: tw, Rand: rand.New(rand.NewPCG(seed, 7))}
		k := 0
		err = r.Do(context.Background(), func(ctx context.Context, _ retry.Attempt) error {
			now := time.Now()
			a := mock.ServerAttempt{N: k + 1, Path: "/v1", Model: "m", Status: 200, Fault: scenario.FaultOK, Arrived: now, Ended: now}
			defer func() { out.journal = append(out.journal, a); k++ }()
			if k >= len(sc.Attempts) {
				return nil
			}
			fl := sc.Attempts[k]
			a.Fault = fl.Name()
			st, isStatus := fl.Kind.(fault.Status)
			if _, reset := fl.Kind.(fault.Reset); !isStatus && !reset {
				a.Status = 200
			} else {
				a.Status = st.Status
			}
			pe := &provider.Error{Provider: sc.Provider}
			fault.Failure(fl.Kind, pe, fault.Met{Ended: now})
			if isStatus {
				pe.Header = st.ResponseHeaders(fault.Met{}) // as the client met them: the policy reads them its way
			}
			return pe
		})
		out.outcome = "success"
		if err != nil {
			out.outcome = "failure"
		}
		if cerr := tw.Close(); cerr != nil && !errors.Is(cerr, os.ErrClosed) {
			t.Fatal(cerr)
		}
		f.Close()
	})
	return out
}

// delaysCheck is the named delays check the checker makes of ob.
func delaysCheck(t *testing.T, sc *scenario.Scenario, ob Observed, name string) Check {
	t.Helper()
	env, err := EnvelopeFor(sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range policyDelayChecks(sc, ob, env) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s check", name)
	return Check{}
}

// TestPolicyCheckerAgreesWithCore: for every agent and SDK preset and
// random sequences of mixed faults, every wait the retry core takes (under
// fake time) lies inside the envelope the checker gives it, from the
// client's trace (delays.client) and from the journal alone
// (delays.server): both number the waits by the core's own loop. A wait
// made half or double where its envelope is tight fails delays.client.
func TestPolicyCheckerAgreesWithCore(t *testing.T) {
	pool := mixedFaultPool()
	for _, name := range preset.Names() {
		prov, ok := presetProviders[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(len(name)), 42))
			for i := range 40 {
				faults := make([]scenario.Fault, 1+rng.IntN(6))
				for j := range faults {
					faults[j] = pool[rng.IntN(len(pool))]
				}
				sc := &scenario.Scenario{Name: "mixed", Provider: prov, Model: "m", Attempts: faults}
				sc.Expect.Delays.Policy, sc.Expect.Delays.Set = true, true
				if err := sc.Client.Policy.Encode(name); err != nil {
					t.Fatal(err)
				}
				pol, err := scenario.PolicyFor(sc)
				if err != nil {
					t.Fatal(err)
				}
				run := runCore(t, sc, pol, uint64(i))
				label := fmt.Sprintf("seq %d %s", i, faultsString(faults))
				checkAgreement(t, label, sc, run)
			}
		})
	}
}

// checkAgreement holds the checker to what the core did in run.
func checkAgreement(t *testing.T, label string, sc *scenario.Scenario, run coreRun) {
	t.Helper()
	ob, _ := Observe(sc, run.journal, run.trace, 1)
	ob.Outcome = run.outcome
	if c := delaysCheck(t, sc, ob, "delays.client"); !c.Passed {
		t.Errorf("%s: delays.client fails the core\nwant: %s\ngot:  %s\nwhere: %s", label, c.Want, c.Got, c.Where)
	}
	if c := delaysCheck(t, sc, ob, "delays.server"); c.State == StateFail {
		t.Errorf("%s: delays.server (trace) fails the core\nwant: %s\ngot:  %s\nwhere: %s", label, c.Want, c.Got, c.Where)
	}
	jo, _ := Observe(sc, run.journal, "", 1)
	jo.Outcome = run.outcome
	if c := delaysCheck(t, sc, jo, "delays.server"); c.State == StateFail {
		t.Errorf("%s: delays.server (journal) fails the core\nwant: %s\ngot:  %s\nwhere: %s", label, c.Want, c.Got, c.Where)
	}
	checkWrongWaits(t, label, sc, ob)
}

// checkWrongWaits makes each of the core's waits half and double in turn:
// where the envelope the checker gives it cannot hold both, delays.client
// must fail.
func checkWrongWaits(t *testing.T, label string, sc *scenario.Scenario, ob Observed) {
	t.Helper()
	ctol, _ := tolerances(sc.Expect.Tolerance, 1)
	de := delayEnvelopes{ob: ob, pe: newPolicyEnvelopes(sc, mustEnvelope(t, sc))}
	for i, w := range ob.ClientWaits() {
		e := de.client(i, w)
		for _, wrong := range []time.Duration{w.Delay / 2, w.Delay * 2} {
			if !e.ok || w.Delay == 0 || inside(wrong, e.lo, e.hi, ctol) {
				continue // the envelope is not tight enough to tell
			}
			bad := ob
			bad.Retries = append([]trace.RetryAttempt(nil), ob.Retries...)
			j := retryIndex(bad.Retries, i)
			bad.Retries[j].DelayMs = wrong.Milliseconds()
			if c := delaysCheck(t, sc, bad, "delays.client"); c.Passed {
				t.Errorf("%s: wait %d made %s (envelope %s): delays.client passes, want fail", label, i+1, wrong, envString(e.lo, e.hi, e.ok))
			}
		}
	}
}

// retryIndex is the index in rs of the i-th RetryAttempt that retried.
func retryIndex(rs []trace.RetryAttempt, i int) int {
	for j, r := range rs {
		if r.WillRetry {
			if i == 0 {
				return j
			}
			i--
		}
	}
	return -1
}

func mustEnvelope(t *testing.T, sc *scenario.Scenario) EnvelopeFunc {
	t.Helper()
	env, err := EnvelopeFor(sc)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// faultsString names a sequence of faults for a failure's message.
func faultsString(fs []scenario.Fault) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		switch k := f.Kind.(type) {
		case fault.Status:
			fmt.Fprintf(&b, "%d", k.Status)
			if k.RetryAfter != nil {
				fmt.Fprintf(&b, " ra=%s", *k.RetryAfter)
			}
			for h, v := range k.Headers {
				fmt.Fprintf(&b, " %s=%s", h, v)
			}
		case fault.SSEError:
			fmt.Fprintf(&b, "sse(%d,%s)", k.AfterEvents, k.Type)
		default:
			b.WriteString(f.Name())
		}
	}
	return b.String()
}
