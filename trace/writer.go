package trace

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"sync"
	"time"
)

// Writer writes trace events as JSONL. Each event is encoded into a buffer,
// terminated with '\n' and written with a single Write call while holding a
// lock, so many goroutines may share a Writer. When the underlying file was
// opened with O_APPEND (as Create does), many processes may append to the same
// file without tearing a line.
//
// A nil *Writer discards everything, so callers need not check.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	c     io.Closer
	runID string
	now   func() time.Time
	buf   bytes.Buffer
	obs   []Observer // see Observe
}

// NewWriter returns a Writer that writes to w and stamps each event with runID.
func NewWriter(w io.Writer, runID string) *Writer {
	return &Writer{w: w, runID: runID, now: time.Now}
}

// Create opens path for appending (creating it with mode 0644 if needed) and
// returns a Writer for it. The caller should call Close when finished.
func Create(path, runID string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	w := NewWriter(f, runID)
	w.c = f
	return w, nil
}

// SetClock replaces the clock used for ts; for tests.
func (w *Writer) SetClock(now func() time.Time) {
	if w != nil {
		w.now = now
	}
}

// RunID returns the run id stamped on events.
func (w *Writer) RunID() string {
	if w == nil {
		return ""
	}
	return w.runID
}

// Emit writes one event of type typ with payload p.
func (w *Writer) Emit(typ string, p any) error {
	if w == nil {
		return nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return w.Write(Event{V: Version, Type: typ, RunID: w.runID, Payload: raw})
}

// Write writes ev as one line. A zero TS is set to now (UTC, millisecond
// precision); an empty RunID is set to the Writer's.
func (w *Writer) Write(ev Event) error {
	if w == nil {
		return nil
	}
	if ev.V == 0 {
		ev.V = Version
	}
	if ev.RunID == "" {
		ev.RunID = w.runID
	}
	if len(ev.Payload) == 0 {
		ev.Payload = json.RawMessage("{}")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev.TS.IsZero() {
		ev.TS = w.now().UTC().Truncate(time.Millisecond)
	}
	w.buf.Reset()
	enc := json.NewEncoder(&w.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil { // Encode appends '\n'
		return err
	}
	_, err := w.w.Write(w.buf.Bytes())
	w.notify(ev)
	return err
}

// Close closes the underlying file if the Writer opened it.
func (w *Writer) Close() error {
	if w == nil || w.c == nil {
		return nil
	}
	return w.c.Close()
}
