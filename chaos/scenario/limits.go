package scenario

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/retry"
)

// Limits of what a scenario file and chaos run's flags accept. Past them a
// value is a mistake (a typo, an exponent too many) that would overflow a
// wait or hang a run, so the loader rejects it with its file, line and field.
const (
	// MaxNameLen bounds a scenario's name, in bytes: it names a run folder
	// and, shortened, a proxy.
	MaxNameLen = 100
	// MaxTimeScale bounds timeScale and --time-scale (which must be above
	// 0): 1000 stretches a 2 s wait to half an hour.
	MaxTimeScale = 1000
	// MinTimeScale is the smallest timeScale and --time-scale: 0.001 makes
	// a 2 s wait 2 ms, about the resolution of the timing checks; below it
	// every wait is 0 and a client that does not wait at all would pass.
	MinTimeScale = 0.001
	// MaxScenarioDuration bounds every duration of a scenario file; with
	// MaxTimeScale it keeps every scaled wait far from overflowing.
	MaxScenarioDuration = fault.MaxDuration
	// MaxRequestsPerMinute bounds limits.requestsPerMinute: a million a
	// minute is far beyond what the mock serves, so a larger value is a
	// typo.
	MaxRequestsPerMinute = 1_000_000
	// MaxTokensPerMinute bounds limits.inputTokensPerMinute and
	// outputTokensPerMinute.
	MaxTokensPerMinute = 1_000_000_000
	// MaxConcurrency bounds limits.concurrency.
	MaxConcurrency = 100_000
	// MaxFleetClients bounds fleet.clients: a thousand built-in clients
	// run in one process (docs/performance.md); each external one is a
	// process with its own HOME.
	MaxFleetClients = 1000
	// MaxFleetStagger bounds fleet.stagger, the gap between two clients'
	// starts: at MaxFleetClients an hour's gap would start the last client
	// some six weeks of policy time after the first.
	MaxFleetStagger = 10 * time.Minute
	// MaxComparisonValue bounds the number of a comparison in
	// expect.fleet ("<= 1.5").
	MaxComparisonValue = 1e9
)

// CheckTimeScale returns why s is not a usable time scale ("" if it is):
// it must be a finite number above 0 and at most MaxTimeScale.
func CheckTimeScale(s float64) string {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return fmt.Sprintf("%v is not a number of times", s)
	case s <= 0:
		return fmt.Sprintf("%v is not above 0", s)
	case s < MinTimeScale:
		return fmt.Sprintf("%v is below %v: every wait would round to nothing", s, MinTimeScale)
	case s > MaxTimeScale:
		return fmt.Sprintf("%v is above %d", s, MaxTimeScale)
	}
	return ""
}

// TimeScaleHint says what a time scale is, for errors.
const TimeScaleHint = "a time scale multiplies every wait: 0.1 makes them ten times shorter; it must be at least 0.001 and at most 1000"

// reservedNames are the files a run folder holds beside its scenarios'
// folders: a scenario named like one would take its place.
var reservedNames = []string{"summary.json", "junit.xml"}

// isReservedName reports whether name is one of reservedNames, in any case
// (a case-insensitive file system makes them one).
func isReservedName(name string) bool {
	for _, r := range reservedNames {
		if strings.EqualFold(name, r) {
			return true
		}
	}
	return false
}

// checkName returns why name cannot name a scenario ("" if it can).
func checkName(name string) string {
	switch {
	case len(name) > MaxNameLen:
		return fmt.Sprintf("name is %d bytes long, more than %d", len(name), MaxNameLen)
	case !utf8.ValidString(name):
		return fmt.Sprintf("name %q is not valid UTF-8", name)
	case strings.ContainsAny(name, `/\`) || name == "." || name == "..":
		return fmt.Sprintf("name %q cannot name a folder", name)
	case strings.TrimSpace(name) == "":
		return fmt.Sprintf("name %q is blank", name)
	case isReservedName(name):
		return fmt.Sprintf("name %q is taken: the run folder holds a file of that name", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Sprintf("name %q holds the control character %U", name, r)
		}
	}
	return ""
}

// validateFailureTypes checks expect.failureTypes against the failure
// types the retry core knows.
func (d *decoder) validateFailureTypes(seq *yaml.Node, fts []string) {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return
	}
	var known []string
	for _, ft := range retry.FailureTypes {
		known = append(known, string(ft))
	}
	for i, ft := range fts {
		if Contains(known, ft) || i >= len(seq.Content) {
			continue
		}
		hint := "failure types: " + strings.Join(known, ", ")
		if s := closest(ft, known); s != "" {
			hint = "did you mean " + s + "?"
		}
		d.errorf(seq.Content[i], fmt.Sprintf("expect.failureTypes[%d]", i), hint, "unknown failure type %q", ft)
	}
}
