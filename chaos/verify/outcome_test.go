package verify

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/trace"
)

// stopObserved is a run of two attempts (a 529, then attempt 2 meeting
// last) at timeScale 0.5, on a fake clock: attempt 2 arrived at t0+2s and
// ended at end2 (zero: never), the client was stopped at stop.
func stopObserved(last string, status int, end2, stop time.Time, killed bool) Observed {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	return Observed{
		Outcome: OutcomeFailure, ServerAttempts: 2, TimeScale: 0.5,
		ServerFaults: []string{"529", last}, ServerStatuses: []int{529, status},
		FailedAttempts: []bool{true, last != "ok"},
		ServerArrived:  []time.Time{t0, t0.Add(2 * time.Second)},
		Facts:          []attemptFacts{{Ended: t0.Add(time.Second)}, {Ended: end2}},
		ClientKilled:   killed, Stopped: stop,
	}
}

func TestStillRetrying(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	stop := t0.Add(10 * time.Second)
	cases := []struct {
		name string
		ob   Observed
		want string
	}{
		{"stall open at the stop", stopObserved("stall", 200, stop.Add(5*time.Millisecond), stop, true),
			"the client was stopped at the scenario's end with attempt 2 (a stall) still open, 16s (policy time) after it arrived"},
		{"attempt never ended", stopObserved("hang", 0, time.Time{}, stop, true),
			"the client was stopped at the scenario's end with attempt 2 (a hang) still open, 16s (policy time) after it arrived"},
		{"waiting after a 529", stopObserved("529", 529, t0.Add(3*time.Second), stop, true),
			"the client was stopped at the scenario's end 14s (policy time) after attempt 2 (a 529) failed, waiting to send the next one"},
		{"stop time unknown", stopObserved("529", 529, t0.Add(3*time.Second), time.Time{}, true),
			"the client was stopped at the scenario's end after attempt 2 (a 529) failed, without giving up"},
		// A client that exits by itself, even at the last moment, did not stay.
		{"not killed", stopObserved("529", 529, t0.Add(3*time.Second), time.Time{}, false), ""},
		// Killed after its last attempt succeeded: it hung, it was not retrying.
		{"killed after a success", stopObserved("ok", 200, t0.Add(3*time.Second), stop, true), ""},
		{"killed before any attempt", Observed{ClientKilled: true, Stopped: stop}, ""},
		{"trace says it gave up", func() Observed {
			ob := stopObserved("529", 529, t0.Add(3*time.Second), stop, true)
			ob.GaveUp = true
			return ob
		}(), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := StillRetrying(c.ob); got != c.want {
				t.Errorf("StillRetrying() = %q, want %q", got, c.want)
			}
		})
	}
}

func TestGaveUp(t *testing.T) {
	t.Parallel()
	fin := func(ok bool, retries int, ft string) trace.ProviderRequestFinished {
		return trace.ProviderRequestFinished{Success: ok, Retries: retries, FailureType: ft}
	}
	cases := []struct {
		name     string
		finished []trace.ProviderRequestFinished
		attempts int
		want     bool
	}{
		{"no trace", nil, 3, false},
		{"exhausted", []trace.ProviderRequestFinished{fin(false, 2, "overloaded")}, 3, true},
		{"cancelled at the deadline", []trace.ProviderRequestFinished{fin(false, 2, "canceled")}, 3, false},
		{"succeeded", []trace.ProviderRequestFinished{fin(true, 2, "")}, 3, false},
		// The journal has an attempt the trace does not account for: the
		// client went on after the request it recorded.
		{"attempts after the last record", []trace.ProviderRequestFinished{fin(false, 1, "overloaded")}, 3, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := gaveUp(c.finished, c.attempts); got != c.want {
				t.Errorf("gaveUp() = %v, want %v", got, c.want)
			}
		})
	}
}

func TestEvaluateStillRetrying(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	stop := t0.Add(10 * time.Second)
	killed := func() Observed {
		ob := stopObserved("stall", 200, stop, stop, true)
		ob.Client = &client.ClientExit{Command: "agent", ExitCode: -1, Problem: "killed after 5s: still running at the deadline"}
		ob.Duration = 5 * time.Second
		ob.SettleOutcome()
		return ob
	}
	stillGot := "still_retrying: the client was stopped at the scenario's end with attempt 2 (a stall) still open, 16s (policy time) after it arrived"
	type short struct{ Name, State, Got string }
	cases := []struct {
		name   string
		expect scenario.Expect
		ob     Observed
		want   []short
	}{
		{"still_retrying expected and seen", scenario.Expect{Outcome: OutcomeStillRetrying, Attempts: intp(2), MaxDuration: scenario.Duration(5 * time.Second)}, killed(),
			[]short{{"outcome", StatePass, stillGot}, {"attempts", StatePass, "2"}}},
		{"success expected, still retrying", scenario.Expect{Outcome: OutcomeSuccess, MaxDuration: scenario.Duration(5 * time.Second)}, killed(),
			[]short{{"outcome", StateFail, stillGot}}},
		{"still_retrying expected, gave up", scenario.Expect{Outcome: OutcomeStillRetrying}, func() Observed {
			ob := stopObserved("529", 529, t0.Add(3*time.Second), time.Time{}, false)
			ob.Client = &client.ClientExit{Command: "agent", ExitCode: 1}
			ob.SettleOutcome()
			return ob
		}(), []short{{"outcome", StateFail, OutcomeFailure}}},
		{"no outcome expected: the kill still fails", scenario.Expect{Attempts: intp(2)}, killed(),
			[]short{{"client", StateFail, "killed after 5s: still running at the deadline"}, {"attempts", StatePass, "2"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := &scenario.Scenario{Expect: c.expect}
			var got []short
			for _, ch := range Evaluate(sc, c.ob, nil) {
				got = append(got, short{ch.Name, ch.State, ch.Got})
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Evaluate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPsecs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{18577 * time.Millisecond, "18.577s"}, // Seconds() gives 18.576999999999998
		{18576999999 * time.Nanosecond, "18.577s"},
		{2 * time.Second, "2s"},
		{0, "0s"},
	} {
		if got := psecs(c.d); got != c.want {
			t.Errorf("psecs(%d) = %q, want %q", c.d, got, c.want)
		}
	}
}
