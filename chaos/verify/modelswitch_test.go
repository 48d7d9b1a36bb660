package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/trace"
)

// TestModelSwitchEscalations: for a client without a trace, the models the
// journal saw are its escalations (Claude Code's --fallback-model after
// three 529s), reported with the attempt that first asked for the new model.
func TestModelSwitchEscalations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		models   []string
		ends     []bool // RequestEnds
		trace    bool   // the client wrote a trace that speaks
		traceEsc []trace.RunEscalated
		want     []scenario.Escalation
		check    Check
	}{
		{
			name:   "claude code fallback after three 529s",
			models: []string{"sonnet", "sonnet", "sonnet", "haiku", "haiku"},
			ends:   []bool{false, false, false, false, true},
			want:   []scenario.Escalation{{From: "sonnet", To: "haiku", Attempt: 4}},
			check: Check{Name: "escalations", Passed: true, Want: "sonnet → haiku at attempt 4", Got: "sonnet → haiku at attempt 4",
				Where: "server.jsonl: the model each attempt asked for"},
		},
		{
			name:   "one model throughout",
			models: []string{"sonnet", "sonnet", "sonnet"},
			ends:   []bool{false, false, true},
			check: Check{Name: "escalations", Passed: false, Want: "sonnet → haiku at attempt 4", Got: "none",
				Where: "server.jsonl: the model each attempt asked for: one model throughout each request"},
		},
		{
			name:   "a new request with another model is no switch",
			models: []string{"sonnet", "haiku"},
			ends:   []bool{true, true},
			check: Check{Name: "escalations", Passed: false, Want: "sonnet → haiku at attempt 4", Got: "none",
				Where: "server.jsonl: the model each attempt asked for: one model throughout each request"},
		},
		{
			name:   "switch at the wrong attempt",
			models: []string{"sonnet", "haiku", "haiku"},
			ends:   []bool{false, false, true},
			want:   []scenario.Escalation{{From: "sonnet", To: "haiku", Attempt: 2}},
			check: Check{Name: "escalations", Passed: false, Want: "sonnet → haiku at attempt 4", Got: "sonnet → haiku at attempt 2",
				Where: "server.jsonl: attempt 2 asked for haiku after sonnet"},
		},
		{
			name:   "an attempt without a model (reset) is skipped",
			models: []string{"sonnet", "sonnet", "sonnet", "", "haiku"},
			ends:   []bool{false, false, false, false, true},
			want:   []scenario.Escalation{{From: "sonnet", To: "haiku", Attempt: 5}},
			check: Check{Name: "escalations", Passed: false, Want: "sonnet → haiku at attempt 4", Got: "sonnet → haiku at attempt 5",
				Where: "server.jsonl: attempt 5 asked for haiku after sonnet"},
		},
		{
			name:     "a client with a trace is judged by its RunEscalated events",
			models:   []string{"sonnet", "haiku"},
			ends:     []bool{false, true},
			trace:    true,
			traceEsc: []trace.RunEscalated{{From: "sonnet", To: "haiku", Reason: "error_fallback"}},
			want:     []scenario.Escalation{{From: "sonnet", To: "haiku", Reason: "error_fallback"}},
			check: Check{Name: "escalations", Passed: true, Want: "sonnet → haiku at attempt 4", Got: "sonnet → haiku",
				Where: "trace.jsonl: RunEscalated"},
		},
	}
	want := []scenario.Escalation{{From: "sonnet", To: "haiku", Attempt: 4}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var attempts []mock.ServerAttempt
			for k, m := range tt.models {
				attempts = append(attempts, mock.ServerAttempt{N: k + 1, Model: m})
			}
			ob := Observed{ServerAttempts: len(attempts), RequestEnds: tt.ends, ClientTrace: tt.trace, Escalations: tt.traceEsc}
			ob.addModelSwitches(attempts)
			var got []scenario.Escalation
			for i, e := range ob.Escalations {
				esc := scenario.Escalation{From: e.From, To: e.To, Reason: e.Reason}
				if ob.EscalationsFromServer {
					esc.Attempt = ob.ModelSwitches[i]
				}
				got = append(got, esc)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("escalations mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.check, escalationCheck(want, ob)); diff != "" {
				t.Errorf("escalationCheck mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestModelSwitchRestartsAttempts: after a switch of model the policy's
// attempt count starts again (Claude Code's first wait on the fallback
// model is 0.5s again), and the gap before the switch is no wait.
func TestModelSwitchRestartsAttempts(t *testing.T) {
	t.Parallel()
	ob := Observed{ServerAttempts: 5, RequestEnds: []bool{false, false, false, false, true}}
	ob.addModelSwitches([]mock.ServerAttempt{{Model: "s"}, {Model: "s"}, {Model: "s"}, {Model: "h"}, {Model: "h"}})
	var got []int
	for k := 1; k <= 5; k++ {
		got = append(got, ob.attemptOnTarget(k))
	}
	if diff := cmp.Diff([]int{1, 2, 3, 1, 2}, got); diff != "" {
		t.Errorf("attemptOnTarget mismatch (-want +got):\n%s", diff)
	}
	de := delayEnvelopes{ob: ob}
	if e := de.server(2, Wait{After: 3}, nil); e != (envl{0, 0, true}) {
		t.Errorf("envelope of the gap before the switch = %+v, want at once", e)
	}
}
