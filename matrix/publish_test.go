package matrix

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPublishedMatrix: docs/matrix/matrix.json parses and validates, holds
// every client of docs/matrix/manifest.yaml (probed, or with why not), and
// every evidence link of it and of index.html leads to a run folder that
// is there.
func TestPublishedMatrix(t *testing.T) {
	f, err := os.Open("../docs/matrix/matrix.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Read(f)
	if err != nil {
		t.Fatalf("docs/matrix/matrix.json: %v", err)
	}
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
