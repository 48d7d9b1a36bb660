package trace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDiscoverDedupes is a regression test: "f" and "./f" were two files,
// so every event of f was counted twice and f made two runs.
func TestDiscoverDedupes(t *testing.T) {
	t.Parallel()
	const f = "testdata/corpus/run2/trace.jsonl"
	abs, err := filepath.Abs(f)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Symlink(abs, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{"same spelling twice", []string{f, f}, []string{f}},
		{"dot slash", []string{f, "./" + f}, []string{f}},
		{"absolute", []string{"./" + f, abs}, []string{"./" + f}},
		{"symlink", []string{link, f}, []string{link}},
		{"folder then file", []string{"testdata/corpus/run2", f}, []string{filepath.FromSlash(f)}},
		{"glob then file", []string{"testdata/corpus/run*/trace.jsonl", "./" + f}, []string{
			filepath.FromSlash("testdata/corpus/run1/trace.jsonl"), filepath.FromSlash(f)}},
		{"stdin twice", []string{StdinName, StdinName}, []string{StdinName}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Discover(tt.paths)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Discover(%q) mismatch (-want +got):\n%s", tt.paths, diff)
			}
		})
	}
}

// TestDiscoverDanglingSymlink is a regression test: a link whose target is
// gone, named or matched by a glob, was tried as a glob that matched the
// link itself, until the stack overflowed.
func TestDiscoverDanglingSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(dir, "x.jsonl")
	if err := os.Symlink(filepath.Join(dir, "gone"), link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	for _, arg := range []string{link, filepath.Join(dir, "*.jsonl")} {
		_, err := Discover([]string{arg})
		var pe *PathError
		if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "broken symbolic link") {
			t.Errorf("Discover(%q) = %v, want a PathError naming a broken symbolic link", arg, err)
		}
	}
}

// TestDiscoverSkipsClientHome: the HOME chaos run gives an external client
// in its scenario folder holds the agent's own JSONL (session files), not
// traces; a folder named home elsewhere, or given itself, is walked.
func TestDiscoverSkipsClientHome(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(rel string) string {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("run/s1/result.json")
	server := write("run/s1/server.jsonl")
	tr := write("run/s1/trace.jsonl")
	write("run/s1/home/.claude/projects/x/session.jsonl")
	write("run/s1/home/.codex/sessions/rollout.jsonl")
	other := write("fleet/home/trace.jsonl") // no scenario beside it
	tests := []struct {
		path string
		want []string
	}{
		{filepath.Join(root, "run"), []string{server, tr}},
		{filepath.Join(root, "fleet"), []string{other}},
		{filepath.Join(root, "run/s1/home/.codex"), []string{filepath.Join(root, "run/s1/home/.codex/sessions/rollout.jsonl")}},
	}
	for _, tt := range tests {
		got, err := Discover([]string{tt.path})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Discover(%s) mismatch (-want +got):\n%s", tt.path, diff)
		}
	}
}
