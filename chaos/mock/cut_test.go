package mock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// TestCutGolden pins the truncate and malformed faults' responses byte for
// byte in every format, streamed and not; each ends cleanly (the chunked
// terminator, or a Content-Length that matches the body).
func TestCutGolden(t *testing.T) {
	t.Parallel()
	for _, name := range wire.Names() {
		for _, tc := range []struct {
			suffix string
			kind   fault.Kind
			whole  bool
		}{
			{"truncate", fault.Truncate{AfterEvents: 2}, false},
			{"truncate_message", fault.Truncate{AfterEvents: 2}, true},
			{"malformed", fault.Malformed{AfterEvents: 2}, false},
			{"malformed_message", fault.Malformed{AfterEvents: 2}, true},
		} {
			file := strings.ReplaceAll(name, "-", "_") + "_" + tc.suffix + ".golden"
			t.Run(file, func(t *testing.T) {
				// The short text of the other goldens keeps these readable.
				p := goldenParams(name, scenario.Fault{Kind: textKind{tc.kind, goldenText}})
				p.asks.NonStream = tc.whole
				raw := okResponse(p).Bytes()
				golden(t, file, raw)
				hr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(hr.Body)
				if err != nil || hr.StatusCode != 200 {
					t.Fatalf("status %d, body: %v (want a clean end)", hr.StatusCode, err)
				}
				if tc.kind.Name() == "malformed" && tc.whole && json.Valid(body) {
					t.Errorf("a malformed whole answer parses: %s", body)
				}
			})
		}
	}
}

// textKind is a cut fault with an ok text of its own, for short goldens.
type textKind struct {
	fault.Kind
	text string
}

func (k textKind) Wire(f *wire.Fault) {
	k.Kind.(fault.Wirer).Wire(f)
	f.Text = k.text
}

// TestCutInEveryFormat: through the mock, a truncate fault ends a stream
// cleanly after its first events and before the events that close it, and a
// malformed fault sends one event whose data does not parse; not streamed,
// the answer says it was cut by the output limit, or its body is cut.
func TestCutInEveryFormat(t *testing.T) {
	toxi := startToxi(t)
	// What each format's closing looks like, to check it is absent from a
	// truncated stream; and its stop reason of an answer cut short.
	closing := map[string]struct{ closer, cutReason string }{
		wire.ProviderAnthropic: {`"stop_reason":"end_turn"`, `"stop_reason":"max_tokens"`},
		wire.ProviderOpenAI:    {`"finish_reason":"stop"`, `"finish_reason":"length"`},
		wire.ProviderResponses: {`response.completed`, `"status":"incomplete","background":false,"error":null,"incomplete_details":{"reason":"max_output_tokens"}`},
		wire.ProviderGemini:    {`"finishReason"`, `"finishReason":"MAX_TOKENS"`},
	}
	for _, name := range wire.Names() {
		fc, ok := formatClients[name]
		if !ok {
			t.Fatalf("format %s: add its path and text reader to formatClients", name)
		}
		want, ok := closing[name]
		if !ok {
			t.Fatalf("format %s: add its closing event and cut stop reason to this test", name)
		}
		for _, stream := range []bool{true, false} {
			mode := map[bool]string{true: "stream", false: "whole"}[stream]
			for _, n := range []int{0, 3, 1000} {
				t.Run(name+"/"+mode+"/truncate/"+string(rune('0'+min(n, 9))), func(t *testing.T) {
					e := startEnv(t, toxi, name, scenario.Fault{Kind: fault.Truncate{AfterEvents: n}})
					resp, body, err := postFormat(t, t.Context(), e.BaseURL(), fc.reqPath(stream), stream)
					as := waitAttempts(t, e, 1)
					if err != nil || resp.StatusCode != 200 || as[0].Fault != "truncate" {
						t.Fatalf("got %v %v, attempt %+v; want a clean 200", resp, err, as[0])
					}
					if !stream {
						if !strings.Contains(string(body), want.cutReason) || !json.Valid(body) {
							t.Errorf("whole answer %s, want it to hold %s", body, want.cutReason)
						}
						return
					}
					evs := sseEvents(body)
					if strings.Contains(string(body), want.closer) || strings.Contains(string(body), "[DONE]") || strings.Contains(string(body), "message_stop") {
						t.Errorf("a truncated stream holds its closing events:\n%s", body)
					}
					if n < 1000 && len(evs) != n {
						t.Errorf("%d events, want %d", len(evs), n)
					}
					if n == 1000 && len(evs) == 0 {
						t.Errorf("afterEvents past the end sends no event; want every event before the closing ones")
					}
				})
				t.Run(name+"/"+mode+"/malformed/"+string(rune('0'+min(n, 9))), func(t *testing.T) {
					e := startEnv(t, toxi, name, scenario.Fault{Kind: fault.Malformed{AfterEvents: n}})
					resp, body, err := postFormat(t, t.Context(), e.BaseURL(), fc.reqPath(stream), stream)
					waitAttempts(t, e, 1)
					if err != nil || resp.StatusCode != 200 {
						t.Fatalf("got %v %v; want a clean 200", resp, err)
					}
					if !stream {
						if json.Valid(body) || resp.ContentLength != int64(len(body)) {
							t.Errorf("whole answer %q (Content-Length %d), want cut JSON", body, resp.ContentLength)
						}
						return
					}
					evs := sseEvents(body)
					if len(evs) == 0 {
						t.Fatal("no event")
					}
					for i, ev := range evs {
						if bad := !json.Valid([]byte(ev.data)); bad != (i == len(evs)-1) {
							t.Errorf("event %d of %d: data %q parses: %v", i, len(evs), ev.data, !bad)
						}
					}
					if n < 1000 && len(evs) != n+1 {
						t.Errorf("%d events, want %d whole ones and the malformed one", len(evs), n)
					}
					if last := evs[len(evs)-1]; name == wire.ProviderAnthropic && last.name != "content_block_delta" ||
						name == wire.ProviderResponses && last.name != "response.output_text.delta" {
						t.Errorf("malformed event %+v, want the format's text delta", last)
					}
				})
			}
		}
	}
}
