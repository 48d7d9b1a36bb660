package chaos

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/trace"
)

// TestResultVerdict checks the pure parts of a scenario's verdict: the
// verdict of one run, whether only timing checks stand in its way (which
// decides a re-run), and the counts of a summary.
func TestResultVerdict(t *testing.T) {
	t.Parallel()
	pass := verify.Check{Name: "outcome", Passed: true, State: verify.StatePass}
	failT := verify.Check{Name: "delays.server", State: verify.StateFail}
	incT := verify.Check{Name: "delays.server", State: verify.StateInconclusive}
	failMax := verify.Check{Name: "maxDuration", State: verify.StateFail}
	failN := verify.Check{Name: "attempts", State: verify.StateFail}
	failC := verify.Check{Name: "delays.client", State: verify.StateFail}
	unver := verify.Check{Name: "failureTypes", State: verify.StateUnverified}
	legacy := verify.Check{Name: "delays.server"} // no State: Passed false means failed
	tests := []struct {
		name       string
		res        Result
		verdict    string
		timingOnly bool
	}{
		{name: "all passed", res: Result{Checks: []verify.Check{pass}}, verdict: VerdictPass, timingOnly: true},
		{name: "no checks", res: Result{}, verdict: VerdictPass, timingOnly: true},
		{name: "unverified is not a failure", res: Result{Checks: []verify.Check{pass, unver}}, verdict: VerdictPass, timingOnly: true},
		{name: "a server delay failed", res: Result{Checks: []verify.Check{pass, failT}}, verdict: VerdictFail, timingOnly: true},
		{name: "maxDuration failed", res: Result{Checks: []verify.Check{pass, failMax}}, verdict: VerdictFail, timingOnly: true},
		{name: "a check without a state that did not pass", res: Result{Checks: []verify.Check{legacy}}, verdict: VerdictFail, timingOnly: true},
		{name: "inconclusive", res: Result{Checks: []verify.Check{pass, incT}}, verdict: VerdictInconclusive, timingOnly: true},
		{name: "inconclusive and unverified", res: Result{Checks: []verify.Check{incT, unver}}, verdict: VerdictInconclusive, timingOnly: true},
		{name: "a failure wins over inconclusive", res: Result{Checks: []verify.Check{incT, failMax}}, verdict: VerdictFail, timingOnly: true},
		{name: "attempts failed", res: Result{Checks: []verify.Check{failT, failN}}, verdict: VerdictFail, timingOnly: false},
		{name: "delays.client is not timing", res: Result{Checks: []verify.Check{failC, failT}}, verdict: VerdictFail, timingOnly: false},
		{name: "a non-timing failure with an inconclusive one", res: Result{Checks: []verify.Check{incT, failN}}, verdict: VerdictFail, timingOnly: false},
		// An error of the run is not a verdict on the client: "error", not "fail".
		{name: "an error", res: Result{Error: "start mock and proxy: boom", Checks: []verify.Check{pass}}, verdict: VerdictError, timingOnly: false},
		{name: "an error with a timing failure", res: Result{Error: "boom", Checks: []verify.Check{failT}}, verdict: VerdictError, timingOnly: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []any{tt.res.verdict(), tt.res.timingOnly()}
			if diff := cmp.Diff([]any{tt.verdict, tt.timingOnly}, got); diff != "" {
				t.Errorf("verdict(), timingOnly() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, c := range []verify.Check{failT, incT, failMax, {Name: "findings"}} {
		if !c.Timing() {
			t.Errorf("%s.Timing() = false, want true", c.Name)
		}
	}
	for _, c := range []verify.Check{pass, failN, failC, unver, {Name: "client"}, {Name: "journal"}} {
		if c.Timing() {
			t.Errorf("%s.Timing() = true, want false", c.Name)
		}
	}
}

// TestSummaryFinish checks the counts of a summary: skipped scenarios are
// neither passed nor failed; inconclusive ones are failed and counted as
// inconclusive; passes on a re-run are passed and counted as such;
// unverified checks are counted whatever the verdict.
func TestSummaryFinish(t *testing.T) {
	t.Parallel()
	unver := verify.Check{Name: "failureTypes", State: verify.StateUnverified}
	scs := []Result{
		{Name: "f-inconclusive", Verdict: VerdictInconclusive, Checks: []verify.Check{{Name: "delays.server", State: verify.StateInconclusive}}},
		{Name: "a-pass", Passed: true, Verdict: VerdictPass},
		{Name: "c-rerun", Passed: true, Verdict: VerdictPass, PassedOnRerun: true, Reruns: []Rerun{{Run: 2, Verdict: VerdictPass}}},
		{Name: "d-fail", Verdict: VerdictFail, Checks: []verify.Check{{Name: "attempts", State: verify.StateFail}}},
		{Name: "e-skip", Verdict: VerdictSkipped, SkipReason: "needs node, which is not in PATH"},
		{Name: "b-unverified", Passed: true, Verdict: VerdictPass, Checks: []verify.Check{unver}},
		{Name: "g-fail-unverified", Verdict: VerdictFail, Checks: []verify.Check{unver, {Name: "outcome", State: verify.StateFail}}},
		{Name: "h-rerun-unverified", Passed: true, Verdict: VerdictPass, PassedOnRerun: true, Checks: []verify.Check{unver}},
	}
	sum := Summary{Scenarios: scs}
	sum.Finish()
	type counts struct{ Passed, Failed, Inconclusive, Skipped, PassedOnRerun, Unverified int }
	got := counts{sum.Passed, sum.Failed, sum.Inconclusive, sum.Skipped, sum.PassedOnRerun, sum.Unverified}
	want := counts{Passed: 4, Failed: 3, Inconclusive: 1, Skipped: 1, PassedOnRerun: 2, Unverified: 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summary.Finish() counts mismatch (-want +got):\n%s", diff)
	}
	var names []string
	for _, r := range sum.Scenarios {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"a-pass", "b-unverified", "c-rerun", "d-fail", "e-skip", "f-inconclusive", "g-fail-unverified", "h-rerun-unverified"}, names); diff != "" {
		t.Errorf("Summary.Finish() order mismatch (-want +got):\n%s", diff)
	}
	if sum.Schema != SummarySchema {
		t.Errorf("Summary.Finish() schema = %q, want %q", sum.Schema, SummarySchema)
	}
	// Finish counts afresh each time.
	sum.Finish()
	if again := (counts{sum.Passed, sum.Failed, sum.Inconclusive, sum.Skipped, sum.PassedOnRerun, sum.Unverified}); again != want {
		t.Errorf("second Summary.Finish() = %+v, want %+v", again, want)
	}
}

// TestFailureTypesUnverified: without a client trace, failure types that
// match the faults are unverified (not passed, not failed: the scenario
// passes and the summary counts it as unverified); types that do not match
// fail. With a trace they pass or fail as before.
func TestFailureTypesUnverified(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		trace   bool
		want    []string
		check   verify.Check
		verdict string
		failed  int // Result.failedChecks, Summary.Failed
		unver   int // Result.unverifiedChecks, Summary.Unverified
	}{
		{
			name: "no trace, matching", want: []string{"overloaded", "rate_limit"},
			check: verify.Check{Name: "failureTypes", State: verify.StateUnverified, Want: "overloaded, rate_limit",
				Got:   "overloaded, rate_limit (the faults the client met, as retrylab classifies them; the client wrote no trace, so its own classification is unknown)",
				Where: "server.jsonl: failure types the faults imply (the client wrote no trace)",
				Hint:  "write RetryAttempt events to $RETRYLAB_TRACE, or send OpenTelemetry to $OTEL_EXPORTER_OTLP_ENDPOINT, to have failureTypes verified"},
			verdict: VerdictPass, unver: 1,
		},
		{
			name: "no trace, not matching", want: []string{"overloaded", "overloaded"},
			check: verify.Check{Name: "failureTypes", State: verify.StateFail, Want: "overloaded, overloaded", Got: "overloaded, rate_limit",
				Where: "server.jsonl: failure types the faults imply (the client wrote no trace), failed attempt 2"},
			verdict: VerdictFail, failed: 1,
		},
		{
			name: "no trace, too few", want: []string{"overloaded"},
			check: verify.Check{Name: "failureTypes", State: verify.StateFail, Want: "overloaded", Got: "overloaded, rate_limit",
				Where: "server.jsonl: failure types the faults imply (the client wrote no trace), failed attempt 2"},
			verdict: VerdictFail, failed: 1,
		},
		{
			name: "trace, matching", trace: true, want: []string{"overloaded", "rate_limit"},
			check: verify.Check{Name: "failureTypes", Passed: true, State: verify.StatePass, Want: "overloaded, rate_limit", Got: "overloaded, rate_limit",
				Where: "trace.jsonl: RetryAttempt.failureType"},
			verdict: VerdictPass,
		},
		{
			name: "trace, not matching", trace: true, want: []string{"overloaded", "overloaded"},
			check: verify.Check{Name: "failureTypes", State: verify.StateFail, Want: "overloaded, overloaded", Got: "overloaded, rate_limit",
				Where: "trace.jsonl: RetryAttempt.failureType, failed attempt 2"},
			verdict: VerdictFail, failed: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ob := verify.Observed{Outcome: "success", ServerAttempts: 3, InferredTypes: []string{"overloaded", "rate_limit"}}
			if tt.trace {
				ob.ClientTrace = true
				ob.Retries = []trace.RetryAttempt{
					{Attempt: 1, FailureType: "overloaded", WillRetry: true, DelayMs: 1000},
					{Attempt: 2, FailureType: "rate_limit", WillRetry: true, DelayMs: 2000},
				}
			} else {
				ob.Client = &client.ClientExit{Command: "sh client.sh"}
			}
			cs := verify.Evaluate(&scenario.Scenario{Expect: scenario.Expect{Outcome: "success", FailureTypes: tt.want}}, ob, nil)
			if diff := cmp.Diff(tt.check, checkNamed(t, cs, "failureTypes")); diff != "" {
				t.Errorf("evaluate() failureTypes mismatch (-want +got):\n%s", diff)
			}
			res := Result{Name: "s", Checks: cs}
			res.Verdict = res.verdict()
			res.Passed = res.Verdict == VerdictPass
			sum := Summary{Scenarios: []Result{res}}
			sum.Finish()
			type counts struct {
				Verdict                        string
				FailedChecks, UnverifiedChecks int
				Failed, Unverified, Passed     int
			}
			got := counts{res.Verdict, len(res.failedChecks()), len(res.unverifiedChecks()), sum.Failed, sum.Unverified, sum.Passed}
			want := counts{tt.verdict, tt.failed, tt.unver, tt.failed, tt.unver, 1 - tt.failed}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verdict and counts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteJSONFullDisk: a result that cannot be written for a full disk
// says so, with a hint.
func TestWriteJSONFullDisk(t *testing.T) {
	t.Parallel()
	// A full disk cannot be made here; its error is what the hint is
	// chosen from.
	err := runfolder.OutputErr("", "runs/x/summary.json", &os.PathError{Op: "write", Path: "runs/x/summary.json", Err: syscall.ENOSPC})
	var oe *runfolder.OutputError
	if !errors.As(err, &oe) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(oe.Hint(), "full") {
		t.Fatalf("outputErr(ENOSPC) = %v, want an OutputError for ENOSPC with a hint", err)
	}
}

// TestWriteJSONNeverReplacesDevice is a regression test: writing a result
// to a device path through a temporary file and a rename replaced the
// device node itself (run as root, the test turned /dev/full into a file).
func TestWriteJSONNeverReplacesDevice(t *testing.T) {
	t.Parallel()
	dev := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil { // like /dev/null
		t.Skipf("cannot make a device here (needs root): %v", err)
	}
	if err := writeJSON(dev, Summary{}); err == nil {
		t.Fatal("writeJSON on a device succeeded; want an error, the device left alone")
	}
	if fi, err := os.Lstat(dev); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("the device was replaced: %v, %v", fi.Mode(), err)
	}
}
