package wire

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestClosing pins each format's Closing to its events: the last Closing
// events each hold one of the format's closing marks, the event before
// them none, so a truncate fault leaves out exactly the events that close
// the stream.
func TestClosing(t *testing.T) {
	t.Parallel()
	marks := map[string][]string{
		ProviderAnthropic: {"event: message_delta\n", "event: message_stop\n"},
		ProviderOpenAI:    {`"finish_reason":"stop"`, `"choices":[],`, "data: [DONE]"},
		ProviderResponses: {"event: response.completed\n"},
		ProviderGemini:    {`"finishReason"`},
	}
	for _, name := range Names() {
		for _, asks := range []Asks{{}, {IncludeUsage: true}} {
			f := Must(name)
			p := Params{Format: f, Model: f.DefaultModel(), RequestID: "req_mock1", Now: time.Unix(0, 0), Asks: asks}
			events := f.Events(p)
			closing := f.Closing(p)
			has := func(ev string) bool {
				for _, m := range marks[name] {
					if strings.Contains(ev, m) {
						return true
					}
				}
				return false
			}
			for i, ev := range events {
				if want := i >= len(events)-closing; has(ev) != want {
					t.Errorf("%s %+v: event %d of %d closes the stream: %v, want %v (Closing %d)", name, asks, i, len(events), has(ev), want, closing)
				}
			}
			p.Fault.Truncate = &Cut{AfterEvents: 1 << 20}
			if got := len(Stream(p).Pieces); got != len(events)-closing {
				t.Errorf("%s %+v: truncate past the end sends %d events, want %d", name, asks, got, len(events)-closing)
			}
			p.Fault.Truncate, p.Fault.Malformed = nil, &Cut{AfterEvents: 1 << 20}
			pieces := Stream(p).Pieces
			last := string(pieces[len(pieces)-1])
			if len(pieces) != len(events)-closing+1 || !strings.HasSuffix(last, "\n\n") {
				t.Errorf("%s %+v: malformed past the end sends %d events ending %q, want %d", name, asks, len(pieces), last, len(events)-closing+1)
			}
			for _, line := range strings.Split(last, "\n") {
				if d, ok := strings.CutPrefix(line, "data: "); ok && json.Valid([]byte(d)) {
					t.Errorf("%s %+v: the malformed event's data parses: %s", name, asks, d)
				}
			}
		}
	}
}
