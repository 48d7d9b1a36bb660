package matrix

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/retrylab/retrylab/probe"
)

// TestPublishedMatrix: docs/matrix/matrix.json parses and validates, holds
// every client of docs/matrix/manifest.yaml (probed, or with why not), and
// every evidence link of it and of index.html leads to a run folder that
// is there.
func TestPublishedMatrix(t *testing.T) {
	m := readPublished(t)
	data, err := os.ReadFile("../docs/matrix/manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	man, err := ParseManifest("docs/matrix/manifest.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	probed := 0
	for _, c := range man.Clients {
		e := m.Find(c.Name)
		if e == nil {
			t.Errorf("%s: in the manifest, not in the matrix: regenerate it (docs/matrix.md)", c.Name)
			continue
		}
		if e.Profile != nil {
			probed++
		}
		for probe, dir := range e.Evidence {
			if !safeRel(dir) {
				t.Errorf("%s: evidence of %s is %q, not a path inside docs/matrix", c.Name, probe, dir)
				continue
			}
			if _, err := os.Stat(filepath.Join("../docs/matrix", dir, "result.json")); err != nil {
				t.Errorf("%s: evidence of %s: %v", c.Name, probe, err)
			}
		}
	}
	if probed < 2 {
		t.Errorf("%d clients probed in the published matrix", probed)
	}
}

// TestPublishedMatrixAgreesWithSources is the hand-check made a test: each
// client whose retry policy was read from its source into a preset
// (docs/sdk-clients.md, docs/agents.md: file and function) has, in the
// published matrix, no rule of that preset that its profile contradicts.
// Conformance compares only what the probe claims with high confidence
// (probe.Conform), so a cell the probe could not be sure of is left out,
// not excused: a figure read wrongly at high confidence fails here.
func TestPublishedMatrixAgreesWithSources(t *testing.T) {
	m := readPublished(t)
	own := map[string]string{
		"anthropic-go": "anthropic-go", "openai-go": "openai-go",
		"anthropic-node": "anthropic-node", "openai-node": "openai-node", "openai-node-7": "openai-node-7",
		"anthropic-python": "anthropic-python", "openai-python": "openai-python",
		"anthropic-java": "anthropic-java", "openai-java": "openai-java",
		"vercel-ai-sdk-anthropic": "vercel-ai-sdk", "vercel-ai-sdk-responses": "vercel-ai-sdk",
	}
	checked := 0
	for name, preset := range own {
		e := m.Find(name)
		if e == nil || e.Profile == nil {
			continue // not probed in this matrix: TestPublishedMatrix says so
		}
		rules, holds := 0, 0
		for _, c := range e.Profile.Conformance {
			if c.Preset != preset {
				continue
			}
			rules++
			switch c.State {
			case probe.Differs:
				t.Errorf("%s %s: %s: its source (preset %s) says %s, the published matrix %s", name, e.Version, c.Rule, preset, c.Want, c.Got)
			case probe.Holds:
				holds++
			}
		}
		if rules == 0 {
			t.Errorf("%s: no conformance to its preset %s in the published matrix", name, preset)
		}
		if holds > 0 {
			checked++
		}
	}
	if checked < 5 {
		t.Errorf("%d clients checked against their source, want at least 5", checked)
	}
}

// readPublished reads and validates docs/matrix/matrix.json.
func readPublished(t *testing.T) *Matrix {
	t.Helper()
	f, err := os.Open("../docs/matrix/matrix.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Read(f)
	if err != nil {
		t.Fatalf("docs/matrix/matrix.json: %v", err)
	}
	return m
}
