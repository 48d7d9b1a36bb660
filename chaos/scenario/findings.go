package scenario

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/internal/yamldiag"
)

// FindingsExpect is expect.findings: the finding codes a run must raise
// (Present) and must not raise (Absent), checked by the "findings" check.
type FindingsExpect struct {
	Present []string `yaml:"present"`
	Absent  []string `yaml:"absent"`
}

// FindingCode is one code of the findings a run reports without
// expectations (chaos/verify/findings*.go detects them; docs/chaos.md,
// "Findings", defines each).
type FindingCode struct {
	Code       string
	Definition string
}

// FindingCodes are the known finding codes, in the order runs report them.
var FindingCodes = []FindingCode{
	{"retry_after_ignored", "the next attempt arrived before a usable Retry-After (at most 60s) had passed"},
	{"retried_non_retryable", "a 400/401/403/404, invalid-request or context-length failure was sent again unchanged"},
	{"retry_storm", "one request made more than 11 attempts, or 3+ retries in a row with no wait"},
	{"no_backoff", "3+ consecutive waits after retryable failures without Retry-After did not grow"},
	{"no_jitter", "waits after the same fault at the same point of 3+ requests were identical"},
	{"truncated_stream_accepted", "an answer cut by truncate was the last attempt of a run reported as a success"},
	{"malformed_chunk_ignored", "an answer with a malformed event was the last attempt of a run reported as a success"},
	{"no_read_timeout", "a stalled answer was still open when the client was stopped at its deadline"},
	{"gave_up_early", "the client failed while its last failure's Retry-After was short (at most 60s)"},
	{"stitched_answer", "the client's output holds a cut answer's beginning immediately followed by the retried answer"},
}

// FindingCodeNames lists the codes of FindingCodes.
func FindingCodeNames() []string {
	out := make([]string, len(FindingCodes))
	for i, c := range FindingCodes {
		out[i] = c.Code
	}
	return out
}

// validateFindings checks expect.findings (node n, nil when absent): known
// codes, none both present and absent, something to check.
func (d *decoder) validateFindings(n *yaml.Node, fe *FindingsExpect) {
	if n == nil || fe == nil {
		return
	}
	if len(fe.Present)+len(fe.Absent) == 0 {
		d.c.Add(n, "expect.findings", "nothing to check", "add present: [retry_after_ignored] or absent: [retry_storm]")
		return
	}
	known := FindingCodeNames()
	fields := mapping(n)
	for _, key := range []string{"present", "absent"} {
		codes := fe.Present
		if key == "absent" {
			codes = fe.Absent
		}
		seq := fields[key]
		for i, c := range codes {
			at := n
			if seq != nil && seq.Kind == yaml.SequenceNode && i < len(seq.Content) {
				at = seq.Content[i]
			}
			path := fmt.Sprintf("expect.findings.%s[%d]", key, i)
			switch {
			case !slices.Contains(known, c):
				hint := "use one of " + strings.Join(known, ", ")
				if m := yamldiag.Closest(c, known); m != "" {
					hint = "did you mean " + m + "? The codes are " + strings.Join(known, ", ")
				}
				d.c.Add(at, path, fmt.Sprintf("unknown finding code %q", c), hint)
			case key == "absent" && slices.Contains(fe.Present, c):
				d.c.Add(at, path, fmt.Sprintf("%s is both present and absent", c), "keep it in one of the two lists")
			}
		}
	}
}
