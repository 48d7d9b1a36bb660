package matrix

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/probe"
)

// fixtureMatrix is two probed clients, one changed against an earlier
// matrix, and one that could not be probed.
func fixtureMatrix(t *testing.T) *Matrix {
	base := loadFixture(t)
	newer := clone(t, base)
	newer.Policy.RetryAfter.Seconds = ptr(false)
	newer.Policy.MaxRetries = ptr(4)
	// Probed by a retrylab whose battery had no truncated, malformed or
	// stalled stream: those cells are not probed.
	stale := func(f probe.FaultResult) bool {
		return f.Fault == "truncated" || f.Fault == "malformed" || f.Fault == "keepalive stall"
	}
	newer.Faults = slices.DeleteFunc(newer.Faults, stale)
	older := clone(t, base)
	older.Faults = slices.DeleteFunc(older.Faults, stale)
	newer.Findings = []probe.Finding{{Code: "retry_after_ignored", Probe: "probe-429-retry-after-3", Attempts: []int{2}, Evidence: "waited 512ms after Retry-After: 3"}}
	ev := map[string]string{"probe-429": "runs/x/2026-01-01T00-00-00Z/probe-429", "probe-400": "runs/x/r/probe-400",
		"probe-exhaust-1": "runs/x/r/probe-exhaust-1", "probe-bad": "../../etc/passwd"}
	old := &Matrix{Schema: Schema, Retrylab: "v1", Clients: []Entry{
		{Name: "anthropic-node", Version: "1.0", Provider: "anthropic", Profile: clone(t, base)},
		{Name: "sdk-b", Version: "2.0", Provider: "anthropic", Profile: older},
	}}
	m := &Matrix{Schema: Schema, Retrylab: "v2", Clients: []Entry{
		{Name: "anthropic-node", Version: "1.0", Provider: "anthropic", Profile: clone(t, base), Evidence: ev, WallMs: 24_100},
		{Name: "sdk-b", Version: "2.1", Provider: "anthropic", Profile: newer, Evidence: map[string]string{"probe-429-retry-after-3": "runs/sdk-b/r/probe-429-retry-after-3"}},
		{Name: "missing", Version: "unknown", Provider: "openai", Error: "the client needs testdata/x <script> (npm ci)"},
	}, Against: "old/matrix.json"}
	Diff(old, m)
	return m
}

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, fixtureMatrix(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "matrix.md", b.Bytes())
	s := b.String()
	for _, want := range []string{"Δ [no](runs/sdk-b/r/probe-429-retry-after-3/result.json)", "| not probed |", "(runs/x/2026-01-01T00-00-00Z/probe-429/result.json)",
		"Δ `retryAfter.seconds`: yes → no", "&lt;script&gt;"} {
		if !strings.Contains(s, want) {
			t.Errorf("matrix.md lacks %q", want)
		}
	}
	if strings.Contains(s, "etc/passwd") || strings.Contains(s, "<script>") {
		t.Error("matrix.md carries a hostile path or HTML")
	}
}

func TestHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, fixtureMatrix(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "index.html", b.Bytes())
	s := b.String()
	for _, want := range []string{`data-provider="openai"`, `class="s-not-probed`, `changed`, `href="runs/x/2026-01-01T00-00-00Z/probe-429/result.json"`,
		`<option value="retryAfter.seconds:no">`, `&lt;script&gt;`} {
		if !strings.Contains(s, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	for _, bad := range []string{"etc/passwd", "<script> (npm", "http://", "https://"} {
		if strings.Contains(s, bad) {
			t.Errorf("index.html carries %q (hostile path, raw HTML, or a request that leaves the page)", bad)
		}
	}
}

// TestRowCells: the cells of the anthropic-node profile say what its
// source says (docs/probe.md), and what the battery does not measure says
// so.
func TestRowCells(t *testing.T) {
	cells := map[string]Cell{}
	for _, c := range Row(loadFixture(t)) {
		cells[c.Key] = c
	}
	want := map[string]string{
		"retried.4xx": "no", "retried.408": "yes", "retried.429": "yes", "retried.5xx": "yes", "retried.529": "yes",
		"retried.streamError": "no", "retried.cutStream": "no", "retried.reset": "yes",
		"retried.truncated": "no", "retried.malformed": "no", "retried.keepaliveStall": "unknown",
		"maxRetries": "2", "backoff.initialMs": "500ms", "backoff.multiplier": "×2", "backoff.maxMs": "not reached",
		"retryAfter.seconds": "yes", "retryAfter.ms": "yes", "retryAfter.httpDate": "yes", "xShouldRetry": "obeyed",
		"hangTimeoutMs": "unknown", "fallback": "none seen", "survivesOutageMs.drop": "0ms",
	}
	for k, w := range want {
		if got := cells[k].Text; got != w {
			t.Errorf("%s: %q, want %q (basis %q)", k, got, w, cells[k].Basis)
		}
	}
	if c := cells["hangTimeoutMs"]; c.State != Unknown || !strings.Contains(c.Basis, "still waiting") {
		t.Errorf("hang timeout: %+v: an unknown figure says why", c)
	}
	if c := cells["retried.429"]; c.Confidence != probe.High || !strings.Contains(c.Basis, "429: 2 attempt(s), waits") || len(c.Probes) != 1 || c.Probes[0] != "probe-429" {
		t.Errorf("retried.429: %+v: a decision cell carries the journal's excerpt and its probe", c)
	}
	if len(cells) != len(Columns) {
		t.Errorf("%d cells for %d columns", len(cells), len(Columns))
	}
}

// TestFloorNote: the probe's wall time against the floor the client's
// waits impose, as the Markdown and the page say it beside "probed in".
func TestFloorNote(t *testing.T) {
	tests := []struct {
		name  string
		floor *probe.Floor
		want  string
	}{
		{"no floor in the profile", nil, ""},
		{"both", &probe.Floor{ExhaustionMs: 1571, ExperimentsMs: 88089, Ratio: 62.1, ExperimentsRatio: 1.11},
			" (62.1× its exhaustion's waits of 1.6s; 1.1× its longest experiment, 88.1s)"},
		{"the exhaustion is the longest", &probe.Floor{ExhaustionMs: 15200, ExperimentsMs: 15200, Ratio: 2.12, ExperimentsRatio: 2.12},
			" (2.1× its exhaustion's waits of 15.2s)"},
		{"no wait", &probe.Floor{}, " (its exhaustion waited nothing)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Entry{Profile: &probe.Profile{Floor: tt.floor}}
			if got := e.floorNote(); got != tt.want {
				t.Errorf("floorNote = %q, want %q", got, tt.want)
			}
		})
	}
	if got := (&Entry{}).floorNote(); got != "" {
		t.Errorf("floorNote without a profile = %q", got)
	}
}
