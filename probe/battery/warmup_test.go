package battery

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/probe"
)

// TestWarmUpDecision: the pilot's observation decides whether the battery
// keeps the warm-up request. Only a client that sent its warm-up request
// and no probed one is probed without it.
func TestWarmUpDecision(t *testing.T) {
	tests := []struct {
		name     string
		pilot    probe.Observation
		wantUse  bool
		detected bool
		reason   string
	}{
		{"two requests: the warm-up ok, then the 400 (given up)",
			probe.Observation{Fault: "400", Attempts: 1, End: probe.EndGaveUp}, true, false, "made the two requests"},
		{"two requests, the 400 retried",
			probe.Observation{Fault: "400", Attempts: 2, End: probe.EndSucceeded, WaitsMs: []float64{500}}, true, false, "made the two requests"},
		{"one request whatever it is told: the warm-up ok, exit 0 (claude -p, codex exec)",
			probe.Observation{Fault: "400", End: probe.EndNotRun, WarmUpOnly: true}, false, true, "makes one request whatever it is told"},
		{"one request, then exit 1 (an agent that fails after its answer)",
			probe.Observation{Fault: "400", End: probe.EndGaveUp, WarmUpOnly: true, Client: "exit status 1"}, false, true, "every probe ran without the warm-up"},
		{"one request, then still running at the deadline (an interactive agent)",
			probe.Observation{Fault: "400", End: probe.EndStopped, WarmUpOnly: true}, false, true, "RETRYLAB_REQUESTS=2"},
		{"no request at all: says nothing of the warm-up, kept (the battery says what was seen)",
			probe.Observation{Fault: "400", End: probe.EndGaveUp, Client: "exit status 1"}, true, false, "sent no request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			use, w := warmUpDecision(tt.pilot)
			if use != tt.wantUse || w.Used != tt.wantUse || w.Detected != tt.detected || !strings.Contains(w.Reason, tt.reason) {
				t.Errorf("warmUpDecision() = %t, %+v; want use %t, detected %t, a reason with %q", use, w, tt.wantUse, tt.detected, tt.reason)
			}
		})
	}
}

// TestObserveWarmUpOnly: a run whose client made its warm-up request only
// and exited 0 is read as WarmUpOnly, which is what the pilot decides on
// (it used to say so in a note only).
func TestObserveWarmUpOnly(t *testing.T) {
	prov, _ := probe.LookupProvider("anthropic")
	f, _ := prov.Fault("400")
	res := chaos.Result{Verdict: chaos.VerdictPass, Attempts: 1, Outcome: "success", Dir: t.TempDir()}
	ob := Observe(Probe{Fault: f, WarmUp: true, Served: 1, Deadline: time.Minute}, res, 1)
	if !ob.WarmUpOnly || ob.Attempts != 0 {
		t.Errorf("Observe() = WarmUpOnly %t, Attempts %d; want true, 0", ob.WarmUpOnly, ob.Attempts)
	}
	ob = Observe(Probe{Fault: f, Served: 1, Deadline: time.Minute}, res, 1)
	if ob.WarmUpOnly || ob.Attempts != 1 {
		t.Errorf("without the warm-up: Observe() = WarmUpOnly %t, Attempts %d; want false, 1", ob.WarmUpOnly, ob.Attempts)
	}
}

// TestPilotIndex: the pilot is the 400's decision probe, else the first
// short decision probe, else the first probe.
func TestPilotIndex(t *testing.T) {
	prov, _ := probe.LookupProvider("anthropic")
	mk := func(names ...string) []Probe {
		var ps []Probe
		for _, n := range names {
			f, ok := prov.Fault(n)
			if !ok {
				f = prov.Exhaust
			}
			p := Probe{Fault: f}
			if n == "exhaust" {
				p.Sample = 1
			}
			ps = append(ps, p)
		}
		return ps
	}
	tests := []struct {
		name  string
		ps    []Probe
		want  string
		index int
	}{
		{"the 400 when planned", mk("429 retry-after http-date", "exhaust", "503", "400"), "400", 3},
		{"else the first short decision probe, not the date, the hang or an exhaustion", mk("429 retry-after http-date", "exhaust", "hang", "503", "429"), "503", 3},
		{"else the first probe", mk("exhaust", "exhaust"), prov.Exhaust.Name, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := pilotIndex(tt.ps)
			if diff := cmp.Diff([]any{tt.index, tt.want}, []any{i, tt.ps[i].Fault.Name}); diff != "" {
				t.Errorf("pilotIndex() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWarmUpAfterBattery: a pilot that sent nothing (a cold start) kept
// the warm-up; a battery whose runs then made their warm-up request only
// learnt nothing of a one-request client, and is run again without it.
// Any probed attempt, or a pilot that reached the mock, keeps it.
func TestWarmUpAfterBattery(t *testing.T) {
	cold := []probe.Observation{{Fault: "400", End: probe.EndGaveUp, Client: "exit status 1"}}
	only := probe.Observation{Fault: "503", End: probe.EndNotRun, WarmUpOnly: true}
	probed := probe.Observation{Fault: "429", Attempts: 2, End: probe.EndSucceeded, WaitsMs: []float64{500}}
	unreached := probe.Observation{Fault: "500", End: probe.EndGaveUp, Client: "exit status 1"}
	tests := []struct {
		name    string
		pilot   []probe.Observation
		battery []probe.Observation
		o       Options
		again   bool
	}{
		{"cold pilot, then warm-up only: again", cold, []probe.Observation{only, only, unreached}, Options{}, true},
		{"cold pilot, a probed attempt: kept", cold, []probe.Observation{only, probed}, Options{}, false},
		{"cold pilot, nothing reached: kept (unreached says it)", cold, []probe.Observation{unreached}, Options{}, false},
		{"pilot reached the mock: kept", []probe.Observation{{Fault: "400", Attempts: 1, End: probe.EndGaveUp}}, []probe.Observation{only}, Options{}, false},
		{"no pilot (--warm-up=false)", nil, []probe.Observation{only}, Options{NoWarmUp: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, again := warmUpAfterBattery(tt.pilot, tt.battery, tt.o)
			if again != tt.again {
				t.Fatalf("warmUpAfterBattery() = %t, want %t", again, tt.again)
			}
			if again && (w.Used || !w.Detected || !strings.Contains(w.Reason, "ran again without the warm-up")) {
				t.Errorf("WarmUp = %+v: want off, detected, saying it ran again", w)
			}
		})
	}
}

// TestObserveExitZeroGaveUp: aider exits 0 after giving up on a steady 503
// (27 attempts for 28 failures served): a run whose attempts all met the
// fault was read as succeeded, so the probe saw no give-up and called the
// retry limit "at least 26". The mock's ok, not the exit status, says a
// request succeeded.
func TestObserveExitZeroGaveUp(t *testing.T) {
	prov, _ := probe.LookupProvider("openai")
	f400, _ := prov.Fault("400")
	tests := []struct {
		name     string
		p        Probe
		attempts int    // the server's, warm-up included
		outcome  string // the client's exit: success is exit 0
		want     string
	}{
		{"aider: 27 attempts for 28 failures, exit 0", Probe{Fault: prov.Exhaust, Sample: 1, Served: 28}, 27, "success", probe.EndGaveUp},
		{"the ok reached", Probe{Fault: prov.Exhaust, Sample: 1, Served: 28}, 29, "success", probe.EndSucceeded},
		{"warm-up: 10 probed attempts for 10 failures", Probe{Fault: prov.Exhaust, Sample: 1, Served: 10, WarmUp: true}, 11, "success", probe.EndGaveUp},
		{"warm-up: the ok reached", Probe{Fault: prov.Exhaust, Sample: 1, Served: 10, WarmUp: true}, 12, "success", probe.EndSucceeded},
		{"a 400 swallowed, exit 0", Probe{Fault: f400, Served: 1}, 1, "success", probe.EndGaveUp},
		{"a 400 retried, the ok reached", Probe{Fault: f400, Served: 1}, 2, "success", probe.EndSucceeded},
		{"exit 1", Probe{Fault: prov.Exhaust, Sample: 1, Served: 28}, 27, "failure", probe.EndGaveUp},
		{"a survival check: its outage is a time, not a count", Probe{Fault: prov.Exhaust, Check: probe.CheckShorter}, 3, "success", probe.EndSucceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := chaos.Result{Verdict: chaos.VerdictPass, Attempts: tt.attempts, Outcome: tt.outcome, Dir: t.TempDir()}
			ob := Observe(tt.p, res, 1)
			if ob.End != tt.want {
				t.Errorf("Observe() end = %q (%s), want %q", ob.End, ob.Note, tt.want)
			}
		})
	}
}
