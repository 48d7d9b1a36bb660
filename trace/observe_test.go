package trace_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/trace"
)

// observed records the events it observes.
type observed struct{ events []trace.Event }

func (o *observed) ObserveEvent(ev trace.Event) { o.events = append(o.events, ev) }

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestObserve: an observer sees every event, in order, as written (ts and
// runId set), even when the write fails; a nil Writer ignores Observe.
func TestObserve(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var o1, o2 observed
	w := trace.NewWriter(failingWriter{}, "r-1")
	w.SetClock(func() time.Time { return at })
	w.Observe(&o1)
	w.Observe(&o2)
	w.Observe(nil)
	if err := w.Emit(trace.TypeStepFinished, struct{}{}); err == nil {
		t.Error("Emit to a failing writer = nil error")
	}
	w.Write(trace.Event{Type: trace.TypeRunFinished, RunID: "other", Payload: []byte(`{"success":true}`)})
	want := []trace.Event{
		{V: 1, TS: at, Type: trace.TypeStepFinished, RunID: "r-1", Payload: []byte(`{}`)},
		{V: 1, TS: at, Type: trace.TypeRunFinished, RunID: "other", Payload: []byte(`{"success":true}`)},
	}
	if diff := cmp.Diff(want, o1.events); diff != "" {
		t.Errorf("observed events mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(o1.events, o2.events); diff != "" {
		t.Errorf("second observer mismatch (-first +second):\n%s", diff)
	}
	var nilW *trace.Writer
	nilW.Observe(&o1) // no panic
}
