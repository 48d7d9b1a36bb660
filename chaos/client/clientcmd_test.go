package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResolveArgs: relative paths in client.command are found next to the
// scenario file when they are not in the current folder.
func TestResolveArgs(t *testing.T) {
	dir := t.TempDir()
	scDir := filepath.Join(dir, "suite")
	if err := os.MkdirAll(filepath.Join(scDir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"client.py", "bin/run.sh"} {
		if err := os.WriteFile(filepath.Join(scDir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	if err := os.WriteFile("here.py", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	scFile := filepath.Join("suite", "sc.yaml")
	for _, tc := range []struct {
		args, want []string
	}{
		{[]string{"python3", "client.py"}, []string{"python3", filepath.Join("suite", "client.py")}},
		{[]string{"python3", "here.py", "--flag", "missing.py"}, []string{"python3", "here.py", "--flag", "missing.py"}},
		{[]string{"bin/run.sh", "-v"}, []string{filepath.Join("suite", "bin", "run.sh"), "-v"}},
		{[]string{"client.py"}, []string{"client.py"}}, // a bare program name is looked up in PATH
		{[]string{"python3", "/abs/client.py"}, []string{"python3", "/abs/client.py"}},
	} {
		if diff := cmp.Diff(tc.want, resolveArgs(tc.args, scFile)); diff != "" {
			t.Errorf("resolveArgs(%q) (-want +got):\n%s", tc.args, diff)
		}
	}
}
