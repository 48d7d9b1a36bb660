package profile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/probe"
	"github.com/retrylab/retrylab/report/internal/golden"
)

// probeProfile is the profile golden of package probe: anthropic-node's
// rules as a synthetic journal shows them.
func probeProfile(t *testing.T) *probe.Profile {
	t.Helper()
	p, err := probe.LoadProfile("../../probe/testdata/anthropic-node.profile.json")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProbeRenderersGolden(t *testing.T) {
	// findings: the same profile with findings of two codes, one raised
	// by three experiments, with markup in an evidence.
	withFindings := func(p *probe.Profile) *probe.Profile {
		p.Findings = []probe.Finding{
			{Code: "no_jitter", Attempts: []int{2, 3}, Evidence: "identical waits 1s, 1s across samples", Probe: "exhaust-1"},
			{Code: "no_read_timeout", Attempts: []int{1}, Evidence: "attempt 1 stalled <and> was never given up", Probe: "stall"},
			{Code: "no_jitter", Attempts: []int{2, 3}, Evidence: "identical waits", Probe: "exhaust-2"},
			{Code: "no_jitter", Attempts: []int{2}, Evidence: "identical waits", Probe: "exhaust-3"},
		}
		return p
	}
	for _, tt := range []struct {
		name     string
		findings bool
		render   func(*bytes.Buffer, *probe.Profile) error
	}{
		{"probe/anthropic-node.txt", false, func(b *bytes.Buffer, p *probe.Profile) error { return Table(b, p) }},
		{"probe/anthropic-node.md", false, func(b *bytes.Buffer, p *probe.Profile) error { return Markdown(b, p) }},
		{"probe/anthropic-node.html", false, func(b *bytes.Buffer, p *probe.Profile) error { return HTML(b, p) }},
		{"probe/findings.txt", true, func(b *bytes.Buffer, p *probe.Profile) error { return Table(b, p) }},
		{"probe/findings.md", true, func(b *bytes.Buffer, p *probe.Profile) error { return Markdown(b, p) }},
		{"probe/findings.html", true, func(b *bytes.Buffer, p *probe.Profile) error { return HTML(b, p) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := probeProfile(t)
			if tt.findings {
				p = withFindings(p)
			}
			var b bytes.Buffer
			if err := tt.render(&b, p); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.name, b.Bytes())
		})
	}
}

// TestProbeHTMLChart: one dot per exhaustion wait, the fitted curve and the
// band; a client name with markup is escaped.
func TestProbeHTMLChart(t *testing.T) {
	p := probeProfile(t)
	p.Client = `<script>alert(1)</script>`
	var b bytes.Buffer
	if err := HTML(&b, p); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.Contains(html, "<script>alert") {
		t.Error("the client's name is not escaped")
	}
	waits := 0
	for _, f := range p.Faults {
		if f.Sample > 0 {
			waits += len(f.WaitsMs)
		}
	}
	if got := strings.Count(html, `<circle class="dot"`); got != waits {
		t.Errorf("%d dots, want %d (one per exhaustion wait)", got, waits)
	}
	for _, want := range []string{`class="curve"`, `class="band"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestDurationOf: the probe's wall time, and both ratios when the profile
// says its floor; the longest experiment only when it is not the
// exhaustion.
func TestDurationOf(t *testing.T) {
	tests := []struct {
		name  string
		floor *probe.Floor
		want  string
	}{
		{"offline: no floor", nil, "17.1s"},
		{"an SDK: the hang is the longest experiment",
			&probe.Floor{ExhaustionMs: 1500, ExperimentsMs: 15000, ExperimentsBy: "hang: still running at its deadline, 15s", Ratio: 11.4, ExperimentsRatio: 1.14},
			"17.1s, 11.4× the exhaustion's waits (1.5s), 1.1× the longest experiment's (15.0s: hang: still running at its deadline, 15s)"},
		{"an agent: the exhaustion is", &probe.Floor{ExhaustionMs: 15200, ExperimentsMs: 15200, Ratio: 1.13, ExperimentsRatio: 1.13},
			"17.1s, 1.1× the exhaustion's waits (15.2s)"},
		{"no wait", &probe.Floor{}, "17.1s, the exhaustion waited nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := durationOf(&probe.Profile{DurationMs: 17_100, Floor: tt.floor}); got != tt.want {
				t.Errorf("durationOf = %q, want %q", got, tt.want)
			}
		})
	}
}
