package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/retrylab/retrylab/probe"
)

// Schema is matrix.json's schema.
const Schema = "retrylab.matrix/v1"

// Matrix is matrix.json: every client's probe profile.
type Matrix struct {
	Schema   string  `json:"schema"`
	Retrylab string  `json:"retrylab"`
	Clients  []Entry `json:"clients"`
	// Against is the earlier matrix the changes are against (--against).
	Against string `json:"against,omitempty"`
}

// Entry is one client of the matrix.
type Entry struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Provider string `json:"provider"`
	// Profile is the client's whole probe profile (retrylab.probe/v1);
	// null when it could not be probed (Error says why).
	Profile *probe.Profile `json:"profile"`
	// Error says why the client has no profile: not installed, its version
	// command failed, the probe reached nothing.
	Error string `json:"error,omitempty"`
	// Retrylab is the retrylab version that probed it (resumption reuses
	// an entry only at the same one).
	Retrylab string `json:"probedBy,omitempty"`
	// WallMs is the probe's wall time.
	WallMs int64 `json:"wallMs,omitempty"`
	// Evidence maps each probe scenario ("probe-429") to its run folder,
	// relative to the matrix's folder: result.json and server.jsonl (the
	// journal) are there.
	Evidence map[string]string `json:"evidence,omitempty"`
	// Changes are the cells that changed since the earlier matrix
	// (--against); absent without it or when none did.
	Changes []Change `json:"changes,omitempty"`
}

// Change is one cell that changed between two matrices.
type Change struct {
	Column string `json:"column"`
	Before string `json:"before"`
	After  string `json:"after"`
	// BeforeNum and AfterNum are the numbers, when the cells hold one
	// (threshold rules compare them).
	BeforeNum, AfterNum *float64 `json:"-"`
}

// MaxMatrixBytes bounds a matrix.json read: a profile is a few KiB.
const MaxMatrixBytes = 64 << 20

// Read reads and checks a matrix.json.
func Read(r io.Reader) (*Matrix, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxMatrixBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxMatrixBytes {
		return nil, fmt.Errorf("more than %d bytes: not a matrix", MaxMatrixBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var m Matrix
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a matrix.json: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Validate checks what a reader of matrix.json relies on.
func (m *Matrix) Validate() error {
	if m.Schema != Schema {
		return fmt.Errorf("schema %q, not %s", m.Schema, Schema)
	}
	seen := map[string]bool{}
	for i, e := range m.Clients {
		switch {
		case e.Name == "" || !nameRE.MatchString(e.Name):
			return fmt.Errorf("clients[%d]: bad name %q", i, e.Name)
		case seen[e.Name]:
			return fmt.Errorf("clients[%d]: name %q twice", i, e.Name)
		case e.Profile == nil && e.Error == "":
			return fmt.Errorf("clients[%d] (%s): no profile and no error", i, e.Name)
		case e.Profile != nil && e.Profile.Schema != probe.Schema:
			return fmt.Errorf("clients[%d] (%s): profile schema %q, not %s", i, e.Name, e.Profile.Schema, probe.Schema)
		}
		seen[e.Name] = true
	}
	return nil
}

// Write writes m as matrix.json, indented.
func (m *Matrix) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// Cells is an entry's row: its profile's cells, or, without a profile,
// every cell unknown with the entry's error.
func (e *Entry) Cells() []Cell {
	if e.Profile != nil {
		return Row(e.Profile)
	}
	cells := make([]Cell, len(Columns))
	for i, c := range Columns {
		cells[i] = Cell{Key: c.Key, Text: "not run", State: Unknown, Basis: e.Error}
	}
	return cells
}

// Find returns the entry named name, or nil.
func (m *Matrix) Find(name string) *Entry {
	for i := range m.Clients {
		if m.Clients[i].Name == name {
			return &m.Clients[i]
		}
	}
	return nil
}

// floorNote says the probe's wall time against the floor the client's own
// waits impose (probe.Floor, in the profile): " (2.1× its exhaustion's
// waits of 15.2s; 1.1× its longest experiment, 30s)", or "" when the
// profile does not say it.
func (e *Entry) floorNote() string {
	if e.Profile == nil || e.Profile.Floor == nil {
		return ""
	}
	f := e.Profile.Floor
	if f.ExhaustionMs <= 0 {
		return " (its exhaustion waited nothing)"
	}
	s := fmt.Sprintf(" (%.1f× its exhaustion's waits of %.1fs", f.Ratio, float64(f.ExhaustionMs)/1000)
	if f.ExperimentsMs > f.ExhaustionMs {
		s += fmt.Sprintf("; %.1f× its longest experiment, %.1fs", f.ExperimentsRatio, float64(f.ExperimentsMs)/1000)
	}
	return s + ")"
}
