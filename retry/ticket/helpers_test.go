package ticket

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/retrylab/retrylab/trace"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// eventsOf decodes the events of type typ in a trace.
func eventsOf[T any](t *testing.T, evs []trace.Event, typ string) []T {
	t.Helper()
	var out []T
	for _, ev := range evs {
		if ev.Type != typ {
			continue
		}
		var p T
		if err := ev.Decode(&p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// decodeEvents splits a trace into its events.
func decodeEvents(t *testing.T, data []byte) []trace.Event {
	t.Helper()
	var evs []trace.Event
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var ev trace.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("bad trace line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// secs is a list of durations in seconds.
func secs(v ...float64) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, s := range v {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}
