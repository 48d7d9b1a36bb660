package chaos

import (
	"encoding/json"
	"path/filepath"
	"sort"

	"github.com/retrylab/retrylab/chaos/fleet"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/trace"
)

// SummarySchema is the schema of the `chaos run --format json` document.
const SummarySchema = "retrylab.chaos/v1"

// Summary is one `chaos run` invocation: the document `--format json` prints
// and summary.json holds.
//
// Failed counts every scenario whose client failed a check or whose checks
// stayed inconclusive; Inconclusive counts those of them whose only verdict
// was inconclusive. Interrupted counts the scenarios a cancelled run did not
// finish (or never started), Errors those that could not be carried out
// (the run's infrastructure failed: the proxy, a file-descriptor limit, the
// disk): neither is a client's failure. PassedOnRerun counts the passes that
// needed a re-run, Unverified the scenarios with a check that could not be
// verified (not failures).
type Summary struct {
	Schema        string   `json:"schema"`
	Passed        int      `json:"passed"`
	Failed        int      `json:"failed"`
	Inconclusive  int      `json:"inconclusive"`
	Skipped       int      `json:"skipped"`
	Interrupted   int      `json:"interrupted"`
	Errors        int      `json:"errors"`
	PassedOnRerun int      `json:"passedOnRerun"`
	Unverified    int      `json:"unverified"`
	DurationMs    int64    `json:"durationMs"`
	RunDir        string   `json:"runDir"`
	Seed          int64    `json:"seed"`
	Toxiproxy     string   `json:"toxiproxy"` // "embedded" or the server's URL
	Shard         string   `json:"shard,omitempty"`
	Scenarios     []Result `json:"scenarios"`
}

// Result is one scenario's verdict (result.json, and one element of
// Summary.Scenarios). DelaysMs.Client is policy time; DelaysMs.Server is
// wall-clock.
//
// Verdict is pass, fail, inconclusive (the timing checks could not tell on
// this machine, after every re-run), skipped (a client requirement is
// missing: SkipReason), interrupted (the run was cancelled before the
// scenario finished, or before it started: Interrupted says which) or error
// (the scenario could not be carried out: Error says why). When timing checks failed or were inconclusive the
// scenario is re-run (Runner.Confirm times at most); the figures are the
// first run's, Reruns says what each re-run gave, and PassedOnRerun marks a
// pass that needed one.
type Result struct {
	Name        string `json:"name"`
	File        string `json:"file"`
	Description string `json:"description,omitempty"`
	Passed      bool   `json:"passed"`
	Verdict     string `json:"verdict"`
	SkipReason  string `json:"skipReason,omitempty"`
	// SkipMissing is what the skipped scenario's client needs and is not
	// here (a path relative to the current folder, or "NAME (not in
	// PATH)"); SkipHint is its client.requiresHint, what to run to
	// provide it. Runs group skips by them (SkipGroups).
	SkipMissing   string                `json:"skipMissing,omitempty"`
	SkipHint      string                `json:"skipHint,omitempty"`
	Interrupted   string                `json:"interrupted,omitempty"` // why the scenario is unfinished
	PassedOnRerun bool                  `json:"passedOnRerun,omitempty"`
	Reruns        []Rerun               `json:"reruns,omitempty"`
	Outcome       string                `json:"outcome"`
	Attempts      int                   `json:"attempts"`
	FailureTypes  []string              `json:"failureTypes"`
	DelaysMs      DelaysMs              `json:"delaysMs"`
	Escalations   []scenario.Escalation `json:"escalations"`
	// ErrorReports are the client's ErrorReport events (seed 001: why it
	// gave up on a request and what a person must do about it), read from
	// its trace and made safe to show: every string bounded, stripped of
	// control characters and redacted like every run file, lists bounded.
	// At most maxErrorReports; ErrorReportsOmitted counts the rest.
	ErrorReports        []trace.ErrorReport `json:"errorReports,omitempty"`
	ErrorReportsOmitted int                 `json:"errorReportsOmitted,omitempty"`
	DurationMs          int64               `json:"durationMs"`
	Checks              []verify.Check      `json:"checks"`
	// Findings are what the run shows of its client without being asked
	// (verify.Findings; docs/chaos.md, "Findings"), each with its
	// evidence; absent when none.
	Findings []verify.Finding `json:"findings,omitempty"`

	Seed      int64    `json:"seed"`
	TimeScale float64  `json:"timeScale"`
	Client    string   `json:"client"` // "built-in" or the external command
	Faults    []string `json:"faults"` // what each attempt met, in order
	// Outage is the scenario's outage: and what each attempt drew from it
	// (outage.go); nil without one.
	Outage *OutageResult `json:"outage,omitempty"`
	Dir    string        `json:"dir"`
	// Path is how the scenario's clients reached the mock: "direct" (no
	// fault of it needs Toxiproxy: they talk to the mock's own listener)
	// or "toxiproxy" (through a proxy: drop, reset or raw toxics, or
	// --proxy always); absent when the mock never started.
	Path string `json:"path,omitempty"`
	// LatenessMs is the timer lateness measured on this machine during the
	// scenario, added (twice) to the server-side delay tolerance.
	LatenessMs int64 `json:"latenessMs"`
	// Stalled is set when the client was stopped at its deadline while the
	// machine stalled (LatenessMs of at least a second and a twentieth of
	// the deadline): its failed checks are then inconclusive and re-run.
	Stalled bool   `json:"stalled,omitempty"`
	Error   string `json:"error,omitempty"` // the run could not be carried out
	// Telemetry counts the OpenTelemetry an external client sent the
	// scenario's OTLP receiver (telemetry.go); nil when it sent none.
	Telemetry *verify.Telemetry `json:"telemetry,omitempty"`
	// ErrorHint says what to do about Error when it is not the
	// infrastructure's (InfraHint): a client.command that cannot start.
	ErrorHint string `json:"errorHint,omitempty"`
	// ExitCode is the exit status of an external client that exited by
	// itself (absent when it was killed, crashed or is the built-in
	// client; the "client" check says so).
	ExitCode *int `json:"exitCode,omitempty"`
	// Fleet is a fleet's figures (fleet:; package chaos/fleet defines
	// them) and FleetTimeline what the HTML report charts of it; both nil
	// without a fleet.
	Fleet         *fleet.Figures `json:"fleet,omitempty"`
	FleetTimeline *FleetTimeline `json:"fleetTimeline,omitempty"`
}

// Verdicts of a scenario.
const (
	VerdictPass         = "pass"
	VerdictFail         = "fail"
	VerdictInconclusive = "inconclusive"
	VerdictSkipped      = "skipped"
	// VerdictInterrupted: the run was cancelled (SIGINT, SIGTERM) before
	// the scenario finished or started; it says nothing of the client.
	VerdictInterrupted = "interrupted"
	// VerdictError: the scenario could not be carried out (Result.Error);
	// it says nothing of the client either.
	VerdictError = "error"
)

// Rerun is what one re-run of a scenario gave: its verdict, the checks that
// did not pass, its waits and its run folder.
type Rerun struct {
	Run        int            `json:"run"` // 2 for the first re-run
	Verdict    string         `json:"verdict"`
	Checks     []verify.Check `json:"checks"` // those that did not pass
	DelaysMs   DelaysMs       `json:"delaysMs"`
	LatenessMs int64          `json:"latenessMs"`
	Dir        string         `json:"dir"`
}

// DelaysMs holds the waits in milliseconds: Client from the client's trace
// (policy time), Server from the journal's gaps (wall clock).
type DelaysMs struct {
	Client []int64 `json:"client"`
	Server []int64 `json:"server"`
	// Noise is, per server wait, the noise measured around it: twice the
	// scheduling lateness measured around the gap, plus an external
	// client's measured run-queue time over it (wall clock). chaos probe
	// reads it to tell a wait it can trust from one it cannot.
	Noise []int64 `json:"noise,omitempty"`
}

// NotPassedChecks returns the checks that did not pass: failed,
// inconclusive and unverified ones (never nil).
func (r Result) NotPassedChecks() []verify.Check {
	out := []verify.Check{}
	for _, c := range r.Checks {
		if !c.Passed {
			out = append(out, c)
		}
	}
	return out
}

// failedChecks returns the checks that failed.
func (r Result) failedChecks() []verify.Check { return r.checksIn(verify.StateFail) }

// inconclusiveChecks returns the checks that could not tell.
func (r Result) inconclusiveChecks() []verify.Check { return r.checksIn(verify.StateInconclusive) }

// unverifiedChecks returns the checks whose subject could not be seen.
func (r Result) unverifiedChecks() []verify.Check { return r.checksIn(verify.StateUnverified) }

func (r Result) checksIn(state string) []verify.Check {
	var out []verify.Check
	for _, c := range r.Checks {
		if c.State == state || (c.State == "" && state == verify.StateFail && !c.Passed) {
			out = append(out, c)
		}
	}
	return out
}

// verdict is the verdict of one run from its error and checks.
func (r Result) verdict() string {
	switch {
	case r.Interrupted != "":
		return VerdictInterrupted
	case r.Error != "":
		return VerdictError
	case len(r.failedChecks()) > 0:
		return VerdictFail
	case len(r.inconclusiveChecks()) > 0:
		return VerdictInconclusive
	}
	return VerdictPass
}

// timingOnly reports whether every check that did not pass is a timing check.
func (r Result) timingOnly() bool {
	if r.Error != "" {
		return false
	}
	for _, c := range r.failedChecks() {
		if !c.Timing() {
			return false
		}
	}
	for _, c := range r.inconclusiveChecks() {
		if !c.Timing() && !r.Stalled {
			return false
		}
	}
	return true
}

// WriteJSON writes v as indented JSON to path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return runfolder.OutputErr("", path, runfolder.WriteFileAtomic(path, append(b, '\n')))
}

// Finish counts passes and failures and sorts scenarios by name.
func (s *Summary) Finish() {
	s.Schema = SummarySchema
	s.Passed, s.Failed, s.Inconclusive, s.Skipped, s.PassedOnRerun, s.Unverified = 0, 0, 0, 0, 0, 0
	s.Interrupted, s.Errors = 0, 0
	sort.Slice(s.Scenarios, func(i, j int) bool { return s.Scenarios[i].Name < s.Scenarios[j].Name })
	for _, r := range s.Scenarios {
		switch {
		case r.Verdict == VerdictSkipped:
			s.Skipped++
		case r.Verdict == VerdictInterrupted:
			s.Interrupted++
		case r.Verdict == VerdictError:
			s.Errors++
		case r.Passed:
			s.Passed++
		default:
			s.Failed++
		}
		if r.Verdict == VerdictInconclusive {
			s.Inconclusive++
		}
		if r.PassedOnRerun {
			s.PassedOnRerun++
		}
		if len(r.unverifiedChecks()) > 0 {
			s.Unverified++
		}
	}
}

// WriteSummary writes summary.json into the run folder.
func (s *Summary) Write() error {
	return writeJSON(filepath.Join(s.RunDir, "summary.json"), s)
}

// WarningChecks returns the checks that passed with a warning (Warning).
func (r Result) WarningChecks() []verify.Check {
	var out []verify.Check
	for _, c := range r.Checks {
		if c.Warning() {
			out = append(out, c)
		}
	}
	return out
}
