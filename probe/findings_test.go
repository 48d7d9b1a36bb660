package probe

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGroupFindings(t *testing.T) {
	t.Parallel()
	f := func(code, probe, ev string) Finding { return Finding{Code: code, Probe: probe, Evidence: ev} }
	cases := []struct {
		name string
		in   []Finding
		want []FindingGroup
	}{
		{"none", nil, nil},
		{"one code over three probes, the first evidence kept",
			[]Finding{f("no_jitter", "a", "first"), f("no_jitter", "b", "second"), f("no_jitter", "c", "third")},
			[]FindingGroup{{Code: "no_jitter", Evidence: "first", Probes: []string{"a", "b", "c"}}}},
		{"codes in the order they first appear",
			[]Finding{f("retry_storm", "x", "e1"), f("no_backoff", "x", "e2"), f("retry_storm", "y", "e3")},
			[]FindingGroup{{Code: "retry_storm", Evidence: "e1", Probes: []string{"x", "y"}}, {Code: "no_backoff", Evidence: "e2", Probes: []string{"x"}}}},
		// Two findings of one code in one experiment (two requests) name it once.
		{"an experiment named once per code",
			[]Finding{f("gave_up_early", "x", "r1"), f("gave_up_early", "x", "r2")},
			[]FindingGroup{{Code: "gave_up_early", Evidence: "r1", Probes: []string{"x"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, GroupFindings(c.in)); diff != "" {
				t.Errorf("GroupFindings() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
