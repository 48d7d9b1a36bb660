package chaos

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/retrylab/retrylab/retry/provider"
)

// secrets is the set of exact key values the mock saw a scenario's client
// send, plus FakeAPIKey. A hidden external client may send a key that does
// not look like sk-...; every run file of the scenario is scrubbed of them.
type secrets struct {
	mu   sync.Mutex
	keys []string
}

func newSecrets() *secrets { return &secrets{keys: []string{FakeAPIKey}} }

func (s *secrets) add(k string) {
	if s == nil || len(k) < provider.MinSecretLen {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.keys, k) {
		s.keys = append(s.keys, k)
	}
}

func (s *secrets) list() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.keys)
}

// scrub removes the known keys and anything that looks like a key from t.
func (s *secrets) scrub(t string) string { return provider.RedactExact(t, s.list()) }

// scrubDir rewrites every file under dir with the known keys and anything
// that looks like a key removed. Compressed files (.gz) are left alone.
func (s *secrets) scrubDir(dir string) error {
	var errs []error
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		if d.IsDir() || strings.HasSuffix(path, ".gz") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		if r := s.scrub(string(b)); r != string(b) {
			if err := os.WriteFile(path, []byte(r), 0o644); err != nil {
				errs = append(errs, err)
			}
		}
		return nil
	})
	return errors.Join(append(errs, err)...)
}

// scrubResult removes the known keys from every string of res that a client
// could have influenced. The scenario's name, file and run folder are the
// user's own paths and are left as they are (a run folder must stay findable).
func (s *secrets) scrubResult(res *Result) {
	for _, p := range []*string{&res.Description, &res.Outcome, &res.Client, &res.Error} {
		*p = s.scrub(*p)
	}
	for i := range res.FailureTypes {
		res.FailureTypes[i] = s.scrub(res.FailureTypes[i])
	}
	for i := range res.Faults {
		res.Faults[i] = s.scrub(res.Faults[i])
	}
	for i := range res.Checks {
		c := &res.Checks[i]
		c.Name, c.Want, c.Got, c.Where = s.scrub(c.Name), s.scrub(c.Want), s.scrub(c.Got), s.scrub(c.Where)
	}
	for i := range res.Escalations {
		e := &res.Escalations[i]
		e.From, e.To, e.Reason = s.scrub(e.From), s.scrub(e.To), s.scrub(e.Reason)
	}
}

// redactTrace rewrites the trace an external client wrote with API keys
// redacted, as its stdout and stderr are: no run file may hold a key. A
// missing trace is fine. (The runner scrubs the whole run folder again at
// the end, with every key the mock saw.)
func redactTrace(path string, scrub func(string) string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if r := scrub(string(b)); r != string(b) {
		return os.WriteFile(path, []byte(r), 0o644)
	}
	return nil
}

// redactFile is an output file whose lines have API keys redacted. It is
// created on first write, so a silent client leaves an empty file. Output is
// written at newlines only (and at Close), so that a key is never split
// across two writes and missed.
type redactFile struct {
	mu    sync.Mutex
	path  string
	f     *os.File
	buf   []byte
	scrub func(string) string // nil: redact
}

func (w *redactFile) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	i := bytes.LastIndexByte(w.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	if err := w.flush(w.buf[:i+1]); err != nil {
		return 0, err
	}
	w.buf = append([]byte(nil), w.buf[i+1:]...)
	return len(p), nil
}

func (w *redactFile) flush(b []byte) error {
	if w.f == nil {
		f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		w.f = f
	}
	clean := provider.Redact
	if w.scrub != nil {
		clean = w.scrub
	}
	_, err := w.f.WriteString(clean(string(b)))
	return err
}

// Close writes what is left and closes the file (creating it if empty).
func (w *redactFile) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.flush(w.buf)
	w.buf = nil
	if w.f != nil {
		if cerr := w.f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
