package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/retry/provider"
)

// Secrets is the set of exact key values the mock saw a scenario's client
// send, plus FakeAPIKey. A hidden external client may send a key that does
// not look like sk-...; every run file of the scenario is scrubbed of them,
// in every form provider.RedactExact knows (plain, JSON-escaped,
// percent-encoded).
type Secrets struct {
	mu   sync.Mutex
	keys []string
	m    *provider.Matcher // compiled keys; rebuilt by add
}

func NewSecrets() *Secrets {
	return &Secrets{keys: []string{FakeAPIKey}, m: provider.NewMatcher([]string{FakeAPIKey})}
}

// maxLearntKeys bounds the keys learnt in a scenario (each makes every
// scrub slower); a client sending more distinct ones is not a client.
const maxLearntKeys = 64

// Add learns k. Values shorter than provider.MinSecretLen or longer than
// provider.MaxSecretLen are not keys (see RedactExact) and are ignored, and
// so is any key past the first maxLearntKeys.
func (s *Secrets) Add(k string) {
	if s == nil || len(k) < provider.MinSecretLen || len(k) > provider.MaxSecretLen {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.keys) <= maxLearntKeys && !slices.Contains(s.keys, k) {
		s.keys = append(s.keys, k)
		s.m = provider.NewMatcher(s.keys)
	}
}

func (s *Secrets) list() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.keys)
}

func (s *Secrets) matcher() *provider.Matcher {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m
}

// Scrub removes the known keys and anything that looks like a key from t.
func (s *Secrets) Scrub(t string) string { return s.matcher().Redact(t) }

// ScrubDir rewrites every regular file under dir with the known keys and
// anything that looks like a key removed, streaming (see ScrubFile).
// Compressed files (.gz) are left alone, and so is anything else a client
// may have left: symbolic links (never followed, to a file or a folder),
// FIFOs, sockets, devices. Run folders are the client's sandbox: nothing
// outside them is read or written because of what it put there.
func (s *Secrets) ScrubDir(dir string) error {
	var errs []error
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		// WalkDir reports a link as a link (it does not follow it).
		if !d.Type().IsRegular() || strings.HasSuffix(path, ".gz") {
			return nil
		}
		if err := ScrubFile(path, s); err != nil && !errors.As(err, new(*runfolder.NotRegularError)) {
			errs = append(errs, err)
		}
		return nil
	})
	return errors.Join(append(errs, err)...)
}

// RedactTrace rewrites the trace an external client wrote with API keys
// redacted, as its stdout and stderr are: no run file may hold a key. A
// missing trace is fine, and so is one that is not a regular file (a link,
// a FIFO: it is not read, and ReadTrace says so). (The runner scrubs the
// whole run folder again at the end, with every key the mock saw.)
func RedactTrace(path string, sec *Secrets) error {
	err := ScrubFile(path, sec)
	if errors.Is(err, os.ErrNotExist) || errors.As(err, new(*runfolder.NotRegularError)) {
		return nil
	}
	return err
}

// ScrubFile rewrites the regular file at path with keys redacted (sec nil:
// provider.Redact), streaming: it is read a block at a time and scrubbed a
// line at a time (long lines in pieces, see scrubStream) into a temporary
// file in the same folder, which then replaces it. Memory stays bounded
// whatever the file's size; a file with nothing to redact is not rewritten.
func ScrubFile(path string, sec *Secrets) error {
	in, err := runfolder.OpenRunFile(path)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".scrub-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	s := &scrubStream{w: tmp, sec: sec}
	_, err = io.Copy(s, in)
	if err == nil {
		err = s.Close()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil || !s.changed {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	// rename replaces path itself, never what it may have become since.
	return os.Rename(tmp.Name(), path)
}

// Bounds of scrubStream.
const (
	// scrubChunk is the most of a line without a newline held back: past
	// it, the line is written in pieces.
	scrubChunk = 64 << 10
	// scrubTail is the least a piece leaves held back, so that a header
	// with its key (x-api-key: ..., sk-...) shorter than this, and a learnt
	// key in any of its forms, is whole in what is held when a cut is made:
	// a cut never falls inside one.
	scrubTail = 4 << 10
	// MaxKeptOutput is how much of each output stream of an external
	// client (stdout.txt, stderr.txt) is kept; the rest is read and
	// counted, and a "...truncated N bytes" line ends the file.
	MaxKeptOutput = 64 << 20
)

// scrubStream writes what is written to it to w with keys redacted, in
// time linear in its size and with bounded memory. Text is written at
// newlines (at most one write's worth at a time); a partial line longer
// than scrubChunk is cut, scrubTail or more from its end, at a place
// outside every match of a key pattern or a learnt key (so that a key is
// never split into two pieces that each escape the scrub).
type scrubStream struct {
	w       io.Writer
	sec     *Secrets            // learnt keys; nil: scrub (or provider.Redact)
	scrub   func(string) string // used when sec is nil
	limit   int64               // input kept; 0: no limit
	pending []byte
	in      int64 // input bytes kept
	dropped int64 // input bytes past limit
	last    byte  // last byte written
	changed bool  // the scrub changed something
	err     error
}

func (s *scrubStream) clean(t string) string {
	switch {
	case s.sec != nil:
		return s.sec.Scrub(t)
	case s.scrub != nil:
		return s.scrub(t)
	}
	return provider.Redact(t)
}

func (s *scrubStream) Write(p []byte) (int, error) {
	n := len(p)
	if s.err != nil {
		return 0, s.err
	}
	full := false
	if s.limit > 0 {
		room := s.limit - s.in
		if int64(len(p)) >= room {
			if s.in < s.limit {
				full = true
			}
			s.dropped += int64(len(p)) - max(room, 0)
			p = p[:max(room, 0)]
		}
	}
	s.in += int64(len(p))
	s.pending = append(s.pending, p...)
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		s.emit(len(s.pending) - (len(p) - i - 1))
	}
	for s.err == nil && len(s.pending) > scrubChunk {
		s.emit(s.cut(len(s.pending)-s.tail(), false))
	}
	if full && s.err == nil {
		// The limit is reached: a partial line is kept up to where a cut
		// is safe, and the rest counted as dropped.
		k := s.capCut()
		s.dropped += int64(len(s.pending) - k)
		s.emit(k)
		s.pending = s.pending[:0]
	}
	if s.err != nil {
		return 0, s.err
	}
	return n, nil
}

// tail is how much a cut leaves held back.
func (s *scrubStream) tail() int {
	return min(max(scrubTail, s.sec.matcher().MaxMatchLen()), scrubChunk/2)
}

// cut returns where to cut s.pending at or before limit: the latest place
// outside every match of a key pattern or learnt key, found in all of
// s.pending (atEnd: a match ending at limit counts as holding it, since
// what follows may continue it). A match reaching the start (a "key"
// longer than scrubChunk) cannot be avoided: then limit.
func (s *scrubStream) cut(limit int, atEnd bool) int {
	spans := s.sec.matcher().Spans(string(s.pending))
	if s.sec == nil && s.scrub != nil {
		spans = provider.NewMatcher(nil).Spans(string(s.pending))
	}
	if len(spans) == 0 {
		return limit
	}
	holds := func(sp [2]int, p int) bool { return sp[0] < p && (p < sp[1] || atEnd && p == sp[1]) }
	// Move left past every match holding the cut, until none does.
	sort.Slice(spans, func(i, j int) bool { return spans[i][1] > spans[j][1] })
	p := limit
	for moved := true; moved && p > 0; {
		moved = false
		for _, sp := range spans {
			if holds(sp, p) {
				p, moved = sp[0], true
			}
		}
	}
	if p == 0 && !atEnd {
		return limit
	}
	return p
}

// capCut returns how much of s.pending (the start of a partial line) to
// keep when the limit is reached: up to a safe cut (see cut), less its last
// word if the cut is inside it (it may be a key cut short, which no pattern
// matches) and it is shorter than the tail, else less the tail.
func (s *scrubStream) capCut() int {
	k := s.cut(len(s.pending), true)
	if k < len(s.pending) && bytes.IndexByte([]byte(" \t\r\n"), s.pending[k]) >= 0 {
		return k // the last word is whole
	}
	j := bytes.LastIndexAny(s.pending[:k], " \t\r\n") + 1
	if k-j <= s.tail() {
		return j
	}
	return k - s.tail()
}

// emit writes the first k bytes of s.pending, scrubbed, and drops them.
func (s *scrubStream) emit(k int) {
	if k <= 0 || s.err != nil {
		return
	}
	raw := string(s.pending[:k])
	out := s.clean(raw)
	if out != raw {
		s.changed = true
	}
	if out != "" {
		_, s.err = io.WriteString(s.w, out)
		s.last = out[len(out)-1]
	}
	s.pending = s.pending[:copy(s.pending, s.pending[k:])]
}

// Close writes what is held, then the truncation note if input was dropped.
func (s *scrubStream) Close() error {
	s.emit(len(s.pending))
	if s.dropped > 0 && s.err == nil {
		nl := ""
		if s.last != '\n' && s.in > 0 {
			nl = "\n"
		}
		_, s.err = fmt.Fprintf(s.w, "%s...truncated %d bytes (retrylab keeps the first %d MiB of each output stream)\n", nl, s.dropped, s.limit>>20)
	}
	return s.err
}

// RedactFile is an output file of a run folder whose lines have API keys
// redacted (see scrubStream), created on first write, so a silent client
// leaves an empty file. A link or special file a client put in its place is
// replaced, never followed.
type RedactFile struct {
	mu    sync.Mutex
	Path  string
	f     *os.File
	Scrub func(string) string // nil: sec, or provider.Redact
	Sec   *Secrets            // learnt keys, matched also across cuts
	Limit int64               // input kept (see scrubStream); 0: all
	s     *scrubStream
}

func (w *RedactFile) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.open(); err != nil {
		return 0, err
	}
	return w.s.Write(p)
}

func (w *RedactFile) open() error {
	if w.s != nil {
		return nil
	}
	f, err := runfolder.CreateRunFile(w.Path)
	if err != nil {
		return err
	}
	w.f = f
	w.s = &scrubStream{w: f, sec: w.Sec, scrub: w.Scrub, limit: w.Limit}
	return nil
}

// Close writes what is left and closes the file (creating it if empty).
func (w *RedactFile) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.open()
	if err == nil {
		err = w.s.Close()
	}
	if w.f != nil {
		if cerr := w.f.Close(); err == nil {
			err = cerr
		}
		w.f = nil
	}
	return err
}

// RedactSecrets removes anything that looks like an API key from s.
func RedactSecrets(s string) string { return provider.Redact(s) }

// FakeAPIKey is the API key every client under test is given. It is not a
// real key; the runner proves that it never reaches a run file.
const FakeAPIKey = "sk-retrylab-test-0000"
