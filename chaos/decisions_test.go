package chaos

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// The pure decisions of a run, table-tested without a network or a clock.

func TestFaultKinds(t *testing.T) {
	t.Parallel()
	ra := "2"
	tests := []struct {
		f                  Fault
		describe           string
		closedAll, closedP string // closedBy(true), closedBy(false)
		cuts, completes    bool
		withoutRequest     bool
		toxics             []string
		providerKind       provider.Kind
	}{
		{Fault{}, "ok", trace.ClosedByServer, trace.ClosedByClient, false, true, false, nil, provider.KindNetwork},
		{Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra, ErrorType: "rate_limit_error"}}, "429 retry-after=2 rate_limit_error", trace.ClosedByServer, trace.ClosedByClient, false, false, false, nil, provider.KindHTTP},
		{Fault{Kind: fault.SSEError{AfterEvents: 3}}, "sseError overloaded_error after 3 events", trace.ClosedByServer, trace.ClosedByClient, false, false, false, nil, provider.KindSSEError},
		{Fault{Kind: fault.Drop{AfterBytes: 100}}, "drop after 100 bytes", trace.ClosedByProxy, trace.ClosedByProxy, true, false, false, nil, provider.KindIncomplete},
		{Fault{Kind: fault.Hang{}}, "hang", trace.ClosedByClient, trace.ClosedByClient, false, false, false, nil, provider.KindTimeout},
		{Fault{Kind: fault.Reset{}}, "reset", trace.ClosedByProxy, trace.ClosedByProxy, false, false, false, []string{"a2-reset"}, provider.KindReset},
		{Fault{Kind: fault.Latency{D: Duration(time.Second)}}, "latency 1s", trace.ClosedByServer, trace.ClosedByClient, false, true, false, nil, provider.KindNetwork},
		{Fault{Kind: fault.Toxics{{Type: "latency"}, {Type: "timeout", Name: "t"}}}, "toxics latency+timeout", trace.ClosedByServer, trace.ClosedByProxy, true, false, true, []string{"a2-0-latency", "t"}, provider.KindTimeout},
	}
	for _, tt := range tests {
		k := tt.f.Kind
		if _, ok := fault.Lookup(tt.f.Name()); !ok {
			t.Fatalf("%s: no kind registered", tt.f.Name())
		}
		if got := describeFault(tt.f); got != tt.describe {
			t.Errorf("%s: describe %q, want %q", tt.f.Name(), got, tt.describe)
		}
		if got := fault.ClosedBy(k, true); got != tt.closedAll {
			t.Errorf("%s: closedBy(wrote all) %q, want %q", tt.f.Name(), got, tt.closedAll)
		}
		if got := fault.ClosedBy(k, false); got != tt.closedP {
			t.Errorf("%s: closedBy(cut short) %q, want %q", tt.f.Name(), got, tt.closedP)
		}
		if fault.CutsResponse(k) != tt.cuts || fault.Completes(k) != tt.completes || fault.WithoutRequest(k) != tt.withoutRequest {
			t.Errorf("%s: cuts/completes/withoutRequest = %v/%v/%v, want %v/%v/%v", tt.f.Name(),
				fault.CutsResponse(k), fault.Completes(k), fault.WithoutRequest(k), tt.cuts, tt.completes, tt.withoutRequest)
		}
		var names []string
		for _, s := range preConnectToxics(tt.f, 2) {
			names = append(names, s.name)
			if s.toxicity != 1.0 || s.stream != "downstream" {
				t.Errorf("%s: toxic %s toxicity %v stream %q, want 1.0 downstream by default", tt.f.Name(), s.name, s.toxicity, s.stream)
			}
		}
		if !slices.Equal(names, tt.toxics) {
			t.Errorf("%s: pre-connect toxics %v, want %v", tt.f.Name(), names, tt.toxics)
		}
		pe := &provider.Error{}
		fault.Failure(k, pe, fault.Met{})
		if pe.Kind != tt.providerKind {
			t.Errorf("%s: provider error kind %v, want %v", tt.f.Name(), pe.Kind, tt.providerKind)
		}
	}
	for _, name := range fault.Names() {
		if !slices.ContainsFunc(tests, func(tt struct {
			f                  Fault
			describe           string
			closedAll, closedP string
			cuts, completes    bool
			withoutRequest     bool
			toxics             []string
			providerKind       provider.Kind
		}) bool {
			return tt.f.Name() == name
		}) {
			t.Errorf("kind %s has no row in this table", name)
		}
	}
}

func TestSucceeded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a    ServerAttempt
		want bool
	}{
		{ServerAttempt{Status: 200, Fault: FaultOK}, true},
		{ServerAttempt{Status: 200, Fault: FaultLatency}, true},
		{ServerAttempt{Status: 200, Fault: ""}, true}, // a journal without the fault
		{ServerAttempt{Status: 200, Fault: FaultSSEError}, false},
		{ServerAttempt{Status: 200, Fault: FaultDrop}, false},
		{ServerAttempt{Status: 200, Fault: FaultToxics}, false},
		{ServerAttempt{Status: 200, Fault: "no-such-kind"}, false},
		{ServerAttempt{Status: 0, Fault: FaultOK}, false},
		{ServerAttempt{Status: 529, Fault: FaultStatus}, false},
	}
	for _, tt := range tests {
		if got := succeeded(tt.a); got != tt.want {
			t.Errorf("succeeded(%d, %q) = %v, want %v", tt.a.Status, tt.a.Fault, got, tt.want)
		}
	}
}

func TestStatusFaultFailureReadsHeaders(t *testing.T) {
	t.Parallel()
	ra := "3"
	f := Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra, Headers: map[string]string{"x-should-retry": "false", "retry-after-ms": "1500"}}}
	pe := &provider.Error{}
	fault.Failure(f.Kind, pe, fault.Met{Ended: time.Now()})
	if pe.Status != 429 || pe.ShouldRetry == nil || *pe.ShouldRetry || !pe.HasRetryAfter {
		t.Fatalf("got status %d shouldRetry %v hasRetryAfter %v", pe.Status, pe.ShouldRetry, pe.HasRetryAfter)
	}
	if pe.RetryAfter != 1500*time.Millisecond {
		t.Errorf("retry-after-ms is read first, as the SDKs do: got %v, want 1.5s", pe.RetryAfter)
	}
}

func TestClientArgvAndEnv(t *testing.T) {
	t.Parallel()
	sc := &Scenario{Name: "s", Provider: "openai", Model: "gpt-4o", Requests: 3, File: "/suite/s.yaml",
		Client: Client{Command: []string{"./client.sh", "--fast"}}}
	argv, display := clientArgv(sc, "curl -s $OPENAI_BASE_URL")
	if !slices.Equal(argv, []string{"sh", "-c", "curl -s $OPENAI_BASE_URL"}) || display != "curl -s $OPENAI_BASE_URL" {
		t.Errorf("--client-cmd: argv %q display %q", argv, display)
	}
	argv, display = clientArgv(sc, "")
	if display != "./client.sh --fast" || len(argv) != 2 || argv[1] != "--fast" {
		t.Errorf("client.command: argv %q display %q", argv, display)
	}
	env := clientEnv(sc, "http://127.0.0.1:1", "/run/s/trace.jsonl", 0.5)
	for _, want := range []string{"OPENAI_BASE_URL=http://127.0.0.1:1/v1", "ANTHROPIC_BASE_URL=http://127.0.0.1:1",
		"RETRYLAB_TRACE=/run/s/trace.jsonl", "RETRYLAB_REQUESTS=3", "RETRYLAB_TIME_SCALE=0.5", "OPENAI_API_KEY=" + fakeAPIKey,
		"GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:1", "GEMINI_API_KEY=" + fakeAPIKey} {
		if !slices.Contains(env, want) {
			t.Errorf("client environment lacks %s: %q", want, env)
		}
	}
}

func TestExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		st          clientStatus
		problem     string // before
		wantCode    int
		wantProblem string
	}{
		{clientStatus{code: 0}, "", 0, ""},
		{clientStatus{code: 3}, "", 3, ""},
		{clientStatus{code: -1, signaled: true, signal: "segmentation fault"}, "", -1, "crashed: killed by signal segmentation fault"},
		{clientStatus{code: -1, signaled: true, signal: "killed"}, "killed: the run was interrupted", -1, "killed: the run was interrupted"},
		{clientStatus{err: errors.New("no child")}, "", -1, "wait: no child"},
	}
	for _, tt := range tests {
		exit := &ClientExit{ExitCode: -1, Problem: tt.problem}
		exitStatus(tt.st, exit)
		if exit.ExitCode != tt.wantCode || exit.Problem != tt.wantProblem {
			t.Errorf("%+v: code %d problem %q, want %d %q", tt.st, exit.ExitCode, exit.Problem, tt.wantCode, tt.wantProblem)
		}
	}
}

func TestBuiltinOutcome(t *testing.T) {
	t.Parallel()
	start := time.Now().Add(-time.Hour) // a deadline long past
	if out := builtinOutcome(context.Background(), true, start, nil); out.outcome != "success" || out.problem != "" {
		t.Errorf("all requests ok: %+v", out)
	}
	if out := builtinOutcome(context.Background(), false, start, nil); out.outcome != "failure" || out.problem != "" {
		t.Errorf("a request failed: %+v", out)
	}
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(1500*time.Millisecond))
	defer cancel()
	<-ctx.Done()
	out := builtinOutcome(ctx, true, start, nil)
	if out.outcome != "failure" || !strings.HasPrefix(out.problem, "stopped after 1.5s: still running at the deadline") {
		t.Errorf("deadline: %+v", out)
	}
}

func TestSpeaksForFailures(t *testing.T) {
	t.Parallel()
	ok := trace.ProviderRequestFinished{Success: true}
	retried := trace.ProviderRequestFinished{Success: true, Retries: 2}
	failed := trace.ProviderRequestFinished{Success: false}
	ra := []trace.RetryAttempt{{}}
	tests := []struct {
		retries  []trace.RetryAttempt
		finished []trace.ProviderRequestFinished
		want     bool
	}{
		{nil, nil, false},
		{ra, nil, true},
		{nil, []trace.ProviderRequestFinished{ok, ok}, true},
		{nil, []trace.ProviderRequestFinished{ok, retried}, false},
		{nil, []trace.ProviderRequestFinished{failed}, false},
		{ra, []trace.ProviderRequestFinished{retried}, true},
	}
	for i, tt := range tests {
		if got := speaksForFailures(tt.retries, tt.finished); got != tt.want {
			t.Errorf("case %d: %v, want %v", i, got, tt.want)
		}
	}
}

func TestRunChecksAndVerdictLine(t *testing.T) {
	t.Parallel()
	if cs := runChecks(nil, nil); len(cs) != 0 {
		t.Errorf("a clean run adds checks: %+v", cs)
	}
	cs := runChecks(errors.New("disk full"), []string{"trace.jsonl:3: invalid JSON"})
	if len(cs) != 2 || cs[0].Name != "journal" || cs[0].Passed || cs[1].Name != "trace" || !cs[1].Passed {
		t.Errorf("journal failure and trace note: %+v", cs)
	}
	res := Result{Verdict: VerdictFail, Checks: []Check{{Name: "attempts", State: StateFail}, {Name: "outcome", State: StatePass}}}
	if got := verdictLine(res); got != "FAIL (attempts)" {
		t.Errorf("verdictLine = %q", got)
	}
	if got := verdictLine(Result{Verdict: VerdictError, Error: "client could not start"}); got != "ERROR (client could not start)" {
		t.Errorf("verdictLine = %q", got)
	}
}

// A client killed at its deadline while the machine stalled gets no
// verdict: its failures become inconclusive and are re-run; without the
// stall, or without the kill, they stay failures.
func TestStallChecks(t *testing.T) {
	t.Parallel()
	mk := func() []Check {
		return []Check{
			{Name: "client", State: StateFail},
			{Name: "attempts", State: StateFail},
			{Name: "outcome", State: StatePass, Passed: true},
			{Name: "journal", Passed: false}, // the run's own: stays
		}
	}
	tests := []struct {
		name           string
		killed         bool
		late, deadline time.Duration
		wantStalled    bool
	}{
		{"stalled 4s, killed at 10s", true, 4156 * time.Millisecond, 10 * time.Second, true},
		{"late 700ms: busy, not stalled", true, 700 * time.Millisecond, 10 * time.Second, false},
		{"late 3s of a 2m deadline: under a twentieth", true, 3 * time.Second, 2 * time.Minute, false},
		{"late 7s of a 2m deadline", true, 7 * time.Second, 2 * time.Minute, true},
		{"stalled, but the client was not killed", false, 5 * time.Second, 10 * time.Second, false},
	}
	for _, tt := range tests {
		cs := mk()
		applied := stallChecks(cs, tt.killed, tt.late, tt.deadline)
		if applied != tt.wantStalled {
			t.Errorf("%s: applied %v, want %v", tt.name, applied, tt.wantStalled)
		}
		for _, i := range []int{0, 1} {
			if got := cs[i].State == StateInconclusive; got != tt.wantStalled {
				t.Errorf("%s: %s state %s; want stalled %v", tt.name, cs[i].Name, cs[i].State, tt.wantStalled)
			}
		}
		if cs[2].State != StatePass || cs[3].State != "" {
			t.Errorf("%s: a passed check or the journal changed: %+v", tt.name, cs)
		}
		if !tt.wantStalled {
			continue
		}
		if !strings.Contains(cs[0].Hint, "the machine stalled") {
			t.Errorf("%s: hint %q", tt.name, cs[0].Hint)
		}
		// Inconclusive, and re-run like a timing failure; a journal that
		// failed still fails the run and is not re-run.
		res := Result{Checks: cs[:3], Stalled: true}
		if res.verdict() != VerdictInconclusive || !res.timingOnly() {
			t.Errorf("%s: verdict %s, timing only %v", tt.name, res.verdict(), res.timingOnly())
		}
		res.Checks = cs
		if res.verdict() != VerdictFail || res.timingOnly() {
			t.Errorf("%s with a failed journal: verdict %s, timing only %v", tt.name, res.verdict(), res.timingOnly())
		}
		res.Stalled = false
		res.Checks = cs[:3]
		if res.timingOnly() {
			t.Errorf("%s: inconclusive checks that are not timing checks are re-run without a stall", tt.name)
		}
	}
}
