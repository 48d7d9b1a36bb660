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
