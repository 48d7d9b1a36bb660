package trace

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Timestamps are written with exactly three fractional digits so that they
// sort as text (encoding/json's RFC3339Nano drops trailing zeros).
func TestWriterTimestampFixedWidth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		at   time.Time
		want string
	}{
		{"whole second", time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC), "2026-11-21T10:00:00.000Z"},
		{"trailing zero", time.Date(2026, 11, 21, 10, 0, 0, 700_000_000, time.UTC), "2026-11-21T10:00:00.700Z"},
		{"sub-millisecond truncated", time.Date(2026, 11, 21, 10, 0, 0, 123_999_999, time.UTC), "2026-11-21T10:00:00.123Z"},
		{"other zone written as UTC", time.Date(2026, 11, 21, 11, 0, 0, 5_000_000, time.FixedZone("CET", 3600)), "2026-11-21T10:00:00.005Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf, "r-1")
			w.SetClock(func() time.Time { return tt.at })
			if err := w.Emit(TypeRunFinished, RunFinished{Success: true, DurationMs: 5}); err != nil {
				t.Fatal(err)
			}
			want := `{"v":1,"ts":"` + tt.want + `","type":"RunFinished","runId":"r-1","payload":{"success":true,"durationMs":5}}` + "\n"
			if diff := cmp.Diff(want, buf.String()); diff != "" {
				t.Errorf("line mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	ev := Event{V: 1, TS: time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC), Type: "RetryAttempt", RunID: `r "q"`,
		Payload: json.RawMessage(`{"attempt":1}`)}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var got Event
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	if diff := cmp.Diff(ev, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	// No ts, no runId: both left out.
	b, _ = json.Marshal(Event{V: 1, Type: "X"})
	if s := string(b); s != `{"v":1,"type":"X","payload":{}}` {
		t.Errorf("minimal event = %s", s)
	}
	// Strings get JSON's escapes and no HTML ones, like the payload.
	var buf bytes.Buffer
	if err := NewWriter(&buf, "r\"\n\u00e9").Write(Event{V: 1, TS: ev.TS, Type: "A<B>&C"}); err != nil {
		t.Fatal(err)
	}
	if s := buf.String(); s != `{"v":1,"ts":"2026-01-02T03:04:05.006Z","type":"A<B>&C","runId":"r\"\né","payload":{}}`+"\n" {
		t.Errorf("escaped event = %s", s)
	}
	if _, err := json.Marshal(Event{Type: "X", TS: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Error("a year past 9999 marshalled without error")
	}
	if _, err := json.Marshal(Event{Type: "X", Payload: json.RawMessage(`{bad`)}); err == nil || !strings.Contains(err.Error(), "invalid") {
		t.Errorf("bad payload: err = %v, want an invalid-JSON error", err)
	}
}
