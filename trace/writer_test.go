package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// checkLines asserts that every line of path is a whole event and that
// every (writer, seq) pair appears exactly once.
func checkLines(t *testing.T, path string, writers, perWriter int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %d torn: %v: %.80q", n, err, sc.Text())
		}
		var p struct {
			W, Seq int
			Pad    string
		}
		if err := ev.Decode(&p); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		k := fmt.Sprint(p.W, "/", p.Seq)
		if seen[k] {
			t.Fatalf("line %d: duplicate %s", n, k)
		}
		seen[k] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != writers*perWriter {
		t.Fatalf("got %d events, want %d", len(seen), writers*perWriter)
	}
}

// pad makes lines long enough (≈8 KiB) that a torn write would show.
var pad = strings.Repeat("p", 8<<10)

func TestWriterConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	w, err := Create(path, "r")
	if err != nil {
		t.Fatal(err)
	}
	const writers, per = 16, 200
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for s := range per {
				if err := w.Emit("Test", map[string]any{"w": i, "seq": s, "pad": pad}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkLines(t, path, writers, per)
}

// TestWriterConcurrentProcesses re-executes the test binary as child
// processes that all append to one file through their own Writer.
func TestWriterConcurrentProcesses(t *testing.T) {
	t.Parallel()
	if path := os.Getenv("RETRYLAB_WRITER_CHILD_FILE"); path != "" {
		id, _ := strconv.Atoi(os.Getenv("RETRYLAB_WRITER_CHILD_ID"))
		w, err := Create(path, "child")
		if err != nil {
			t.Fatal(err)
		}
		for s := range 300 {
			if err := w.Emit("Test", map[string]any{"w": id, "seq": s, "pad": pad}); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		return
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	const procs = 6
	var cmds []*exec.Cmd
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriterConcurrentProcesses$")
		cmd.Env = append(os.Environ(), "RETRYLAB_WRITER_CHILD_FILE="+path, "RETRYLAB_WRITER_CHILD_ID="+strconv.Itoa(i))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	checkLines(t, path, procs, 300)
}
