//go:build unix

package trace

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDiscoverSkipsNonRegular is a regression test: the folder walk took
// a FIFO named *.jsonl (and links to one) as a trace, and opening it hung
// the analysis. They are skipped with a note, never opened.
func TestDiscoverSkipsNonRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mk := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(mk("ok.jsonl"), []byte("{\"type\":\"A\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(mk("fifo.jsonl"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for _, l := range [][2]string{
		{"fifo.jsonl", "to-fifo.jsonl"},
		{"ok.jsonl", "to-ok.jsonl"},
		{"loop-b.jsonl", "loop-a.jsonl"},
		{"loop-a.jsonl", "loop-b.jsonl"},
		{"gone", "dangling.jsonl"},
		{"/dev/null", "null.jsonl"},
	} {
		if err := os.Symlink(l[0], mk(l[1])); err != nil {
			t.Fatal(err)
		}
	}
	notes := map[string]string{}
	got, err := DiscoverNotes([]string{dir}, func(p, reason string) { notes[filepath.Base(p)] = reason })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{mk("ok.jsonl")}, got); diff != "" { // to-ok.jsonl is the same file
		t.Errorf("files mismatch (-want +got):\n%s", diff)
	}
	want := map[string]string{
		"fifo.jsonl":     "skipped: not a regular file (named pipe)",
		"to-fifo.jsonl":  "skipped: symbolic link to a named pipe",
		"loop-a.jsonl":   "skipped: symbolic link loop",
		"loop-b.jsonl":   "skipped: symbolic link loop",
		"dangling.jsonl": "skipped: broken symbolic link",
		"null.jsonl":     "skipped: symbolic link to a character device",
	}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("notes mismatch (-want +got):\n%s", diff)
	}
}

// TestDiscoverSymlinkLoop: a link loop named, or matched by a glob, is a
// clear error, not a hang or a crash.
func TestDiscoverSymlinkLoop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	if err := os.Symlink(b, a); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(a, b); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{a, filepath.Join(dir, "*.jsonl")} {
		_, err := Discover([]string{arg})
		var pe *PathError
		if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "symbolic link loop") {
			t.Errorf("Discover(%q) = %v, want a PathError naming a symbolic link loop", arg, err)
		}
	}
}

// TestDiscoverGlobSkipsFIFO is a regression test: a glob's matches were
// taken as named explicitly, so a FIFO among them was opened and the
// analysis hung. A match that is not a regular file or a folder is skipped
// with a note, as in a folder walk; a glob left with nothing is an error.
func TestDiscoverGlobSkipsFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mk := func(name string) string { return filepath.Join(dir, name) }
	if err := syscall.Mkfifo(mk("a-fifo.jsonl"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := os.WriteFile(mk("b-ok.jsonl"), []byte("{\"type\":\"A\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a-fifo.jsonl", mk("c-to-fifo.jsonl")); err != nil {
		t.Fatal(err)
	}
	notes := map[string]string{}
	got, err := DiscoverNotes([]string{mk("*.jsonl")}, func(p, reason string) { notes[filepath.Base(p)] = reason })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{mk("b-ok.jsonl")}, got); diff != "" {
		t.Errorf("files mismatch (-want +got):\n%s", diff)
	}
	want := map[string]string{
		"a-fifo.jsonl":    "skipped: not a regular file (named pipe)",
		"c-to-fifo.jsonl": "skipped: symbolic link to a named pipe",
	}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("notes mismatch (-want +got):\n%s", diff)
	}

	_, err = Discover([]string{mk("a-*")})
	var pe *PathError
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "named pipe") || pe.Hint() == "" {
		t.Errorf("Discover(a glob matching only a FIFO) = %v, want a PathError with a hint naming the named pipe", err)
	}
	// Named explicitly, the FIFO is taken (bash's <(...) is one).
	if got, err := Discover([]string{mk("a-fifo.jsonl")}); err != nil || len(got) != 1 {
		t.Errorf("Discover(the FIFO named) = %v, %v; want it taken", got, err)
	}
}

// TestDiscoverContextStopsWalk: a walk stops at the first entry after its
// context is done (here cancelled by the note on the first entry), with an
// error wrapping context.Canceled.
func TestDiscoverContextStopsWalk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "a.jsonl"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte("{\"type\":\"A\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got, err := DiscoverContext(ctx, []string{dir}, func(string, string) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("DiscoverContext = %v, %v; want an error wrapping context.Canceled", got, err)
	}
}

// TestDiscoverNamedSocket: a socket named explicitly is a clear error, not
// "no such device or address" from open(2).
func TestDiscoverNamedSocket(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "sock") // short: a socket path is at most ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.jsonl")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("no unix sockets here: %v", err)
	}
	defer l.Close()
	_, err = Discover([]string{path})
	var pe *PathError
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "is a socket") || pe.Hint() == "" {
		t.Errorf("Discover(a socket) = %v, want a PathError with a hint saying it is a socket", err)
	}
}
