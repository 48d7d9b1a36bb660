package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/internal/regfile"
)

// Bounds of LoadRuns: a summary.json or result.json larger than
// MaxRunFileBytes is refused, and at most MaxRunFolders run folders are
// read (the rest are counted in RunsFound.Skipped).
const (
	MaxRunFileBytes = 64 << 20
	MaxRunFolders   = 10_000
)

// RunsFound is what LoadRuns found.
type RunsFound struct {
	Runs    []*chaos.Summary
	Skipped int // run folders past MaxRunFolders
}

// RunFileError is a summary.json or result.json that cannot be read.
type RunFileError struct {
	Path   string
	Reason string
}

func (e *RunFileError) Error() string { return e.Path + ": " + e.Reason }

// Hint tells the user what to do next.
func (e *RunFileError) Hint() string {
	return "give chaos run folders (holding summary.json) or trace files; re-run 'retrylab chaos run' if the file is damaged"
}

// LoadRuns finds the chaos run folders under paths: a folder holding
// summary.json is one run (its scenario folders are not read again), a
// folder holding only result.json is a run of one scenario, and a path
// naming summary.json or result.json is read as such. Other files are left
// to trace discovery. Symbolic links to folders are not followed.
func LoadRuns(ctx context.Context, paths []string) (RunsFound, error) {
	var out RunsFound
	add := func(s *chaos.Summary) {
		if len(out.Runs) >= MaxRunFolders {
			out.Skipped++
			return
		}
		out.Runs = append(out.Runs, s)
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			if b := filepath.Base(p); b == "summary.json" || b == "result.json" {
				return out, &RunFileError{Path: p, Reason: "cannot read: " + err.Error()}
			}
			continue // trace discovery names what is missing
		}
		if !fi.IsDir() {
			switch filepath.Base(p) {
			case "summary.json", "result.json":
				s, err := readRunFile(p)
				if err != nil {
					return out, err
				}
				add(s)
			}
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("stopped searching for run folders: %w", context.Cause(ctx))
			}
			if err != nil || !d.IsDir() {
				return nil // unreadable entries are trace discovery's to report
			}
			for _, name := range []string{"summary.json", "result.json"} {
				f := filepath.Join(path, name)
				if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() {
					s, err := readRunFile(f)
					if err != nil {
						return err
					}
					add(s)
					return fs.SkipDir
				}
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// readRunFile reads a summary.json, or a result.json as a run of one.
func readRunFile(path string) (*chaos.Summary, error) {
	// Checked before it is opened: a FIFO would block the open.
	f, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, &RunFileError{Path: path, Reason: nr.Problem()}
	}
	if err != nil {
		return nil, &RunFileError{Path: path, Reason: "cannot read: " + err.Error()}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxRunFileBytes+1))
	if err != nil {
		return nil, &RunFileError{Path: path, Reason: "cannot read: " + err.Error()}
	}
	if len(b) > MaxRunFileBytes {
		return nil, &RunFileError{Path: path, Reason: fmt.Sprintf("larger than %d MB", MaxRunFileBytes>>20)}
	}
	return decodeRunFile(path, b)
}

// decodeRunFile decodes the bytes of a summary.json, or of a result.json as
// a run of one.
func decodeRunFile(path string, b []byte) (*chaos.Summary, error) {
	bad := func(err error) error {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line := 1
			for _, c := range b[:min(int(se.Offset), len(b))] {
				if c == '\n' {
					line++
				}
			}
			return &RunFileError{Path: path, Reason: fmt.Sprintf("line %d: not valid JSON: %v", line, err)}
		case errors.As(err, &te):
			return &RunFileError{Path: path, Reason: fmt.Sprintf("field %q: %v", te.Field, err)}
		}
		return &RunFileError{Path: path, Reason: "not valid JSON: " + err.Error()}
	}
	if filepath.Base(path) == "result.json" {
		var r chaos.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, bad(err)
		}
		if r.Name == "" {
			return nil, &RunFileError{Path: path, Reason: `field "name" is missing: not a chaos result.json`}
		}
		return &chaos.Summary{Schema: chaos.SummarySchema, RunDir: filepath.Dir(path), Seed: r.Seed, DurationMs: r.DurationMs, Scenarios: []chaos.Result{r}}, nil
	}
	var s chaos.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, bad(err)
	}
	if s.Schema != chaos.SummarySchema {
		return nil, &RunFileError{Path: path, Reason: fmt.Sprintf("field \"schema\" is %q, want %q: not a chaos summary.json", s.Schema, chaos.SummarySchema)}
	}
	return &s, nil
}
