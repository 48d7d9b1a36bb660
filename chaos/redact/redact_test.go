package redact

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/retry/provider"
)

// TestScrubStreamKeyNeverSplit is the regression test for keys split by a
// cut in a long line: whatever the line's length, the place of the key and
// the sizes of the writes, the streamed output equals the scrub of the whole.
func TestScrubStreamKeyNeverSplit(t *testing.T) {
	t.Parallel()
	sec := NewSecrets()
	key := "AKIA-learnt-key-0123456789"
	sec.Add(key)
	rng := rand.New(rand.NewPCG(1, 2))
	forms := []string{key, `\u0041KIA-learnt-key-0123456789`, "AKIA%2Dlearnt-key-0123456789", "x-api-key: hdr-value-" + strings.Repeat("v", 300), "sk-" + strings.Repeat("s", 100), "Authorization: Bearer tok"}
	// A key across the first cut, in each form, at each offset around it.
	var cases []string
	for _, f := range forms {
		for _, off := range []int{1, 3, len(f) / 2, len(f) - 1} {
			const total = scrubChunk + 100
			limit := total - max(scrubTail, sec.matcher().MaxMatchLen())
			in := strings.Repeat("a", limit-off) + " " + f + " "
			cases = append(cases, in+strings.Repeat("b", total-len(in)))
		}
	}
	for i, in := range cases {
		want := sec.Scrub(in)
		var out bytes.Buffer
		s := &scrubStream{w: &out, sec: sec}
		if _, err := s.Write([]byte(in)); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != want {
			t.Errorf("key across the cut, case %d: streamed scrub differs from the whole's", i)
		}
	}
	for i := range 10 {
		// Lines up to a few chunks long, the keys anywhere.
		var in strings.Builder
		n := scrubChunk/2 + rng.IntN(2*scrubChunk)
		for in.Len() < n {
			switch r := rng.IntN(100); {
			case r < 3:
				in.WriteString(forms[rng.IntN(len(forms))])
			case r < 4:
				in.WriteByte('\n')
			case r < 10:
				in.WriteByte(' ')
			default:
				in.WriteString(strings.Repeat("a", rng.IntN(500)))
			}
		}
		want := sec.Scrub(in.String())
		var out bytes.Buffer
		s := &scrubStream{w: &out, sec: sec}
		b := []byte(in.String())
		for len(b) > 0 {
			k := min(len(b), 1+rng.IntN(9000))
			if _, err := s.Write(b[:k]); err != nil {
				t.Fatal(err)
			}
			b = b[k:]
			if len(s.pending) > scrubChunk+9000 {
				t.Fatalf("case %d: %d bytes held, want at most %d", i, len(s.pending), scrubChunk+9000)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != want {
			t.Fatalf("case %d: streamed scrub differs from the whole's (len %d vs %d); key left: %v", i, len(got), len(want), strings.Contains(got, key))
		}
	}
}

// TestRedactFileLongLineBounded is the regression test for the output
// writer that rescanned its growing buffer on every write (64 MB without a
// newline took 36 s) and held the whole line: what it holds stays bounded.
func TestRedactFileLongLineBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := &RedactFile{Path: filepath.Join(dir, "stdout.txt"), Sec: NewSecrets(), Limit: MaxKeptOutput}
	chunk := bytes.Repeat([]byte("a"), 32<<10)
	held := 0
	for range 256 { // 8 MiB, no newline
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
		held = max(held, cap(w.s.pending))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if held > 2*(scrubChunk+len(chunk)) {
		t.Errorf("held up to %d bytes, want about %d", held, scrubChunk+len(chunk))
	}
	if fi, err := os.Stat(w.Path); err != nil || fi.Size() != 256*int64(len(chunk)) {
		t.Errorf("stdout.txt: %v, %v; want %d bytes", fi, err, 256*len(chunk))
	}
}

// TestRedactFileCapTruncates checks the cap on kept output: the first bytes
// are kept, cut at a safe place, and a last line says how many were not.
func TestRedactFileCapTruncates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		// The last word, cut short at the limit, is dropped: it could be
		// the start of a key.
		{"lines", []string{"0123456789\n", "0123456789\n", "abc\n"}, "0123456789\n...truncated 15 bytes (retrylab keeps the first 0 MiB of each output stream)\n"},
		{"exact", []string{"0123456789\n0123456789\n"}, "0123456789\n...truncated 11 bytes (retrylab keeps the first 0 MiB of each output stream)\n"},
		{"under", []string{"short\n"}, "short\n"},
		{"words", []string{"0123456789\n0123 567 9012"}, "0123456789\n0123 567 \n...truncated 4 bytes (retrylab keeps the first 0 MiB of each output stream)\n"},
		// A key across the limit is not kept in part: the cut goes
		// before it.
		{"key", []string{"0123 sk-abcdefghijklmno"}, "0123\n...truncated 19 bytes (retrylab keeps the first 0 MiB of each output stream)\n"},
		{"after", []string{"0123456789\n01234567\n", "more\n"}, "0123456789\n01234567\n...truncated 5 bytes (retrylab keeps the first 0 MiB of each output stream)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &RedactFile{Path: filepath.Join(t.TempDir(), "out.txt"), Limit: 20}
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(w.Path); string(b) != tc.want {
				t.Errorf("got %q, want %q", b, tc.want)
			}
		})
	}
}

// outside returns a file outside any run folder holding a key, and a check
// that it is unchanged.
func outside(t *testing.T) (string, func()) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "home-file")
	content := "x-api-key: sk-outside-secret-1234\n"
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, func() {
		t.Helper()
		if b, err := os.ReadFile(p); err != nil || string(b) != content {
			t.Errorf("the file outside the run folder was changed: %q, %v", b, err)
		}
	}
}

// TestScrubDirSymlinkNotFollowed is the regression test for a client that
// replaced its trace by a link to a file in the user's home: the scrubber
// rewrote the link's target. Links (to files and folders) and FIFOs are
// left alone, not read.
func TestScrubDirSymlinkNotFollowed(t *testing.T) {
	t.Parallel()
	target, unchanged := outside(t)
	dir := t.TempDir()
	for name, old := range map[string]string{"trace.jsonl": target, "sub": filepath.Dir(target)} {
		if err := os.Symlink(old, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stdout.txt"), []byte("key sk-inside-secret-1234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sec := NewSecrets()
	if err := sec.ScrubDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := RedactTrace(filepath.Join(dir, "trace.jsonl"), sec); err != nil {
		t.Fatal(err)
	}
	unchanged()
	if b, _ := os.ReadFile(filepath.Join(dir, "stdout.txt")); string(b) != "key sk-***\n" {
		t.Errorf("stdout.txt = %q, want it scrubbed", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "trace.jsonl")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("trace.jsonl: %v, %v; want the link left as it is", fi, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 4 {
		t.Errorf("run folder holds %v, want only what was there", ents)
	}
}

// TestReadTraceSpecialFiles is the regression test for a client that made
// its trace a FIFO (chaos run hung for ever, past Ctrl-C) or a link (its
// target was read): neither is opened, and the note says why.
func TestReadTraceSpecialFiles(t *testing.T) {
	t.Parallel()
	target, _ := outside(t)
	for _, tc := range []struct {
		name string
		make func(p string) error
		want string
	}{
		{"symlink", func(p string) error { return os.Symlink(target, p) }, "trace.jsonl is a symbolic link: not read"},
		{"dangling", func(p string) error { return os.Symlink(p+".missing", p) }, "trace.jsonl is a symbolic link: not read"},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "trace.jsonl is a FIFO: not read"},
		{"folder", func(p string) error { return os.Mkdir(p, 0o755) }, "trace.jsonl is a folder: not read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "trace.jsonl")
			if err := tc.make(p); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				evs, _, err := runfolder.ReadTrace(p)
				if len(evs) > 0 {
					err = errors.New("events read")
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || err.Error() != tc.want {
					t.Errorf("readTrace: %v, want %q", err, tc.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("readTrace blocked")
			}
		})
	}
}

// TestRedactFilePlantedLink checks that an output file a client replaced by
// a link before the first write is replaced, not written through.
func TestRedactFilePlantedLink(t *testing.T) {
	t.Parallel()
	target, unchanged := outside(t)
	dir := t.TempDir()
	for _, name := range []string{"stdout.txt", "stderr.txt"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "mock.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stdout.txt", "stderr.txt", "mock.log"} {
		w := &RedactFile{Path: filepath.Join(dir, name)}
		if name != "stderr.txt" {
			if _, err := w.Write([]byte("hello\n")); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(w.Path); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v, %v; want a regular file", name, fi, err)
		}
	}
	unchanged()
}

// TestSecretsLearntBounds: values too short or too long to be keys are not
// learnt (too long ones would make every cut hold back too much).
func TestSecretsLearntBounds(t *testing.T) {
	t.Parallel()
	sec := NewSecrets()
	for _, k := range []string{"short", strings.Repeat("k", provider.MaxSecretLen+1), "just-right-key"} {
		sec.Add(k)
	}
	if got := sec.list(); len(got) != 2 || got[1] != "just-right-key" {
		t.Errorf("learnt %q", got)
	}
}
