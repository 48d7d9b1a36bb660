package errreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/retrylab/retrylab/internal/regfile"
)

// DefaultRegistrySize is how many reports an ErrorRegistry keeps (seed 001:
// "ring buffer, max 100 entries").
const DefaultRegistrySize = 100

// RegistrySchema names the registry file's format.
const RegistrySchema = "retrylab.errors/v1"

// ErrorRegistry keeps the last reports of requests given up on in one JSON
// file (seed 001's ErrorRegistry). Every change rewrites the file atomically
// (a temporary file in the same folder, synced, then renamed over it), under
// a lock that other processes respect too (flock on unix), so concurrent
// writers lose nothing and a reader never sees half a file. A temporary
// file left by a writer that died before its rename is ignored by readers
// and removed by the next writer.
type ErrorRegistry struct {
	path string
	size int
	mu   sync.Mutex // orders this process's writers; the file lock orders processes

	// rename is os.Rename; tests replace it to crash between write and rename.
	rename func(oldpath, newpath string) error
}

// OpenRegistry returns the registry kept in path, holding the last
// DefaultRegistrySize reports. The file is created by the first Add.
func OpenRegistry(path string) *ErrorRegistry { return NewRegistry(path, DefaultRegistrySize) }

// NewRegistry is OpenRegistry keeping the last size reports (size < 1: the
// default).
func NewRegistry(path string, size int) *ErrorRegistry {
	if size < 1 {
		size = DefaultRegistrySize
	}
	return &ErrorRegistry{path: path, size: size, rename: os.Rename}
}

// Path is the registry's file.
func (g *ErrorRegistry) Path() string { return g.path }

type registryFile struct {
	Schema  string   `json:"schema"`
	Reports []Report `json:"reports"` // oldest first
}

// RegistryError is a registry file that cannot be read or written.
type RegistryError struct {
	Path string
	Err  error
	Help string
}

func (e *RegistryError) Error() string { return "error registry " + e.Path + ": " + e.Err.Error() }
func (e *RegistryError) Unwrap() error { return e.Err }

// Hint says what to do next.
func (e *RegistryError) Hint() string { return e.Help }

// Add appends r, dropping the oldest reports beyond the registry's size.
func (g *ErrorRegistry) Add(r *Report) error {
	return g.update(func(reports []Report) ([]Report, error) {
		reports = append(reports, *r)
		if n := len(reports) - g.size; n > 0 {
			reports = reports[n:]
		}
		return reports, nil
	})
}

// Resolve marks the report id resolved at the given time. An unknown id is
// an error.
func (g *ErrorRegistry) Resolve(id string, at time.Time) error {
	return g.update(func(reports []Report) ([]Report, error) {
		for i := range reports {
			if reports[i].ID == id {
				reports[i].Resolved, reports[i].ResolvedAt = true, at
				return reports, nil
			}
		}
		return nil, &RegistryError{Path: g.path, Err: fmt.Errorf("no report %q", id), Help: "list the reports with ListErrors to find their ids"}
	})
}

// ErrorFilter selects reports; its zero value selects all (seed 001's
// ListErrors(ErrorFilter{...})).
type ErrorFilter struct {
	Category string    // retryable, non-retryable or conditional; "": any
	Type     string    // a failure type, e.g. "quota_exhausted"; "": any
	Provider string    // "": any
	Tag      string    // e.g. TagUnrecoverable; "": any
	Resolved *bool     // nil: either
	Since    time.Time // reports at or after it; zero: any time
}

func (f ErrorFilter) match(r *Report) bool {
	switch {
	case f.Category != "" && r.RootCause.Category != f.Category,
		f.Type != "" && r.RootCause.Type != f.Type,
		f.Provider != "" && r.RootCause.Provider != f.Provider,
		f.Tag != "" && !containsString(r.Tags, f.Tag),
		f.Resolved != nil && r.Resolved != *f.Resolved,
		!f.Since.IsZero() && r.Time.Before(f.Since):
		return false
	}
	return true
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ListErrors returns the reports f selects, oldest first. A registry that
// does not exist yet holds no reports.
func (g *ErrorRegistry) ListErrors(f ErrorFilter) ([]Report, error) {
	reports, err := g.read()
	if err != nil {
		return nil, err
	}
	var out []Report
	for i := range reports {
		if f.match(&reports[i]) {
			out = append(out, reports[i])
		}
	}
	return out, nil
}

// read loads the file as it is; a reader needs no lock, because the file
// is only ever replaced whole. Something other than a regular file at the
// path (a FIFO would block) is an error, not opened.
func (g *ErrorRegistry) read() ([]Report, error) {
	data, err := readRegistry(g.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, &RegistryError{Path: g.path, Err: err, Help: "give the registry the path of a regular file"}
	}
	if err != nil {
		return nil, &RegistryError{Path: g.path, Err: err, Help: "check that the file is readable"}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var f registryFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, &RegistryError{Path: g.path, Err: fmt.Errorf("not a registry file: %w", err),
			Help: "move the file away (retrylab writes a new one) or point the registry at another path"}
	}
	if f.Schema != RegistrySchema {
		return nil, &RegistryError{Path: g.path, Err: fmt.Errorf("schema %q, want %q", f.Schema, RegistrySchema),
			Help: "move the file away (retrylab writes a new one) or point the registry at another path"}
	}
	return f.Reports, nil
}

// update changes the reports under the lock and writes them back atomically.
func (g *ErrorRegistry) update(change func([]Report) ([]Report, error)) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(g.path), 0o755); err != nil {
		return &RegistryError{Path: g.path, Err: err, Help: "check that the folder can be created"}
	}
	unlock, err := lockFile(g.path + ".lock")
	if err != nil {
		return &RegistryError{Path: g.path, Err: err, Help: "check that the folder is writable"}
	}
	defer unlock()
	g.removeTemps()
	reports, err := g.read()
	if err != nil {
		return err
	}
	if reports, err = change(reports); err != nil {
		return err
	}
	return g.write(reports)
}

// tempPattern names the temporary files of a write: "<file>.tmp-*".
func (g *ErrorRegistry) tempPattern() string { return filepath.Base(g.path) + ".tmp-*" }

// removeTemps deletes temporary files left by writers that died before
// their rename. Only the lock holder writes one, so under the lock every
// temporary file is a leftover.
func (g *ErrorRegistry) removeTemps() {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(g.path), escapeGlob(filepath.Base(g.path)+".tmp-")+"*"))
	for _, m := range matches {
		os.Remove(m)
	}
}

// escapeGlob escapes filepath.Match's special characters in s.
func escapeGlob(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`)
	return r.Replace(s)
}

func (g *ErrorRegistry) write(reports []Report) error {
	data, err := json.MarshalIndent(registryFile{Schema: RegistrySchema, Reports: reports}, "", "  ")
	if err != nil {
		return &RegistryError{Path: g.path, Err: err}
	}
	tmp, err := os.CreateTemp(filepath.Dir(g.path), g.tempPattern())
	if err != nil {
		return &RegistryError{Path: g.path, Err: err, Help: "check that the folder is writable"}
	}
	_, werr := tmp.Write(append(data, '\n'))
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = g.rename(tmp.Name(), g.path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return &RegistryError{Path: g.path, Err: werr, Help: "check the free space and permissions of the folder"}
	}
	return nil
}

// readRegistry reads the regular file path.
func readRegistry(path string) ([]byte, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
