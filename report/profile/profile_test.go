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
	p := probeProfile(t)
	for _, tt := range []struct {
		name   string
		render func(*bytes.Buffer, *probe.Profile) error
	}{
		{"probe/anthropic-node.txt", func(b *bytes.Buffer, p *probe.Profile) error { return Table(b, p) }},
		{"probe/anthropic-node.md", func(b *bytes.Buffer, p *probe.Profile) error { return Markdown(b, p) }},
		{"probe/anthropic-node.html", func(b *bytes.Buffer, p *probe.Profile) error { return HTML(b, p) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
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
