//go:build unix

package battery

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestJournalNotRegular: a server.jsonl that the client replaced by a FIFO
// (the run folder is its sandbox) blocked the probe's read for ever; a
// link to a journal elsewhere was followed. Each gives no attempts, at
// once. The 10 s limit only detects a hang.
func TestJournalNotRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	real := filepath.Join(dir, "real.jsonl")
	line := `{"type":"MockResponse","payload":{"attempt":1,"fault":"ok","status":200}}` + "\n"
	if err := os.WriteFile(real, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, link} {
		done := make(chan int, 1)
		go func() { resps, reqs := journal(path); done <- len(resps) + len(reqs) }()
		select {
		case n := <-done:
			if n != 0 {
				t.Errorf("journal(%s) read %d events, want none", filepath.Base(path), n)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("journal(%s) blocked", filepath.Base(path))
		}
	}
	if resps, _ := journal(real); len(resps) != 1 {
		t.Errorf("journal(a regular file) = %d responses, want 1", len(resps))
	}
}
