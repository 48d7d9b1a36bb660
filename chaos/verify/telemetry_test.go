package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/otlp"
)

// TestSelfReport checks the selfReport check, a pure function of
// Observed, against clients whose telemetry tells the truth, leaves an
// attempt out, invents one, or claims another status or a success.
func TestSelfReport(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	at := func(startMs, endMs int64, status int, errType string) otlp.Attempt {
		return otlp.Attempt{Start: t0.Add(time.Duration(startMs) * time.Millisecond),
			End: t0.Add(time.Duration(endMs) * time.Millisecond), Status: status, ErrorType: errType}
	}
	server := Observed{ServerAttempts: 3, ServerStatuses: []int{529, 429, 200},
		ServerFaults: []string{scenario.FaultStatus, scenario.FaultStatus, "ok"}, FailedAttempts: []bool{true, true, false},
		ServerWaits: []Wait{{After: 1, Gap: time.Second}, {After: 2, Gap: 2 * time.Second}}}
	truthful := []otlp.Attempt{at(0, 100, 529, "529"), at(1100, 1200, 429, "429"), at(3200, 3300, 200, "")}
	tests := []struct {
		name     string
		attempts []otlp.Attempt
		want     Check
	}{
		{"truthful", truthful, Check{Name: "selfReport", Passed: true, State: StatePass,
			Want: "3 attempt(s): 529, 429, 200; waits 1s, 2s", Got: "3 attempt(s): 529, 429, 200; waits 1s, 2s"}},
		{"omits an attempt", truthful[1:], Check{Name: "selfReport", State: StateFail,
			Want: "3 attempt(s): 529, 429, 200; waits 1s, 2s", Got: "2 attempt(s): 429, 200; waits 2s",
			Hint: "the client's telemetry leaves out 1 attempt(s) the server answered (the server's attempt 1)"}},
		{"invents one", append([]otlp.Attempt{at(-500, -400, 500, "500")}, truthful...), Check{Name: "selfReport", State: StateFail,
			Want: "3 attempt(s): 529, 429, 200; waits 1s, 2s", Got: "4 attempt(s): 500, 529, 429, 200; waits 400ms, 1s, 2s",
			Hint: "the client's telemetry reports 1 attempt(s) the server never saw"}},
		{"another status", []otlp.Attempt{truthful[0], at(1100, 1200, 503, "503"), truthful[2]}, Check{Name: "selfReport", State: StateFail,
			Want: "3 attempt(s): 529, 429, 200; waits 1s, 2s", Got: "3 attempt(s): 529, 503, 200; waits 1s, 2s",
			Hint: "attempt 2: the client claims status 503, the server sent 429"}},
		{"a success that failed", []otlp.Attempt{at(0, 100, 0, ""), truthful[1], truthful[2]}, Check{Name: "selfReport", State: StateFail,
			Want: "3 attempt(s): 529, 429, 200; waits 1s, 2s", Got: "3 attempt(s): ok, 429, 200; waits 2s",
			Hint: "attempt 1: the client claims it succeeded, the server's answer failed (status)"}},
		// An HTTP span that ended at the headers of a stream cut after them.
		{"200 of a cut stream", []otlp.Attempt{truthful[0], truthful[1], at(3200, 3300, 200, "")}, Check{Name: "selfReport", Passed: true, State: StatePass,
			Want: "3 attempt(s): 529, 429, 200 drop; waits 1s, 2s", Got: "3 attempt(s): 529, 429, 200; waits 1s, 2s"}},
		{"no status, an error", []otlp.Attempt{at(0, 100, 0, "ECONNRESET"), truthful[1], truthful[2]}, Check{Name: "selfReport", Passed: true, State: StatePass,
			Want: "3 attempt(s): 529, 429, 200; waits 1s, 2s", Got: "3 attempt(s): no status error ECONNRESET, 429, 200; waits 1s, 2s"}},
		// Claude Code's spans: when each attempt began, and that it tried
		// again; the last attempt's outcome from the span.
		{"retried, no status", []otlp.Attempt{retried(at(0, 0, 0, "")), retried(at(1000, 1000, 0, "")), at(3000, 3300, 0, "")}, Check{Name: "selfReport", Passed: true, State: StatePass,
			Want: "3 attempt(s): 529, 429, 200; waits 1s, 2s", Got: "3 attempt(s): failed (tried again), failed (tried again), ok; waits 1s, 2s"}},
		{"retried, one left out", []otlp.Attempt{retried(at(1000, 1000, 0, "")), at(3000, 3300, 0, "")}, Check{Name: "selfReport", State: StateFail,
			Want: "3 attempt(s): 529, 429, 200; waits 1s, 2s", Got: "2 attempt(s): failed (tried again), ok; waits 2s",
			Hint: "the client's telemetry leaves out 1 attempt(s) the server answered (the server's attempt 2)"}},
		{"retried, last claims another status", []otlp.Attempt{retried(at(0, 0, 0, "")), retried(at(1000, 1000, 0, "")), at(3000, 3300, 503, "")}, Check{Name: "selfReport", State: StateFail,
			Want: "3 attempt(s): 529, 429, 200; waits 1s, 2s", Got: "3 attempt(s): failed (tried again), failed (tried again), 503; waits 1s, 2s",
			Hint: "attempt 3: the client claims status 503, the server sent 200"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ob := server
			if tt.name == "200 of a cut stream" {
				ob.ServerFaults = []string{scenario.FaultStatus, scenario.FaultStatus, "drop"}
				ob.FailedAttempts = []bool{true, true, true}
			}
			ob.SelfReport = &otlp.Account{Mapping: "semconv", Requests: []otlp.Request{{Attempts: tt.attempts}}}
			got := Settle([]Check{SelfReportCheck(ob)})[0]
			tt.want.Where = "client-otel.jsonl (semconv mapping of otlp/) against server.jsonl"
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("selfReportCheck() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func retried(a otlp.Attempt) otlp.Attempt {
	a.Retried = true
	return a
}

// TestSelfReportUncounted: a client whose telemetry says it does not count
// every attempt (Claude Code's logs for a call that succeeded) and names
// fewer than the server saw is unverified, not failed; one that counts
// them and leaves one out fails.
func TestSelfReportUncounted(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	ob := Observed{ServerAttempts: 3, ServerStatuses: []int{529, 500, 200},
		ServerFaults: []string{scenario.FaultStatus, scenario.FaultStatus, "ok"}, FailedAttempts: []bool{true, true, false}}
	for _, tt := range []struct {
		name      string
		uncounted string
		want      string
	}{
		{"uncounted", "no attempt count", StateUnverified},
		{"counted", "", StateFail},
	} {
		ob.SelfReport = &otlp.Account{Mapping: "claude-code", Requests: []otlp.Request{{
			Attempts: []otlp.Attempt{{Start: t0, End: t0}}, Uncounted: tt.uncounted}}}
		c := Settle([]Check{SelfReportCheck(ob)})[0]
		if c.State != tt.want {
			t.Errorf("%s: state = %q (%s), want %q", tt.name, c.State, c.Hint, tt.want)
		}
	}
}

// TestSelfReportUnflushed: a client that exits in error with its last
// attempts missing from its telemetry (an exporter not flushed at exit) is
// unverified; the same with exit 0, or a claim the journal contradicts,
// fails.
func TestSelfReportUnflushed(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	at := func(ms int, status int) otlp.Attempt {
		ts := t0.Add(time.Duration(ms) * time.Millisecond)
		return otlp.Attempt{Start: ts, End: ts, Status: status}
	}
	for _, tt := range []struct {
		name     string
		exit     *client.ClientExit
		attempts []otlp.Attempt
		want     string
	}{
		{"exit 1, first two of three", &client.ClientExit{ExitCode: 1}, []otlp.Attempt{at(0, 503), at(500, 503)}, StateUnverified},
		{"killed, first of three", &client.ClientExit{ExitCode: -1, Problem: "killed after 30s"}, []otlp.Attempt{at(0, 503)}, StateUnverified},
		{"exit 0, first two of three", &client.ClientExit{ExitCode: 0}, []otlp.Attempt{at(0, 503), at(500, 503)}, StateFail},
		{"exit 1, a status the server did not send", &client.ClientExit{ExitCode: 1}, []otlp.Attempt{at(0, 503), at(500, 500)}, StateFail},
		{"built-in client", nil, []otlp.Attempt{at(0, 503), at(500, 503)}, StateFail},
	} {
		ob := Observed{ServerAttempts: 3, ServerStatuses: []int{503, 503, 429},
			ServerFaults: []string{scenario.FaultStatus, scenario.FaultStatus, scenario.FaultStatus}, FailedAttempts: []bool{true, true, true},
			Client: tt.exit, SelfReport: &otlp.Account{Mapping: "codex", Requests: []otlp.Request{{Attempts: tt.attempts}}}}
		c := Settle([]Check{SelfReportCheck(ob)})[0]
		if c.State != tt.want {
			t.Errorf("%s: state = %q (%s), want %q", tt.name, c.State, c.Hint, tt.want)
		}
	}
}

// TestFailureTypesFromSelfReport: a client without a trace whose telemetry
// carries its errors has its failureTypes verified; one whose errors
// classify otherwise stays unverified and says what they implied.
func TestFailureTypesFromSelfReport(t *testing.T) {
	sc := &scenario.Scenario{Expect: scenario.Expect{FailureTypes: []string{"overloaded", "rate_limit"}}}
	ob := Observed{InferredTypes: []string{"overloaded", "rate_limit"}, SelfReport: &otlp.Account{}}
	for _, tt := range []struct {
		name  string
		types []string
		want  string
	}{
		{"agree", []string{"overloaded", "rate_limit"}, StatePass},
		{"disagree", []string{"server_error", "rate_limit"}, StateUnverified},
	} {
		ob.SelfReportTypes = tt.types
		var c Check
		for _, x := range Evaluate(sc, ob, nil) {
			if x.Name == "failureTypes" {
				c = x
			}
		}
		if c.State != tt.want {
			t.Errorf("%s: failureTypes state = %q (%s), want %q", tt.name, c.State, c.Got, tt.want)
		}
	}
}

// TestClassifyReported: a client's reported status and error read as the
// retry core classifies the same failure.
func TestClassifyReported(t *testing.T) {
	tests := []struct {
		prov string // "" anthropic
		a    otlp.Attempt
		want string
	}{
		{"", otlp.Attempt{Status: 529, ErrorType: "529"}, "overloaded"},
		{"", otlp.Attempt{Status: 429}, "rate_limit"},
		{"", otlp.Attempt{Status: 500, Error: "500 Internal server error"}, "server_error"},
		{"", otlp.Attempt{Status: 200, Error: `{"type":"error","error":{"type":"overloaded_error"}}`}, "overloaded"},
		{"", otlp.Attempt{Error: "read ECONNRESET: connection reset by peer"}, "connection_error"},
		// The client's own classification, in retrylab's taxonomy.
		{"", otlp.Attempt{Status: 400, ErrorType: "context_too_long"}, "context_too_long"},
		// Codex CLI (the codex mapping): a response.failed's code; a cut
		// stream (an error after a 200); a request not sent; a 200 it
		// re-sent without saying why.
		{"openai-responses", otlp.Attempt{Status: 200, ErrorType: "rate_limit_exceeded", Error: "rate limit exceeded: Rate limit reached"}, "rate_limit"},
		{"openai-responses", otlp.Attempt{Status: 200, ErrorType: "server_error", Error: "stream disconnected before completion: boom"}, "server_error"},
		{"openai-responses", otlp.Attempt{Status: 200, Error: "stream disconnected before completion: Transport error: network error: error decoding response body"}, "stream_interrupted"},
		{"openai-responses", otlp.Attempt{Error: "error sending request"}, "connection_error"},
		{"openai-responses", otlp.Attempt{Status: 200, Retried: true}, "unknown"},
		// Only that it tried again: nothing to classify.
		{"", otlp.Attempt{Retried: true}, "unknown"},
	}
	for _, tt := range tests {
		prov := tt.prov
		if prov == "" {
			prov = "anthropic"
		}
		if got := ClassifyReported(prov, tt.a); got != tt.want {
			t.Errorf("ClassifyReported(%+v) = %q, want %q", tt.a, got, tt.want)
		}
	}
}

// TestTelemetryDroppedSelfReport: a client whose telemetry names fewer
// attempts than the server answered, while the receiver dropped exports,
// is not proven to omit them: selfReport is unverified.
func TestTelemetryDroppedSelfReport(t *testing.T) {
	acc := &otlp.Account{Mapping: "semconv", Requests: []otlp.Request{{Attempts: []otlp.Attempt{{Status: 529}}}}}
	ob := Observed{ServerAttempts: 2, ServerStatuses: []int{529, 200}, FailedAttempts: []bool{true, false}, SelfReport: acc}
	if c := SelfReportCheck(ob); c.Passed {
		t.Fatalf("without drops: %+v, want a failure", c)
	}
	ob.Telemetry = &Telemetry{Exports: 4, Kept: 1, Dropped: 3}
	c := SelfReportCheck(ob)
	if c.State != StateUnverified || !strings.Contains(c.Hint, "dropped 3 of its exports") {
		t.Errorf("with drops: %+v, want unverified naming the 3 dropped", c)
	}
}
