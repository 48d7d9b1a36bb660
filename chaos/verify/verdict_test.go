package verify

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/trace"
)

// parse loads a scenario from src, failing the test on an error.
func parse(t *testing.T, name, src string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.ParseScenario(name+".yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// checkNamed returns the check called name, failing the test if there is
// none.
func checkNamed(t *testing.T, cs []Check, name string) Check {
	t.Helper()
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s check in %+v", name, cs)
	return Check{}
}

// fixedEnvelope is an EnvelopeFunc that allows [lo, hi] after every failure.
func fixedEnvelope(lo, hi time.Duration) EnvelopeFunc {
	return func(string, int, time.Duration, bool) (time.Duration, time.Duration, bool) { return lo, hi, true }
}

// bandClient is who ran a scenario, as far as the server-side band cares.
type bandClient int

const (
	builtIn  bandClient = iota // the built-in client: a trace, no process
	external                   // an external command without a trace
	served                     // whatever talks to `chaos serve`: no trace, no process
)

// oneWait is what the server saw of a scenario with one failed attempt, one
// wait and a success, for the given client; the client's own trace (if any)
// recorded a wait of recorded.
func oneWait(who bandClient, w Wait, recorded time.Duration) Observed {
	ob := Observed{
		Outcome: "success", ServerAttempts: 2, TimeScale: 1,
		ServerFaults: []string{"529", "ok"}, FailedAttempts: []bool{true, false}, RequestEnds: []bool{false, true},
		InferredTypes: []string{"overloaded"}, InferredRetryAfter: []*time.Duration{nil},
		ServerWaits: []Wait{w},
	}
	switch who {
	case builtIn:
		ob.ClientTrace = true
		ob.Retries = retries("overloaded", recorded.Milliseconds())
	case external:
		ob.Client = &client.ClientExit{Command: "sh client.sh"}
	}
	return ob
}

// TestGapBandTolerance checks where each side of a server-side band lies.
// With tolerance {abs: 1ms} at timeScale 1 the base is 1ms + ServerResidual
// = 4ms, ratio 0: the short side gets that plus half the measured slack,
// the long side that plus the whole slack and, for clients other than the
// built-in one, ExternalAllowance + ExternalRatio and the measured
// run-queue wait of the client's processes.
func TestGapBandTolerance(t *testing.T) {
	t.Parallel()
	tol := scenario.Tolerance{Abs: scenario.Duration(ms(1))}
	tests := []struct {
		name   string
		who    bandClient
		wait   Wait
		slack  time.Duration // Observed.Slack, used when the wait has none
		remote bool
		want   string // state of delays.server
	}{
		// Built-in, slack 100ms: [1000 − 4 − 50, 1000 + 4 + 100] = [946ms, 1104ms].
		{name: "built-in: short side at its edge", who: builtIn, wait: Wait{Gap: ms(946), Slack: ms(100)}, want: StatePass},
		{name: "built-in: short side past its edge", who: builtIn, wait: Wait{Gap: ms(946) - 1, Slack: ms(100)}, want: StateFail},
		{name: "built-in: long side at its edge", who: builtIn, wait: Wait{Gap: ms(1104), Slack: ms(100)}, want: StatePass},
		{name: "built-in: long side past its edge", who: builtIn, wait: Wait{Gap: ms(1104) + 1, Slack: ms(100)}, want: StateFail},
		{
			// The built-in client's lag is not measured and not added even
			// if a wait says so: it is this process, which Slack covers.
			name: "built-in: a client lag does not widen", who: builtIn,
			wait: Wait{Gap: ms(1104) + 1, Slack: ms(100), ClientLag: ms(50), ClientLagMeasured: true}, want: StateFail,
		},
		{name: "the scenario's slack when the wait has none", who: builtIn, wait: Wait{Gap: ms(946) - 1}, slack: ms(100), want: StateFail},
		{name: "the scenario's slack when the wait has none, inside", who: builtIn, wait: Wait{Gap: ms(1104)}, slack: ms(100), want: StatePass},
		// Remote proxy: 20ms more on both sides: [926ms, 1124ms].
		{name: "remote proxy: short side", who: builtIn, wait: Wait{Gap: ms(926), Slack: ms(100)}, remote: true, want: StatePass},
		{name: "remote proxy: short side past", who: builtIn, wait: Wait{Gap: ms(926) - 1, Slack: ms(100)}, remote: true, want: StateFail},
		{name: "remote proxy: long side", who: builtIn, wait: Wait{Gap: ms(1124), Slack: ms(100)}, remote: true, want: StatePass},
		{name: "remote proxy: long side past", who: builtIn, wait: Wait{Gap: ms(1124) + 1, Slack: ms(100)}, remote: true, want: StateFail},
		// External, slack 100ms, lag 50ms: the short side is the built-in
		// client's (946ms); the long side 1000 + 4 + 100 + 25 + 50 + 3% of
		// 1s = 1209ms.
		{
			name: "external: short side is not widened by the client's costs", who: external,
			wait: Wait{Gap: ms(946) - 1, Slack: ms(100), ClientLag: ms(50), ClientLagMeasured: true}, want: StateFail,
		},
		{
			name: "external: short side at its edge", who: external,
			wait: Wait{Gap: ms(946), Slack: ms(100), ClientLag: ms(50), ClientLagMeasured: true}, want: StatePass,
		},
		{
			name: "external: long side at its edge", who: external,
			wait: Wait{Gap: ms(1209), Slack: ms(100), ClientLag: ms(50), ClientLagMeasured: true}, want: StatePass,
		},
		{
			name: "external: long side past its edge", who: external,
			wait: Wait{Gap: ms(1209) + 1, Slack: ms(100), ClientLag: ms(50), ClientLagMeasured: true}, want: StateFail,
		},
		// Not measured: the lag a wait carries is not added: 1159ms.
		{
			name: "external: unmeasured lag is not added", who: external,
			wait: Wait{Gap: ms(1159) + 1, Slack: ms(100), ClientLag: ms(50)}, want: StateFail,
		},
		{
			name: "external: unmeasured lag, long side at its edge", who: external,
			wait: Wait{Gap: ms(1159), Slack: ms(100), ClientLag: ms(50)}, want: StatePass,
		},
		// A client of `chaos serve` (no trace, no process) is external too.
		{
			name: "served: long side at its edge", who: served,
			wait: Wait{Gap: ms(1209), Slack: ms(100), ClientLag: ms(50), ClientLagMeasured: true}, want: StatePass,
		},
		{
			name: "served: long side past its edge", who: served,
			wait: Wait{Gap: ms(1209) + 1, Slack: ms(100), ClientLag: ms(50), ClientLagMeasured: true}, want: StateFail,
		},
		{
			name: "served: short side past its edge", who: served,
			wait: Wait{Gap: ms(946) - 1, Slack: ms(100), ClientLag: ms(50), ClientLagMeasured: true}, want: StateFail,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scenario.Scenario{Expect: scenario.Expect{Delays: scenario.Delays{Set: true, List: durs(time.Second)}, Tolerance: tol}}
			tt.wait.After = 1
			ob := oneWait(tt.who, tt.wait, time.Second)
			ob.Slack, ob.RemoteProxy = tt.slack, tt.remote
			c := checkNamed(t, Evaluate(sc, ob, nil), "delays.server")
			if c.State != tt.want || c.Passed != (tt.want == StatePass) {
				t.Errorf("delays.server = %s (passed %v), want %s: %+v", c.State, c.Passed, tt.want, c)
			}
		})
	}
}

// TestGapBandWhere checks that a failed gap names the gap and every
// tolerance that went into its band, on the side it widens: the short side
// (before " / +") and the long side (after it). Only the figures and the
// stable part of each note are compared, not the whole sentence.
func TestGapBandWhere(t *testing.T) {
	t.Parallel()
	tol := scenario.Tolerance{Abs: scenario.Duration(ms(1))}
	const prefix = "server.jsonl: gap between attempts 1 and 2 (wall clock, timeScale 1), tolerance "
	tests := []struct {
		name         string
		who          bandClient
		wait         Wait
		remote       bool
		below, above []string // fragments of each side, in order
		notAbove     []string // fragments the long side must not have
	}{
		{
			name: "built-in, idle", who: builtIn, wait: Wait{Gap: ms(900)},
			below: []string{"−4ms + 0%"}, above: []string{"+4ms + 0%"},
			notAbove: []string{"process costs", "not measured"},
		},
		{
			name: "built-in, slack", who: builtIn, wait: Wait{Gap: ms(900), Slack: ms(100)},
			below: []string{"−54ms + 0%", "50ms measured scheduling lateness"},
			above: []string{"+104ms + 0%", "100ms for twice the measured scheduling lateness"},
		},
		{
			name: "built-in, slack, remote proxy", who: builtIn, wait: Wait{Gap: ms(900), Slack: ms(100)}, remote: true,
			below: []string{"−74ms + 0%", "50ms measured scheduling lateness", "20ms for a toxiproxy-server in another process"},
			above: []string{"+124ms + 0%", "100ms for twice the measured scheduling lateness", "20ms for a toxiproxy-server in another process"},
		},
		{
			name: "external, lag measured", who: external, wait: Wait{Gap: ms(900), Slack: ms(100), ClientLag: ms(50), ClientLagMeasured: true},
			below: []string{"−54ms + 0%", "50ms measured scheduling lateness"},
			above: []string{"+179ms + 3%", "100ms for twice the measured scheduling lateness", "25ms + 3% for the client's process costs", "50ms measured", "of the client's processes"},
		},
		{
			name: "external, lag not measured", who: external, wait: Wait{Gap: ms(900)},
			below: []string{"−4ms + 0%"},
			above: []string{"+29ms + 3%", "25ms + 3% for the client's process costs", "not measured"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scenario.Scenario{Expect: scenario.Expect{Delays: scenario.Delays{Set: true, List: durs(time.Second)}, Tolerance: tol}}
			tt.wait.After = 1
			ob := oneWait(tt.who, tt.wait, time.Second)
			ob.RemoteProxy = tt.remote
			c := checkNamed(t, Evaluate(sc, ob, nil), "delays.server")
			if c.State != StateFail {
				t.Fatalf("delays.server = %+v, want a failure", c)
			}
			rest, ok := strings.CutPrefix(c.Where, prefix)
			below, above, ok2 := strings.Cut(rest, " / +")
			if !ok || !ok2 {
				t.Fatalf("Where = %q, want %q then the short side, \" / +\" and the long side", c.Where, prefix)
			}
			above = "+" + above
			check := func(side, s string, want, not []string) {
				at := 0
				for _, f := range want {
					i := strings.Index(s[at:], f)
					if i < 0 {
						t.Errorf("%s side of Where = %q, want %q (after byte %d)", side, s, f, at)
						continue
					}
					at += i + len(f)
				}
				for _, f := range not {
					if strings.Contains(s, f) {
						t.Errorf("%s side of Where = %q, want no %q", side, s, f)
					}
				}
			}
			check("short", below, tt.below, []string{"process costs", "run-queue"})
			check("long", above, tt.above, tt.notAbove)
		})
	}
}

// TestGapBandLagNeverPassesShortGap is a regression test: under load, the
// widening for measured lateness grew past the whole distance between an
// expected envelope (375–500ms) and the client's real wait (0ms), and a
// deliberately wrong expectation passed. However much slack and run-queue
// wait is measured, a 0ms gap for [375ms, 500ms] fails, or is
// inconclusive once the slack alone (half of it, on the short side) covers
// the distance; it never passes. The client's run-queue wait only
// lengthens a gap, so it never widens the short side.
func TestGapBandLagNeverPassesShortGap(t *testing.T) {
	t.Parallel()
	sc := &scenario.Scenario{Expect: scenario.Expect{Delays: scenario.Delays{Set: true, Policy: true}}}
	env := fixedEnvelope(ms(375), ms(500))
	// Default tolerance at timeScale 1: 5ms + 3ms residual + 2% = 15.5ms
	// at 375ms on the short side, plus half the slack.
	tests := []struct {
		name       string
		who        bandClient
		slack, lag time.Duration
		want       string
	}{
		{name: "idle", who: external, want: StateFail},
		{name: "an hour of run-queue wait", who: external, lag: time.Hour, want: StateFail},
		{name: "run-queue wait and some slack", who: external, slack: ms(100), lag: time.Hour, want: StateFail},
		{name: "slack just short of the distance", who: external, slack: ms(718), lag: time.Hour, want: StateFail},
		{name: "slack covers the distance", who: external, slack: ms(720), lag: time.Hour, want: StateInconclusive},
		{name: "huge slack, no lag", who: external, slack: 10 * time.Second, want: StateInconclusive},
		{name: "served client, an hour of run-queue wait", who: served, lag: time.Hour, want: StateFail},
		{name: "built-in, huge slack", who: builtIn, slack: 10 * time.Second, want: StateInconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ob := oneWait(tt.who, Wait{After: 1, Gap: 0, Slack: tt.slack, ClientLag: tt.lag, ClientLagMeasured: true}, ms(400))
			c := checkNamed(t, Evaluate(sc, ob, env), "delays.server")
			if c.State != tt.want {
				t.Errorf("delays.server = %s, want %s: %+v", c.State, tt.want, c)
			}
		})
	}
	// And over a grid: never a pass.
	for _, who := range []bandClient{builtIn, external, served} {
		for _, slack := range []time.Duration{0, time.Microsecond, ms(10), ms(250), ms(500), ms(719), ms(720), ms(750), time.Second, time.Minute} {
			for _, lag := range []time.Duration{0, ms(1), ms(375), ms(500), time.Second, time.Hour} {
				ob := oneWait(who, Wait{After: 1, Gap: 0, Slack: slack, ClientLag: lag, ClientLagMeasured: true}, ms(400))
				if c := checkNamed(t, Evaluate(sc, ob, env), "delays.server"); c.Passed || c.State == StatePass {
					t.Errorf("client %d, slack %v, lag %v: a 0ms gap passed [375ms, 500ms]: %+v", who, slack, lag, c)
				}
			}
		}
	}
}

// TestGapBandConclusive checks both sides of each boundary of conclusive()
// and of wide(): a band is inconclusive exactly when its measured width
// (short side + long side, without the scenario's tolerance) reaches half
// the shortest allowed wait, or max(longest, minSeparation); a conclusive
// band passes with a warning when the scenario's tolerance, counted once,
// takes the width there. Ratios are 0 here (tolerance {abs: 1ms or 2ms}) so
// that each width is the same at every wait. A gap inside an inconclusive
// band is inconclusive; outside it, it fails. Issue 18: the tolerance used
// to count (twice) as noise.
func TestGapBandConclusive(t *testing.T) {
	t.Parallel()
	const warn = "warning"
	tests := []struct {
		name   string
		who    bandClient
		tol    scenario.Tolerance
		lo, hi time.Duration // the allowed waits (policy time = wall clock)
		wait   Wait
		want   string
		hint   string // "", warn, or inconclusiveHint
	}{
		// Half the shortest wait: 500ms for 1s. Measured: 3ms residual a
		// side and 1.5 × slack, which reaches 500ms at slack 329.33ms; with
		// the 1ms tolerance, the band reaches a wait of 500ms at 328.67ms.
		// A "reached" case needs a gap that a wrong wait could show too
		// (conclusiveAt): here one at most 1ms above the band's low end.
		{name: "short boundary: reached", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: ms(832), Slack: ms(988)/3 + 1}, want: StateInconclusive, hint: inconclusiveHint},
		{name: "short boundary: 1ns under, the tolerance reaches a half wait", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: time.Second, Slack: ms(988) / 3}, want: StatePass, hint: warn},
		{name: "warning boundary: reached", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: time.Second, Slack: ms(986)/3 + 1}, want: StatePass, hint: warn},
		{name: "warning boundary: 1ns under", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: time.Second, Slack: ms(986) / 3}, want: StatePass},
		// The run-queue wait of an external client counts in the width:
		// 3 + 3 + 25 + 3% of 1s + lag reaches 500ms at lag 439ms.
		{name: "short boundary, external: reached", who: external, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: ms(997), ClientLag: ms(439), ClientLagMeasured: true}, want: StateInconclusive, hint: inconclusiveHint},
		{name: "short boundary, external: 1ns under", who: external, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: time.Second, ClientLag: ms(439) - 1, ClientLagMeasured: true}, want: StatePass, hint: warn},
		{name: "short boundary, external: 1ms + 1ns under", who: external, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: time.Second, ClientLag: ms(438) - 1, ClientLagMeasured: true}, want: StatePass},
		// A retry at once: no short side; minSeparation (200ms) bounds the
		// total: 6ms + 1.5 × slack reaches it at slack 129.33ms.
		{name: "minSeparation boundary: reached", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: 0, hi: 0,
			wait: Wait{Gap: ms(133), Slack: ms(388)/3 + 1}, want: StateInconclusive, hint: inconclusiveHint},
		{name: "minSeparation boundary: 1ns under", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: 0, hi: 0,
			wait: Wait{Gap: 0, Slack: ms(388) / 3}, want: StatePass, hint: warn},
		// Full jitter [0, 400ms]: the longest wait bounds the total: 6ms +
		// 1.5 × slack reaches 400ms at slack 262.67ms.
		{name: "longest-wait boundary: reached", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(2))}, lo: 0, hi: ms(400),
			wait: Wait{Gap: ms(666), Slack: ms(788)/3 + 1}, want: StateInconclusive, hint: inconclusiveHint},
		{name: "longest-wait boundary: 1ns under", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(2))}, lo: 0, hi: ms(400),
			wait: Wait{Gap: ms(200), Slack: ms(788) / 3}, want: StatePass, hint: warn},
		// Outside an inconclusive band: [1000 − 4 − 200, 1000 + 4 + 400].
		{name: "too long, band not conclusive", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: ms(1404) + 1, Slack: ms(400)}, want: StateFail},
		{name: "too short, band not conclusive", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: ms(796) - 1, Slack: ms(400)}, want: StateFail},
		// The same reach from the default tolerance (5ms + 2% = 25ms at
		// 1s) gives no warning: the author chose nothing, and the noise
		// that brings a wrong wait near was judged conclusive (CI showed
		// "the default tolerance (5ms + 2%) is wide" for 402ms of 400ms).
		{name: "an author's 25ms reaches a half wait: warning", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(25))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: time.Second, Slack: ms(320)}, want: StatePass, hint: warn},
		{name: "the default tolerance reaches a half wait: no warning", who: builtIn, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: time.Second, Slack: ms(320)}, want: StatePass},
		// A band that is not conclusive: a gap that a half wait could show
		// too ([796ms, 903ms]) is inconclusive; one that no wrong wait
		// could show passes, at either end of the band.
		{name: "inside near the short end, band not conclusive", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: ms(900), Slack: ms(400)}, want: StateInconclusive, hint: inconclusiveHint},
		{name: "inside, the gap rules out a wrong wait", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: ms(1404), Slack: ms(400)}, want: StatePass},
		{name: "inside, just above what a half wait could show", who: builtIn, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: time.Second, hi: time.Second,
			wait: Wait{Gap: ms(903) + 1, Slack: ms(400)}, want: StatePass},
		// CI's case: the Go SDK waited retry-after-ms 400 and the server saw
		// 404ms with 124ms of slack measured on a loaded machine: a half
		// wait shows at most 200 + 176ms, a double one at least 735ms.
		{name: "a right wait on a busy machine", who: external, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: ms(400), hi: ms(400),
			wait: Wait{Gap: ms(404), Slack: ms(124), ClientLag: ms(12), ClientLagMeasured: true}, want: StatePass},
		{name: "a gap a half wait could show on a busy machine", who: external, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: ms(400), hi: ms(400),
			wait: Wait{Gap: ms(350), Slack: ms(124), ClientLag: ms(12), ClientLagMeasured: true}, want: StateInconclusive, hint: inconclusiveHint},
		{name: "a gap below the band on a busy machine", who: external, tol: scenario.Tolerance{Abs: scenario.Duration(ms(1))}, lo: ms(400), hi: ms(400),
			wait: Wait{Gap: ms(330), Slack: ms(124), ClientLag: ms(12), ClientLagMeasured: true}, want: StateFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scenario.Scenario{Expect: scenario.Expect{Delays: scenario.Delays{Set: true, Policy: true}, Tolerance: tt.tol}}
			tt.wait.After = 1
			ob := oneWait(tt.who, tt.wait, (tt.lo+tt.hi)/2)
			c := checkNamed(t, Evaluate(sc, ob, fixedEnvelope(tt.lo, tt.hi)), "delays.server")
			if c.State != tt.want || c.Passed != (tt.want == StatePass) {
				t.Errorf("delays.server = %s (passed %v), want %s: %+v", c.State, c.Passed, tt.want, c)
			}
			hint := c.Hint
			if c.Warning() {
				hint = warn
			}
			if hint != tt.hint {
				t.Errorf("delays.server hint = %q, want %q", c.Hint, tt.hint)
			}
		})
	}
}

// TestGapCheckInconclusive checks the whole delays.server check when a band
// cannot tell: what it says, and that a failed gap wins over an
// inconclusive one whatever their order.
func TestGapCheckInconclusive(t *testing.T) {
	t.Parallel()
	tol := scenario.Tolerance{Abs: scenario.Duration(ms(1))}
	noisy := Wait{Gap: ms(832), Slack: ms(330)} // inconclusive: a half wait could show it, see TestGapBandConclusive
	quiet := Wait{Gap: ms(1200)}                // 1.2s for 1s on a quiet machine: a failure
	where1 := "server.jsonl: gap between attempts 1 and 2 (wall clock, timeScale 1), tolerance " +
		"−169ms + 0% (incl. 165ms measured scheduling lateness) / +334ms + 0% (incl. 330ms for twice the measured scheduling lateness)"
	tests := []struct {
		name  string
		waits []Wait
		want  Check
		// The hint is left to TestGapCheckFailAfterInconclusiveHint.
		hintUnchecked bool
	}{
		{
			name:  "inconclusive",
			waits: []Wait{noisy},
			want: Check{Name: "delays.server", State: StateInconclusive, Want: "1s (wall clock = policy × timeScale 1)", Got: "832ms",
				Where: where1 + "; with this much measured noise a wrong wait (≤ 500ms or ≥ 2s) could pass too",
				Hint:  inconclusiveHint},
		},
		{
			name:  "inconclusive, then a failure",
			waits: []Wait{noisy, quiet},
			want: Check{Name: "delays.server", State: StateFail, Want: "1s, 1s (wall clock = policy × timeScale 1)", Got: "832ms, 1.2s",
				Where: "server.jsonl: gap between attempts 2 and 3 (wall clock, timeScale 1), tolerance −4ms + 0% / +4ms + 0%"},
			hintUnchecked: true,
		},
		{
			name:  "a failure, then inconclusive",
			waits: []Wait{quiet, noisy},
			want: Check{Name: "delays.server", State: StateFail, Want: "1s, 1s (wall clock = policy × timeScale 1)", Got: "1.2s, 832ms",
				Where: "server.jsonl: gap between attempts 1 and 2 (wall clock, timeScale 1), tolerance −4ms + 0% / +4ms + 0%"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var list []time.Duration
			var delays []int64
			for i := range tt.waits {
				tt.waits[i].After = i + 1
				list = append(list, time.Second)
				delays = append(delays, 1000)
			}
			sc := &scenario.Scenario{Expect: scenario.Expect{Delays: scenario.Delays{Set: true, List: durs(list...)}, Tolerance: tol}}
			ob := Observed{ClientTrace: true, TimeScale: 1, Retries: retries("overloaded", delays...), ServerWaits: tt.waits}
			got := checkNamed(t, Evaluate(sc, ob, nil), "delays.server")
			if tt.hintUnchecked {
				got.Hint = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("evaluate() delays.server mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGapCheckFailAfterInconclusiveHint: a failed delays.server check does
// not carry the hint of an inconclusive one ("the machine was too busy to
// tell"), which would send the user to lower --parallel for a wait that
// was simply wrong on a quiet gap.
func TestGapCheckFailAfterInconclusiveHint(t *testing.T) {
	t.Parallel()
	sc := &scenario.Scenario{Expect: scenario.Expect{Delays: scenario.Delays{Set: true, List: durs(time.Second, time.Second)}, Tolerance: scenario.Tolerance{Abs: scenario.Duration(ms(1))}}}
	ob := Observed{ClientTrace: true, TimeScale: 1, Retries: retries("overloaded", 1000, 1000),
		ServerWaits: []Wait{{After: 1, Gap: time.Second, Slack: ms(330)}, {After: 2, Gap: ms(1200)}}}
	got := checkNamed(t, Evaluate(sc, ob, nil), "delays.server")
	if got.State != StateFail || got.Hint != "" {
		t.Errorf("evaluate() delays.server = %s with hint %q, want fail with no hint", got.State, got.Hint)
	}
}

// gaveUpCase describes a run for TestGaveUpEarly: per server attempt, its
// fault (what the server inferred), whether it failed and whether it ended
// its logical request; the client's RetryAttempt events when it wrote a
// trace. Waits are put inside the policy's envelope, so that only the
// "gave up early" rule can fail delays.server.
type gaveUpCase struct {
	name     string
	scenario string // YAML
	types    []string
	failed   []bool
	ends     []bool
	outcome  string
	trace    []trace.RetryAttempt // nil: no trace
	escal    []trace.RunEscalated
	want     Check // State and Where of delays.server only
}

// TestGaveUpEarly: delays: policy fails a client that stopped retrying
// where its policy still allowed a retry, per logical request, with or
// without a trace; not when the policy does not retry that failure, not when
// the attempts are exhausted, not when x-should-retry: false told it to
// stop, and not with escalations (the attempt counts are the client's).
func TestGaveUpEarly(t *testing.T) {
	t.Parallel()
	const sdk = "client: {policy: anthropic-sdk}\n"
	ra := func(attempt int, ft string, will bool, delay int64) trace.RetryAttempt {
		src := "backoff"
		if !will {
			src = ""
		}
		return trace.RetryAttempt{Attempt: attempt, FailureType: ft, WillRetry: will, DelayMs: delay, DelaySource: src}
	}
	tests := []gaveUpCase{
		{
			name: "no trace: stopped after the first failure", scenario: sdk + "attempts: [{status: 529}]",
			types: []string{"overloaded"}, failed: []bool{true}, ends: []bool{false}, outcome: "failure",
			want: Check{State: StateFail, Where: "server.jsonl: the client stopped after attempt 1 (overloaded, attempt 1 of its request), where its policy retries after [375ms, 500ms]"},
		},
		{
			name: "trace: stopped after the first failure", scenario: sdk + "attempts: [{status: 529}]",
			types: []string{"overloaded"}, failed: []bool{true}, ends: []bool{true}, outcome: "failure",
			trace: []trace.RetryAttempt{ra(1, "overloaded", false, 0)},
			want:  Check{State: StateFail, Where: "server.jsonl: the client stopped after attempt 1 (overloaded, attempt 1 of its request), where its policy retries after [375ms, 500ms]"},
		},
		{
			name: "no trace: stopped after the second failure", scenario: sdk + "attempts: [{status: 529}, {status: 529}]",
			types: []string{"overloaded", "overloaded"}, failed: []bool{true, true}, ends: []bool{false, false}, outcome: "failure",
			want: Check{State: StateFail, Where: "server.jsonl: the client stopped after attempt 2 (overloaded, attempt 2 of its request), where its policy retries after [750ms, 1s]"},
		},
		{
			name: "no trace: attempts exhausted", scenario: sdk + "attempts: [{status: 529}, {status: 529}, {status: 529}]",
			types: []string{"overloaded", "overloaded", "overloaded"}, failed: []bool{true, true, true}, ends: []bool{false, false, false}, outcome: "failure",
			want: Check{State: StatePass, Where: "server.jsonl: gaps between attempts"},
		},
		{
			name: "trace: attempts exhausted", scenario: sdk + "attempts: [{status: 529}, {status: 529}, {status: 529}]",
			types: []string{"overloaded", "overloaded", "overloaded"}, failed: []bool{true, true, true}, ends: []bool{false, false, true}, outcome: "failure",
			trace: []trace.RetryAttempt{ra(1, "overloaded", true, 400), ra(2, "overloaded", true, 800), ra(3, "overloaded", false, 0)},
			want:  Check{State: StatePass, Where: "server.jsonl: gaps between attempts"},
		},
		{
			name: "no trace: not retried by the policy", scenario: sdk + "attempts: [{status: 400}]",
			types: []string{"invalid_request"}, failed: []bool{true}, ends: []bool{false}, outcome: "failure",
			want: Check{State: StatePass, Where: "server.jsonl: gaps between attempts"},
		},
		{
			name: "trace: not retried by the policy", scenario: sdk + "attempts: [{status: 400}]",
			types: []string{"invalid_request"}, failed: []bool{true}, ends: []bool{true}, outcome: "failure",
			trace: []trace.RetryAttempt{ra(1, "invalid_request", false, 0)},
			want:  Check{State: StatePass, Where: "server.jsonl: gaps between attempts"},
		},
		{
			name: "trace: escalations leave the attempt counts to the client", scenario: sdk + "attempts: [{status: 529}]",
			types: []string{"overloaded"}, failed: []bool{true}, ends: []bool{true}, outcome: "failure",
			trace: []trace.RetryAttempt{ra(1, "overloaded", false, 0)}, escal: []trace.RunEscalated{{From: "a", To: "b"}},
			want: Check{State: StatePass, Where: "server.jsonl: gaps between attempts"},
		},
		{
			name:     "no trace: x-should-retry false on the last attempt",
			scenario: sdk + "attempts: [{status: 529}, {status: 529, headers: {x-should-retry: \"false\"}}]",
			types:    []string{"overloaded", "overloaded"}, failed: []bool{true, true}, ends: []bool{false, false}, outcome: "failure",
			want: Check{State: StatePass, Where: "server.jsonl: gaps between attempts"},
		},
		{
			name:     "trace: x-should-retry false on the last attempt",
			scenario: sdk + "attempts: [{status: 529}, {status: 529, headers: {x-should-retry: \"false\"}}]",
			types:    []string{"overloaded", "overloaded"}, failed: []bool{true, true}, ends: []bool{false, true}, outcome: "failure",
			trace: []trace.RetryAttempt{ra(1, "overloaded", true, 400), ra(2, "overloaded", false, 0)},
			want:  Check{State: StatePass, Where: "server.jsonl: gaps between attempts"},
		},
		{
			name:     "no trace: x-should-retry true on the last attempt",
			scenario: sdk + "attempts: [{status: 529}, {status: 529, headers: {x-should-retry: \"true\"}}]",
			types:    []string{"overloaded", "overloaded"}, failed: []bool{true, true}, ends: []bool{false, false}, outcome: "failure",
			want: Check{State: StateFail, Where: "server.jsonl: the client stopped after attempt 2 (overloaded, attempt 2 of its request), where its policy retries after [750ms, 1s]"},
		},
		{
			// Two requests: the first gave up on its first failure, the
			// second succeeded at once.
			name: "trace, two requests: the first gave up", scenario: sdk + "requests: 2\nattempts: [{status: 529}]",
			types: []string{"overloaded"}, failed: []bool{true, false}, ends: []bool{true, true}, outcome: "success",
			trace: []trace.RetryAttempt{ra(1, "overloaded", false, 0)},
			want:  Check{State: StateFail, Where: "server.jsonl: the client stopped after attempt 1 (overloaded, attempt 1 of its request), where its policy retries after [375ms, 500ms]"},
		},
		{
			// Two requests: the first used all three attempts; the second
			// stopped after its first: attempt 4 is attempt 1 of its request.
			name: "no trace, two requests: the second gave up", scenario: sdk + "requests: 2\nattempts: [{status: 529}, {status: 529}, {status: 529}, {status: 529}]",
			types: []string{"overloaded", "overloaded", "overloaded", "overloaded"}, failed: []bool{true, true, true, true}, ends: []bool{false, false, true, false}, outcome: "failure",
			want: Check{State: StateFail, Where: "server.jsonl: the client stopped after attempt 4 (overloaded, attempt 1 of its request), where its policy retries after [375ms, 500ms]"},
		},
		{
			name: "trace, two requests: both exhausted", scenario: sdk + "requests: 2\nattempts: [{status: 529}, {status: 529}, {status: 529}, {status: 529}, {status: 529}, {status: 529}]",
			types:  []string{"overloaded", "overloaded", "overloaded", "overloaded", "overloaded", "overloaded"},
			failed: []bool{true, true, true, true, true, true}, ends: []bool{false, false, true, false, false, true}, outcome: "failure",
			trace: []trace.RetryAttempt{ra(1, "overloaded", true, 400), ra(2, "overloaded", true, 800), ra(3, "overloaded", false, 0),
				ra(1, "overloaded", true, 400), ra(2, "overloaded", true, 800), ra(3, "overloaded", false, 0)},
			want: Check{State: StatePass, Where: "server.jsonl: gaps between attempts"},
		},
		{
			name: "trace, two requests: the second succeeded after a retry", scenario: sdk + "requests: 2\nattempts: [{}, {status: 529}]",
			types: []string{"overloaded"}, failed: []bool{false, true, false}, ends: []bool{true, false, true}, outcome: "success",
			trace: []trace.RetryAttempt{ra(1, "overloaded", true, 400)},
			want:  Check{State: StatePass, Where: "server.jsonl: gaps between attempts"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := parse(t, "gave-up", tt.scenario+"\nexpect: {delays: policy}\n")
			env, err := EnvelopeFor(sc)
			if err != nil {
				t.Fatal(err)
			}
			ob := tt.observed()
			if tt.trace == nil {
				ob.Client = &client.ClientExit{Command: "sh client.sh"}
			}
			got := checkNamed(t, Evaluate(sc, ob, env), "delays.server")
			if diff := cmp.Diff(tt.want, Check{State: got.State, Where: got.Where}); diff != "" {
				t.Errorf("evaluate() delays.server mismatch (-want +got):\n%s\n(check: %+v)", diff, got)
			}
		})
	}
}

// TestGaveUpEarlyUnrecordedGiveUp: a client that writes a trace but records
// only the failures it retries (no RetryAttempt with willRetry false for its
// last one) and stops where its policy still retries gave up early all the
// same: gaveUpEarly's contract is "the failure type is the client's own
// when it wrote one, else the one the fault implies".
func TestGaveUpEarlyUnrecordedGiveUp(t *testing.T) {
	t.Parallel()
	sc := parse(t, "unrecorded", "client: {policy: anthropic-sdk}\nattempts: [{status: 529}, {status: 529}]\nexpect: {delays: policy}\n")
	env, err := EnvelopeFor(sc)
	if err != nil {
		t.Fatal(err)
	}
	tt := gaveUpCase{types: []string{"overloaded", "overloaded"}, failed: []bool{true, true}, ends: []bool{false, true}, outcome: "failure",
		trace: []trace.RetryAttempt{{Attempt: 1, FailureType: "overloaded", WillRetry: true, DelayMs: 400, DelaySource: "backoff"}}}
	got := checkNamed(t, Evaluate(sc, tt.observed(), env), "delays.server")
	want := Check{State: StateFail, Where: "server.jsonl: the client stopped after attempt 2 (overloaded, attempt 2 of its request), where its policy retries after [750ms, 1s]"}
	if diff := cmp.Diff(want, Check{State: got.State, Where: got.Where}); diff != "" {
		t.Errorf("evaluate() delays.server mismatch (-want +got):\n%s", diff)
	}
}

// observed builds what the server saw: a wait after every failed attempt
// that did not end its request, inside the anthropic-sdk envelope of the
// attempt on its request (450ms, then 900ms, ...).
func (tt gaveUpCase) observed() Observed {
	ob := Observed{Outcome: tt.outcome, ServerAttempts: len(tt.failed), TimeScale: 1,
		FailedAttempts: tt.failed, RequestEnds: tt.ends, InferredTypes: tt.types,
		InferredRetryAfter: make([]*time.Duration, len(tt.types)), Retries: tt.trace, Escalations: tt.escal,
		ClientTrace: tt.trace != nil}
	for k := range tt.failed {
		ob.ServerFaults = append(ob.ServerFaults, "status")
		if k+1 < len(tt.failed) && !tt.ends[k] {
			n := ob.attemptOnTarget(k + 1)
			ob.ServerWaits = append(ob.ServerWaits, Wait{After: k + 1, Gap: time.Duration(450*(1<<(n-1))) * time.Millisecond})
		}
	}
	return ob
}

// TestPolicyDelaysWithoutTraceAcrossRequests: without a client trace, the
// envelope of the wait after server attempt k must come from the failure
// attempt k met. InferredTypes has one entry per failed attempt, so when an
// earlier request succeeded, server attempt k is not InferredTypes[k-1].
func TestPolicyDelaysWithoutTraceAcrossRequests(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(n int, fault string, status int, arrived, ended int) mock.ServerAttempt {
		return mock.ServerAttempt{N: n, Fault: fault, Status: status, Arrived: t0.Add(ms(arrived)), Ended: t0.Add(ms(ended))}
	}
	tests := []struct {
		name     string
		scenario string
		attempts []mock.ServerAttempt
		want     Check
	}{
		{
			name:     "the second request retried once",
			scenario: "requests: 2\nattempts: [{}, {status: 529}]",
			attempts: []mock.ServerAttempt{at(1, "ok", 200, 0, 10), at(2, "status", 529, 20, 30), at(3, "ok", 200, 480, 490)},
			want: Check{Name: "delays.server", Passed: true, State: StatePass, Want: "wall-clock gaps inside the envelope × timeScale: [375ms, 500ms]",
				Got: "450ms", Where: "server.jsonl: gaps between attempts", Line: 4},
		},
		{
			// The 429's Retry-After (2s) belongs to attempt 3, not to the
			// first failure (a 529 without one).
			name:     "the Retry-After of the right attempt",
			scenario: "requests: 2\nattempts: [{status: 529}, {}, {status: 429, retryAfter: \"2\"}]",
			attempts: []mock.ServerAttempt{at(1, "status", 529, 0, 10), at(2, "ok", 200, 460, 470), at(3, "status", 429, 480, 490), at(4, "ok", 200, 2490, 2500)},
			want: Check{Name: "delays.server", Passed: true, State: StatePass, Want: "wall-clock gaps inside the envelope × timeScale: [375ms, 500ms], 2s",
				Got: "450ms, 2s", Where: "server.jsonl: gaps between attempts", Line: 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := parse(t, "across", "client: {command: [sh, client.sh], policy: anthropic-sdk}\n"+tt.scenario+"\nexpect: {delays: policy}\n")
			env, err := EnvelopeFor(sc)
			if err != nil {
				t.Fatal(err)
			}
			ob, _ := Observe(sc, tt.attempts, "", 1)
			ob.Outcome, ob.Client = "success", &client.ClientExit{Command: "sh client.sh"}
			got := checkNamed(t, Evaluate(sc, ob, env), "delays.server")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("evaluate() delays.server mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckSettle: settle fills State from Passed and Passed from State.
func TestCheckSettle(t *testing.T) {
	t.Parallel()
	got := Settle([]Check{
		{Name: "a", Passed: true},
		{Name: "b"},
		{Name: "c", State: StateUnverified, Passed: true},
		{Name: "d", State: StateInconclusive},
		{Name: "e", State: StatePass},
	})
	want := []Check{
		{Name: "a", Passed: true, State: StatePass},
		{Name: "b", State: StateFail},
		{Name: "c", State: StateUnverified},
		{Name: "d", State: StateInconclusive},
		{Name: "e", Passed: true, State: StatePass},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settle() mismatch (-want +got):\n%s", diff)
	}
}

// TestGaveUpEarlyExactFailure is a regression test: the SDKs retry an
// overloaded 529 but never an overloaded_error SSE event after the stream
// began, and forgeflare retries a timeout but not a 408. A client that
// stopped there was right, whatever its failure type's strategy says.
func TestGaveUpEarlyExactFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, policy string
		fault        scenario.Fault
		outcome      string
	}{
		{"sdk: SSE overloaded_error mid-stream", "anthropic-sdk", scenario.Fault{Kind: fault.SSEError{AfterEvents: 3, Type: "overloaded_error"}}, "failure"},
		{"sdk: cut stream", "openai-node", scenario.Fault{Kind: fault.Drop{AfterBytes: 200}}, "failure"},
		{"forgeflare: 408", "forgeflare", scenario.Fault{Kind: fault.Status{Status: 408}}, "failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := parse(t, "exact", "client: {policy: "+tc.policy+"}\nexpect: {delays: policy}\n")
			sc.Attempts = []scenario.Fault{tc.fault}
			env, err := EnvelopeFor(sc)
			if err != nil {
				t.Fatal(err)
			}
			ended := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			status := 0
			if st, ok := tc.fault.Kind.(fault.Status); ok {
				status = st.Status
			}
			ob, _ := Observe(sc, []mock.ServerAttempt{{N: 1, Fault: tc.fault.Name(), Status: status, Arrived: ended.Add(-time.Second), Ended: ended}}, "", 1)
			ob.Outcome = tc.outcome
			for _, c := range Evaluate(sc, ob, env) {
				if c.State == StateFail {
					t.Errorf("%s failed: want %s, got %s (%s)", c.Name, c.Want, c.Got, c.Where)
				}
			}
		})
	}
}

// TestHostileRegressions: wrong verdicts a hostile review found, each with
// the server's attempts as the mock would record them.
func TestHostileRegressions(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(n int, fault string, status int, connected, arrived, ended int) mock.ServerAttempt {
		return mock.ServerAttempt{N: n, Fault: fault, Status: status, Connected: t0.Add(ms(connected)), Arrived: t0.Add(ms(arrived)), Ended: t0.Add(ms(ended))}
	}
	for _, tc := range []struct {
		name, yaml string
		attempts   []mock.ServerAttempt
		trace      []trace.RetryAttempt
		outcome    string
		want       string // state of delays.server
	}{
		{
			// A client that retried a 400 and wrote it down as a server error.
			name:     "a 400 recorded as server_error is still not retried",
			yaml:     "client: {policy: forgeflare}\nattempts: [{status: 400}]\nexpect: {delays: policy}\n",
			attempts: []mock.ServerAttempt{at(1, "status", 400, 0, 0, 10), at(2, "ok", 200, 2010, 2010, 2020)},
			trace:    []trace.RetryAttempt{{Attempt: 1, FailureType: "server_error", Status: 400, WillRetry: true, DelayMs: 2000, DelaySource: "backoff"}},
			outcome:  "success", want: StateFail,
		},
		{
			// A client that never retries, but spaces its 3 requests by the
			// policy's backoff: 3 attempts for 3 requests, one failed.
			name:     "no trace: a paced new request is not a retry",
			yaml:     "client: {policy: forgeflare}\nrequests: 3\nattempts: [{status: 529}]\nexpect: {delays: policy}\n",
			attempts: []mock.ServerAttempt{at(1, "status", 529, 0, 0, 10), at(2, "ok", 200, 2010, 2010, 2020), at(3, "ok", 200, 4020, 4020, 4030)},
			outcome:  "failure", want: StateFail,
		},
		{
			name:     "no trace: an honest client whose first request fails on a 400",
			yaml:     "client: {policy: forgeflare}\nrequests: 2\nattempts: [{status: 400}, {status: 529}]\nexpect: {delays: policy}\n",
			attempts: []mock.ServerAttempt{at(1, "status", 400, 0, 0, 10), at(2, "status", 529, 13, 13, 20), at(3, "ok", 200, 2020, 2020, 2030)},
			outcome:  "failure", want: StatePass,
		},
		{
			name: "no trace: an honest SDK that used its retries, then a new request",
			yaml: "client: {policy: anthropic-sdk}\nrequests: 2\nattempts: [{status: 529}, {status: 529}, {status: 529}]\nexpect: {delays: policy}\n",
			attempts: []mock.ServerAttempt{at(1, "status", 529, 0, 0, 10), at(2, "status", 529, 450, 450, 460), at(3, "status", 529, 1360, 1360, 1370),
				at(4, "ok", 200, 1371, 1371, 1380)},
			outcome: "failure", want: StatePass,
		},
		{
			// An upstream latency toxic holds the request back in the proxy:
			// the wait ends when the client connected, not when the request
			// got through.
			name:     "upstream toxic: a retry at once is caught",
			yaml:     "client: {policy: forgeflare}\nattempts: [{status: 529}, {toxics: [{type: latency, stream: upstream, attributes: {latency: 2000}}]}]\nexpect: {delays: policy}\n",
			attempts: []mock.ServerAttempt{at(1, "status", 529, 0, 0, 10), at(2, "toxics", 200, 20, 2020, 2030)},
			outcome:  "success", want: StateFail,
		},
		{
			name:     "upstream toxic: an honest wait passes",
			yaml:     "client: {policy: forgeflare}\nattempts: [{status: 529}, {toxics: [{type: latency, stream: upstream, attributes: {latency: 2000}}]}]\nexpect: {delays: policy}\n",
			attempts: []mock.ServerAttempt{at(1, "status", 529, 0, 0, 10), at(2, "toxics", 200, 2010, 4010, 4020)},
			outcome:  "success", want: StatePass,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := parse(t, "hostile", tc.yaml)
			path := ""
			if tc.trace != nil {
				path = filepath.Join(t.TempDir(), "trace.jsonl")
				w, err := trace.Create(path, "r")
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range tc.trace {
					w.Emit(trace.TypeRetryAttempt, r)
				}
				w.Emit(trace.TypeProviderRequestFinished, trace.ProviderRequestFinished{Success: tc.outcome == "success", Retries: len(tc.trace)})
				w.Close()
			}
			ob, _ := Observe(sc, tc.attempts, path, 1)
			ob.Outcome = tc.outcome
			env, err := EnvelopeFor(sc)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range Evaluate(sc, ob, env) {
				if c.Name == "delays.server" && c.State != tc.want {
					t.Errorf("delays.server %s, want %s: want %s, got %s (%s)", c.State, tc.want, c.Want, c.Got, c.Where)
				}
			}
		})
	}
}
