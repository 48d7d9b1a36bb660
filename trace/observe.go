package trace

// Observer receives every event a Writer writes: a live consumer of the
// event stream (a metrics collector) that sees exactly what the trace file
// gets. ObserveEvent is called once per event, in the order the events are
// written, with ts and runId set; it must not call back into the Writer
// and should return quickly, as the Writer's lock is held meanwhile (which
// keeps the order of events the same for the file and the observers).
type Observer interface {
	ObserveEvent(Event)
}

// Observe adds o to the observers of w. An event is observed once it is
// encoded, whether or not writing it to the file then fails: a full disk
// does not stop the counting. Observe on a nil Writer does nothing; to
// observe events without writing them anywhere, use
// NewWriter(io.Discard, runID).
func (w *Writer) Observe(o Observer) {
	if w == nil || o == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.obs = append(w.obs, o)
}

// notify passes ev to the observers; w.mu is held.
func (w *Writer) notify(ev Event) {
	for _, o := range w.obs {
		o.ObserveEvent(ev)
	}
}
