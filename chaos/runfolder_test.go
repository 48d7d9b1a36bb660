package chaos

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// TestWriteFileAtomicReplacesLinkAndFIFO: a link or FIFO a client left at
// the path of a result file is replaced; the link's target is untouched and
// the write does not block on the FIFO.
func TestWriteFileAtomicReplacesLinkAndFIFO(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "result.json")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "summary.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, fifo} {
		if err := runfolder.WriteFileAtomic(p, []byte("{}\n")); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s after the write: %v, %v; want a regular file, mode 0644", p, fi.Mode(), err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// TestMakeRunSubdirRemovesLink: a link to a folder outside the run folder,
// planted where a scenario's folder (or a re-run's) will be made, is
// removed, so the scenario's files are written inside the run folder.
func TestMakeRunSubdirRemovesLink(t *testing.T) {
	run, outside := t.TempDir(), t.TempDir()
	dir := filepath.Join(run, "next-scenario")
	if err := os.Symlink(outside, dir); err != nil {
		t.Fatal(err)
	}
	if err := runfolder.MakeRunSubdir(dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("%s: %v, %v; want a folder", dir, fi.Mode(), err)
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written outside the run folder: %v", ents)
	}
	if err := runfolder.MakeRunSubdir(dir); err != nil { // a folder already there is fine
		t.Fatal(err)
	}
}

// TestClientLinksDoNotLeadOutOfRunFolder runs a client that plants links at
// its own result.json and at the run folder's summary.json, both to a file
// outside: the run writes its files in place of the links and the file
// outside is left alone.
func TestClientLinksDoNotLeadOutOfRunFolder(t *testing.T) {
	toxi := runnerToxi(t)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sc := parse(t, "planter", `
client:
  command:
    - sh
    - -c
    - |
      d=$(dirname "$RETRYLAB_TRACE")
      ln -sf "`+victim+`" "$d/result.json"
      ln -sf "`+victim+`" "$d/../summary.json"
      ln -sf "`+victim+`" "$d/../junit.xml"
expect: {outcome: success, attempts: 0}
`)
	r := &Runner{Toxi: toxi, Out: t.TempDir(), Seed: 1}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("a file outside the run folder was written through a client's link: %q", b)
	}
	for _, p := range []string{filepath.Join(sum.RunDir, "summary.json"), filepath.Join(sum.RunDir, "planter", "result.json")} {
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v, %v; want the runner's regular file", p, fi.Mode(), err)
		}
	}
}
