package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/otlp"
)

// TestSelfReportLies holds the hostile tester's lies (/tmp/hostile2 repro
// 01, 06, 07, 11, 12) and the honest accounts beside them against one
// journal each: every lie fails, every honest account passes or is
// unverified with its reason.
func TestSelfReportLies(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	// at is an attempt begun at startMs (by the client's clock, the
	// mock's) that ended 5 ms later.
	at := func(startMs, status int) otlp.Attempt {
		a := otlp.Attempt{Start: ms(startMs), End: ms(startMs + 5), Status: status}
		if status >= 400 {
			a.ErrorType = "overloaded"
		}
		return a
	}
	req := func(ats ...otlp.Attempt) otlp.Request { return otlp.Request{Provider: "anthropic", Attempts: ats} }
	uncounted := func(r otlp.Request) otlp.Request {
		r.Uncounted = "no attempt count"
		return r
	}
	// Four attempts, 529 529 529 200, arriving 100 ms apart, 2 ms after
	// the client began each.
	fourToOK := Observed{ServerAttempts: 4, ServerStatuses: []int{529, 529, 529, 200},
		ServerFaults: []string{scenario.FaultStatus, scenario.FaultStatus, scenario.FaultStatus, "ok"}, FailedAttempts: []bool{true, true, true, false},
		ServerArrived: []time.Time{ms(2), ms(102), ms(202), ms(302)}, Began: ms(-300), Client: &client.ClientExit{}}
	// Five 529s, 55 ms apart, and the client gave up: exit 1.
	fiveFailed := Observed{ServerAttempts: 5, ServerStatuses: []int{529, 529, 529, 529, 529},
		ServerFaults:   []string{scenario.FaultStatus, scenario.FaultStatus, scenario.FaultStatus, scenario.FaultStatus, scenario.FaultStatus},
		FailedAttempts: []bool{true, true, true, true, true},
		ServerArrived:  []time.Time{ms(2), ms(57), ms(112), ms(167), ms(222)}, Began: ms(-300), Client: &client.ClientExit{ExitCode: 1}}
	// busy is a journal of a loaded machine: the tolerance for the
	// client's stamps is wide.
	busy := func(ob Observed) Observed {
		ob.Slack = 200 * time.Millisecond
		return ob
	}
	// Two requests at once: B's 529 arrived first, then A's 200 (A
	// stamped first, connected slowly), then B's retry.
	twoAtOnce := Observed{ServerAttempts: 3, ServerStatuses: []int{529, 200, 200},
		ServerFaults: []string{scenario.FaultStatus, "ok", "ok"}, FailedAttempts: []bool{true, false, false},
		ServerArrived: []time.Time{ms(8), ms(62), ms(72)}, Began: ms(-300), Client: &client.ClientExit{}}
	gapped := req(at(0, 529), at(110, 529), at(165, 529), at(220, 529))
	gapped.Skipped = 1
	tests := []struct {
		name      string
		ob        Observed
		reqs      []otlp.Request
		conflicts []string
		want      string // state
		hint      string // a substring of the hint
	}{
		// 11: attempt 1 claimed 200, 2-3 left out, an unrelated gen_ai
		// span that counts nothing.
		{"a contradicted status beside an uncounted decoy", fourToOK,
			[]otlp.Request{req(at(0, 200), at(300, 200)), uncounted(req(otlp.Attempt{Start: ms(900), End: ms(901)}))},
			nil, StateFail, "the client claims status 200, the server sent 529"},
		{"uncounted: the success alone", fourToOK, []otlp.Request{uncounted(req(at(300, 200)))},
			nil, StateUnverified, "does not count the rest"},
		{"uncounted: a gen_ai span over the whole call", fourToOK,
			[]otlp.Request{uncounted(req(otlp.Attempt{Start: ms(0), End: ms(350), Status: 200}))},
			nil, StateUnverified, "does not count the rest"},
		// Which of the server's attempts 2 and 3 the client left out only
		// its timestamps say (attempt 2 stamped at 200 ms, when the
		// server's attempt 3 arrived): the uncounted request's own left-out
		// attempt just before it reads it too, so it cannot be proved.
		{"uncounted excuses only its own request's attempts, timing alone tells", fourToOK,
			[]otlp.Request{req(at(0, 529), at(200, 529)), uncounted(req(at(300, 200)))},
			nil, StateUnverified, "does not count the rest"},
		// The server attempt just before an uncounted request may be that
		// request's own retry, which it does not count.
		{"uncounted request's own left-out retry", fourToOK,
			[]otlp.Request{req(at(0, 529), at(100, 529)), uncounted(req(at(300, 200)))},
			nil, StateUnverified, "does not count the rest"},
		{"truthful", fourToOK, []otlp.Request{req(at(0, 529), at(100, 529), at(200, 529), at(300, 200))},
			nil, StatePass, ""},
		// Two requests in flight at once (/tmp/hostile3 repro 02): the one
		// stamped first reached the mock second. Compared in any order.
		{"concurrent requests, honest", twoAtOnce,
			[]otlp.Request{req(otlp.Attempt{Start: ms(0), End: ms(80), Status: 200}), req(otlp.Attempt{Start: ms(5), End: ms(20), Status: 529}, at(70, 200))},
			nil, StatePass, ""},
		{"concurrent requests, a status nobody was sent", twoAtOnce,
			[]otlp.Request{req(otlp.Attempt{Start: ms(0), End: ms(80), Status: 200}), req(otlp.Attempt{Start: ms(5), End: ms(20), Status: 503}, at(70, 200))},
			nil, StateFail, "compared in any order"},
		{"concurrent requests, an attempt left out, exit 0", twoAtOnce,
			[]otlp.Request{req(otlp.Attempt{Start: ms(0), End: ms(80), Status: 200}), req(at(70, 200))},
			nil, StateFail, "leaves out 1 of the 3"},
		// 12: 1, 3, 4, 5 of five, exit 1.
		{"exit 1, the second left out (timestamps)", fiveFailed,
			[]otlp.Request{req(at(0, 529), at(110, 529), at(165, 529), at(220, 529))},
			nil, StateUnverified, "leaves out attempt 2 in the middle, not the last ones (by its timestamps alone, which cannot prove it)"},
		{"exit 1, the second left out, a busy machine (timestamps)", busy(fiveFailed),
			[]otlp.Request{req(at(0, 529), at(110, 529), at(165, 529), at(220, 529))},
			nil, StateUnverified, "leaves out attempt 2 in the middle"},
		{"exit 1, the last left out, a busy machine, the first sent 40 ms after its stamp", busy(fiveFailed),
			[]otlp.Request{req(at(-40, 529), at(55, 529), at(110, 529), at(165, 529))},
			nil, StateUnverified, "stops after attempt 4 of 5"},
		{"exit 1, the last left out, a busy machine, one sent 30 ms after its stamp", busy(fiveFailed),
			[]otlp.Request{req(at(0, 529), at(25, 529), at(110, 529), at(165, 529))},
			nil, StateUnverified, "stops after attempt 4 of 5"},
		{"exit 1, the second left out (its own numbering)", fiveFailed, []otlp.Request{gapped},
			nil, StateFail, "leaves out attempts it numbers itself"},
		{"exit 1, the last two left out", fiveFailed, []otlp.Request{req(at(0, 529), at(55, 529), at(110, 529))},
			nil, StateUnverified, "stops after attempt 3 of 5"},
		{"exit 1, the last left out, stamps a few ms off", fiveFailed,
			[]otlp.Request{req(at(-3, 529), at(57, 529), at(105, 529), at(168, 529))},
			nil, StateUnverified, "stops after attempt 4 of 5"},
		{"exit 1, the first stamped 15 ms early, the last left out", fiveFailed,
			[]otlp.Request{req(at(-15, 529), at(55, 529), at(110, 529), at(165, 529))},
			nil, StateUnverified, "stops after attempt 4 of 5"},
		{"exit 1, untimed attempts, the last left out", fiveFailed,
			[]otlp.Request{req(otlp.Attempt{N: 1, Start: ms(110), End: ms(110), Retried: true, Untimed: true},
				otlp.Attempt{N: 2, Start: ms(110), End: ms(110), Retried: true, Untimed: true}, at(110, 529), at(165, 529))},
			nil, StateUnverified, "stops after attempt 4 of 5"},
		// 01: the same span ids again, other content.
		{"spans re-sent with other content", fourToOK, []otlp.Request{req(at(0, 529), at(100, 529), at(200, 529), at(300, 200))},
			[]string{"0af7651916cd43dd8448eb211c80319c/b7ad6b7169203331"}, StateFail, "0af7651916cd43dd8448eb211c80319c/b7ad6b7169203331"},
		// 06: resend_count 0, 1, 5 filled in to six attempts.
		{"resend_count skips numbers", Observed{ServerAttempts: 3, ServerStatuses: []int{529, 529, 200},
			ServerFaults: []string{scenario.FaultStatus, scenario.FaultStatus, "ok"}, FailedAttempts: []bool{true, true, false}},
			[]otlp.Request{{Skipped: 3, Attempts: []otlp.Attempt{at(0, 529), at(100, 529),
				{N: 3, Start: ms(200), End: ms(200), Retried: true, Untimed: true}, {N: 4, Start: ms(200), End: ms(200), Retried: true, Untimed: true},
				{N: 5, Start: ms(200), End: ms(200), Retried: true, Untimed: true}, at(200, 200)}}},
			nil, StateFail, "reports 3 attempt(s) the server never saw"},
		// 07: an older run's telemetry replayed.
		{"a replay of older telemetry", fourToOK,
			[]otlp.Request{req(at(-3600000, 529), at(-3599900, 529), at(-3599800, 529), at(-3599700, 200))},
			nil, StateFail, "stamped before the scenario began"},
		{"this run's attempts and an old one", fourToOK,
			[]otlp.Request{req(at(-3600000, 529)), req(at(0, 529), at(100, 529), at(200, 529), at(300, 200))},
			nil, StatePass, "1 attempt(s) of the client's telemetry are stamped before the scenario began"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ob := tt.ob
			ob.SelfReport = &otlp.Account{Mapping: "semconv", Requests: tt.reqs, Conflicts: tt.conflicts}
			c := Settle([]Check{SelfReportCheck(ob)})[0]
			if c.State != tt.want || !strings.Contains(c.Hint, tt.hint) || (tt.hint == "" && c.Hint != "") {
				t.Errorf("state %q, hint %q; want %q with %q\nwant %s\ngot  %s", c.State, c.Hint, tt.want, tt.hint, c.Want, c.Got)
			}
		})
	}
}
