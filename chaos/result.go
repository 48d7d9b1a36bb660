package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SummarySchema is the schema of the `chaos run --format json` document.
const SummarySchema = "retrylab.chaos/v1"

// Summary is one `chaos run` invocation: the document `--format json` prints
// and summary.json holds.
type Summary struct {
	Schema     string   `json:"schema"`
	Passed     int      `json:"passed"`
	Failed     int      `json:"failed"`
	DurationMs int64    `json:"durationMs"`
	RunDir     string   `json:"runDir"`
	Seed       int64    `json:"seed"`
	Toxiproxy  string   `json:"toxiproxy"` // "embedded" or the server's URL
	Shard      string   `json:"shard,omitempty"`
	Scenarios  []Result `json:"scenarios"`
}

// Result is one scenario's verdict (result.json, and one element of
// Summary.Scenarios). DelaysMs.Client is policy time; DelaysMs.Server is
// wall-clock.
type Result struct {
	Name         string       `json:"name"`
	File         string       `json:"file"`
	Description  string       `json:"description,omitempty"`
	Passed       bool         `json:"passed"`
	Outcome      string       `json:"outcome"`
	Attempts     int          `json:"attempts"`
	FailureTypes []string     `json:"failureTypes"`
	DelaysMs     DelaysMs     `json:"delaysMs"`
	Escalations  []Escalation `json:"escalations"`
	DurationMs   int64        `json:"durationMs"`
	Checks       []Check      `json:"checks"`

	Seed      int64    `json:"seed"`
	TimeScale float64  `json:"timeScale"`
	Client    string   `json:"client"` // "built-in" or the external command
	Faults    []string `json:"faults"` // what each attempt met, in order
	Dir       string   `json:"dir"`
	// LatenessMs is the timer lateness measured on this machine during the
	// scenario, added (twice) to the server-side delay tolerance.
	LatenessMs int64  `json:"latenessMs"`
	Error      string `json:"error,omitempty"` // the run could not be carried out
}

// DelaysMs holds the waits in milliseconds: Client from the client's trace
// (policy time), Server from the journal's gaps (wall clock).
type DelaysMs struct {
	Client []int64 `json:"client"`
	Server []int64 `json:"server"`
}

// FailedChecks returns the checks that did not pass.
func (r Result) FailedChecks() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.Passed {
			out = append(out, c)
		}
	}
	return out
}

// WriteJSON writes v as indented JSON to path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Finish counts passes and failures and sorts scenarios by name.
func (s *Summary) Finish() {
	s.Schema = SummarySchema
	s.Passed, s.Failed = 0, 0
	sort.Slice(s.Scenarios, func(i, j int) bool { return s.Scenarios[i].Name < s.Scenarios[j].Name })
	for _, r := range s.Scenarios {
		if r.Passed {
			s.Passed++
		} else {
			s.Failed++
		}
	}
}

// WriteSummary writes summary.json into the run folder.
func (s *Summary) Write() error {
	return writeJSON(filepath.Join(s.RunDir, "summary.json"), s)
}

// DescribeFault says in a few words what one attempt meets, e.g.
// "529", "429 retry-after=2", "sseError overloaded_error after 3 events".
func DescribeFault(f Fault) string {
	switch f.Kind() {
	case FaultStatus:
		s := fmt.Sprint(f.Status)
		if f.RetryAfter != nil {
			s += " retry-after=" + *f.RetryAfter
		}
		if f.ErrorType != "" {
			s += " " + f.ErrorType
		}
		return s
	case FaultSSEError:
		t := f.SSEError.Type
		if t == "" {
			t = "overloaded_error"
		}
		return fmt.Sprintf("sseError %s after %d events", t, f.SSEError.AfterEvents)
	case FaultDrop:
		return fmt.Sprintf("drop after %d bytes", f.Drop.AfterBytes)
	case FaultHang:
		return "hang"
	case FaultReset:
		return "reset"
	case FaultLatency:
		return "latency " + f.Latency.String()
	case FaultToxics:
		var s []string
		for _, t := range f.Toxics {
			s = append(s, t.Type)
		}
		return "toxics " + strings.Join(s, "+")
	}
	return "ok"
}
