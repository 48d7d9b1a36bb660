package verify

import (
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// TestPolicyResendsInDelayChecks: a policy's loops of their own
// (retry.Resend: Claude Code's at-once re-sends of a 400, a 404 and an
// error mid-stream, Gemini CLI's stream loop), Claude Code's 503 that
// ignores x-should-retry: false and Codex's reconnected 403 are checked as
// those clients behave, from the journal alone, and a client that behaves
// otherwise still fails.
func TestPolicyResendsInDelayChecks(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	st := func(s int) scenario.Fault { return scenario.Fault{Kind: fault.Status{Status: s}} }
	srf := scenario.Fault{Kind: fault.Status{Status: 503, Headers: map[string]string{"x-should-retry": "false"}}}
	sse := scenario.Fault{Kind: fault.SSEError{AfterEvents: 3}}
	sse0 := scenario.Fault{Kind: fault.SSEError{AfterEvents: 0}}
	cut := scenario.Fault{Kind: fault.Drop{AfterBytes: 900}}
	rep := func(f scenario.Fault, n int) []scenario.Fault {
		out := make([]scenario.Fault, n)
		for i := range out {
			out[i] = f
		}
		return out
	}
	tests := []struct {
		name     string
		policy   string
		provider string
		faults   []scenario.Fault
		gaps     []time.Duration // one per wait; len+1 attempts
		outcome  string
		want     string // the delays.server check's state
	}{
		{"a 400 re-sent at once is not a backoff attempt", "claude-code", "anthropic",
			[]scenario.Fault{st(529), st(400), st(529)}, ms(560, 10, 1100), "success", StatePass},
		{"a 400 waited like a backoff attempt fails", "claude-code", "anthropic",
			[]scenario.Fault{st(529), st(400), st(529)}, ms(560, 560, 1100), "success", StateFail},
		{"a 400 re-sent five times, then given up", "claude-code", "anthropic",
			rep(st(400), 7), ms(10, 10, 10, 10, 10), "failure", StatePass},
		{"a 400 given up after one re-send fails", "claude-code", "anthropic",
			rep(st(400), 7), ms(10), "failure", StateFail},
		{"a 404 re-sent once", "claude-code", "anthropic", rep(st(404), 3), ms(10), "failure", StatePass},
		{"an SSE error re-sent at once, the count restarts", "claude-code", "anthropic",
			[]scenario.Fault{st(529), st(529), sse, st(529)}, ms(560, 1100, 10, 560), "success", StatePass},
		{"a 503 with x-should-retry: false retried with the backoff", "claude-code", "anthropic",
			[]scenario.Fault{srf, srf}, ms(560, 1100), "success", StatePass},
		{"a 422 reconnected five times, a 400 not retried", "codex-cli", "openai-responses",
			rep(st(422), 7), ms(200, 400, 800, 1600, 3200), "failure", StatePass},
		{"a 400 is not retried by codex", "codex-cli", "openai-responses",
			rep(st(400), 2), ms(200), "success", StateFail},
		{"a cut after two 529s waits 2s, the 529 after it 500ms", "claude-code", "anthropic",
			[]scenario.Fault{st(529), st(529), cut, st(529)}, ms(560, 1100, 2100, 560), "success", StatePass},
		{"a 403 reconnected five times", "codex-cli", "openai-responses",
			rep(st(403), 7), ms(200, 400, 800, 1600, 3200), "failure", StatePass},
		{"an SSE error before the first event is not modelled: unverified", "claude-code", "anthropic",
			[]scenario.Fault{sse0, st(529)}, ms(575, 558), "success", StateUnverified},
		{"...but a wrong wait elsewhere still fails", "claude-code", "anthropic",
			[]scenario.Fault{sse0, st(529)}, ms(575, 5000), "success", StateFail},
		{"an SSE error after the non-streaming re-send is not modelled: unverified", "claude-code", "anthropic",
			[]scenario.Fault{sse, sse, sse}, ms(10), "failure", StateUnverified},
		{"error frames re-sent after 1s, 2s", "gemini-cli", "gemini",
			[]scenario.Fault{sse, sse}, ms(1000, 2000), "success", StatePass},
		{"an error frame waited like the 5s backoff fails", "gemini-cli", "gemini",
			[]scenario.Fault{sse}, ms(5000), "success", StateFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scenario.Scenario{Name: "t", Provider: tt.provider, Attempts: tt.faults}
			sc.Expect.Delays.Policy, sc.Expect.Delays.Set = true, true
			if err := sc.Client.Policy.Encode(tt.policy); err != nil {
				t.Fatal(err)
			}
			ob, _ := Observe(sc, journal(tt.faults, tt.gaps), "", 1)
			ob.Outcome = tt.outcome
			env, err := EnvelopeFor(sc)
			if err != nil {
				t.Fatal(err)
			}
			var got *Check
			for _, c := range Evaluate(sc, ob, env) {
				if c.Name == "delays.server" {
					got = &c
				}
			}
			if got == nil {
				t.Fatal("no delays.server check")
			}
			if got.State != tt.want {
				t.Errorf("delays.server = %s, want %s\nwant: %s\ngot: %s\nwhere: %s", got.State, tt.want, got.Want, got.Got, got.Where)
			}
		})
	}
}

// journal is the server's attempts for faults met one after another with
// the gaps given (len(gaps)+1 attempts; the last ok when faults run out).
func journal(faults []scenario.Fault, gaps []time.Duration) []mock.ServerAttempt {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var as []mock.ServerAttempt
	for k := 0; k <= len(gaps); k++ {
		a := mock.ServerAttempt{N: k + 1, Path: "/v1/messages", Model: "m", Status: 200, Fault: scenario.FaultOK, Arrived: t0}
		if k < len(faults) {
			a.Fault = faults[k].Name()
			if st, ok := faults[k].Kind.(fault.Status); ok {
				a.Status = st.Status
			}
		}
		a.Ended = t0.Add(5 * time.Millisecond)
		as = append(as, a)
		if k < len(gaps) {
			t0 = a.Ended.Add(gaps[k])
		}
	}
	return as
}
