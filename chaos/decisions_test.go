package chaos

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
)

// The pure decisions of a run, table-tested without a network or a clock.

func TestClientArgvAndEnv(t *testing.T) {
	t.Parallel()
	sc := &scenario.Scenario{Name: "s", Provider: "openai", Model: "gpt-4o", Requests: 3, File: "/suite/s.yaml",
		Client: scenario.Client{Command: []string{"./client.sh", "--fast"}}}
	argv, display := client.ClientArgv(sc, "curl -s $OPENAI_BASE_URL")
	if !slices.Equal(argv, []string{"sh", "-c", "curl -s $OPENAI_BASE_URL"}) || display != "curl -s $OPENAI_BASE_URL" {
		t.Errorf("--client-cmd: argv %q display %q", argv, display)
	}
	argv, display = client.ClientArgv(sc, "")
	if display != "./client.sh --fast" || len(argv) != 2 || argv[1] != "--fast" {
		t.Errorf("client.command: argv %q display %q", argv, display)
	}
	env := clientEnv(sc, "http://127.0.0.1:1", "/run/s/trace.jsonl", 0.5)
	for _, want := range []string{"OPENAI_BASE_URL=http://127.0.0.1:1/v1", "ANTHROPIC_BASE_URL=http://127.0.0.1:1",
		"RETRYLAB_TRACE=/run/s/trace.jsonl", "RETRYLAB_REQUESTS=3", "RETRYLAB_TIME_SCALE=0.5", "OPENAI_API_KEY=" + redact.FakeAPIKey,
		"GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:1", "GEMINI_API_KEY=" + redact.FakeAPIKey} {
		if !slices.Contains(env, want) {
			t.Errorf("client environment lacks %s: %q", want, env)
		}
	}
}

func TestExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		st          client.ClientStatus
		problem     string // before
		wantCode    int
		wantProblem string
	}{
		{client.ClientStatus{Code: 0}, "", 0, ""},
		{client.ClientStatus{Code: 3}, "", 3, ""},
		{client.ClientStatus{Code: -1, Signaled: true, Signal: "segmentation fault"}, "", -1, "crashed: killed by signal segmentation fault"},
		{client.ClientStatus{Code: -1, Signaled: true, Signal: "killed"}, "killed: the run was interrupted", -1, "killed: the run was interrupted"},
		{client.ClientStatus{Err: errors.New("no child")}, "", -1, "wait: no child"},
	}
	for _, tt := range tests {
		exit := &client.ClientExit{ExitCode: -1, Problem: tt.problem}
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

func TestRunChecksAndVerdictLine(t *testing.T) {
	t.Parallel()
	if cs := runChecks(nil, nil); len(cs) != 0 {
		t.Errorf("a clean run adds checks: %+v", cs)
	}
	cs := runChecks(errors.New("disk full"), []string{"trace.jsonl:3: invalid JSON"})
	if len(cs) != 2 || cs[0].Name != "journal" || cs[0].Passed || cs[1].Name != "trace" || !cs[1].Passed {
		t.Errorf("journal failure and trace note: %+v", cs)
	}
	res := Result{Verdict: VerdictFail, Checks: []verify.Check{{Name: "attempts", State: verify.StateFail}, {Name: "outcome", State: verify.StatePass}}}
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
	mk := func() []verify.Check {
		return []verify.Check{
			{Name: "client", State: verify.StateFail},
			{Name: "attempts", State: verify.StateFail},
			{Name: "outcome", State: verify.StatePass, Passed: true},
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
		applied := verify.StallChecks(cs, tt.killed, tt.late, tt.deadline)
		if applied != tt.wantStalled {
			t.Errorf("%s: applied %v, want %v", tt.name, applied, tt.wantStalled)
		}
		for _, i := range []int{0, 1} {
			if got := cs[i].State == verify.StateInconclusive; got != tt.wantStalled {
				t.Errorf("%s: %s state %s; want stalled %v", tt.name, cs[i].Name, cs[i].State, tt.wantStalled)
			}
		}
		if cs[2].State != verify.StatePass || cs[3].State != "" {
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
