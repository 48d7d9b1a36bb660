package provider

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	wirefmt "github.com/retrylab/retrylab/internal/wire"
)

// rawClean takes over the connection after reading the request, writes raw
// and closes it cleanly: the response ends as the mock ends it.
func rawClean(raw []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		bw.Write(raw)
		bw.Flush()
		conn.Close()
	}
}

// TestCutStreamsAsSeed000: the built-in client reads the mock's truncate and
// malformed faults, cut after every possible number of events, in every
// wire format, as seed 000 says: a stream that ends cleanly without its
// closing events is KindIncomplete (StreamTransient: retried), one whose
// event data does not parse is KindParse (StreamParse: permanent), never a
// success.
func TestCutStreamsAsSeed000(t *testing.T) {
	t.Parallel()
	for _, name := range wirefmt.Names() {
		f := wirefmt.Must(name)
		base := wirefmt.Params{Format: f, Model: f.DefaultModel(), RequestID: "req_mock0001", Now: time.Unix(1795255200, 0),
			Fault: wirefmt.Fault{Text: "Retries are a contract between a client and a provider, kept in writing."}}
		total := len(f.Events(base))
		for n := 0; n <= total+1; n++ {
			for _, tc := range []struct {
				kind  string
				fault func(*wirefmt.Fault)
				want  Kind
			}{
				{"truncate", func(fl *wirefmt.Fault) { fl.Truncate = &wirefmt.Cut{AfterEvents: n} }, KindIncomplete},
				{"malformed", func(fl *wirefmt.Fault) { fl.Malformed = &wirefmt.Cut{AfterEvents: n} }, KindParse},
			} {
				p := base
				tc.fault(&p.Fault)
				raw := wirefmt.OK(p).Bytes()
				srv := newServer(t, rawClean(raw))
				c, err := New(name, Config{BaseURL: srv.URL, APIKey: testKey})
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.Stream(context.Background(), Request{Model: f.DefaultModel(), Messages: testReq.Messages})
				var e *Error
				if !errors.As(err, &e) || e.Kind != tc.want {
					t.Errorf("%s %s after %d of %d events: Stream() error = %v, want %s", name, tc.kind, n, total, err, tc.want)
				}
			}
		}
	}
}

// TestNamelessMalformedEvent: an Anthropic event without an event field
// whose data is not JSON is malformed (KindParse), as in the other formats,
// not skipped.
func TestNamelessMalformedEvent(t *testing.T) {
	t.Parallel()
	body := anthropicOK[0] + "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\n\n"
	srv := newServer(t, stream(body))
	c := NewAnthropic(Config{BaseURL: srv.URL, APIKey: testKey})
	_, err := c.Stream(context.Background(), testReq)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindParse {
		t.Fatalf("Stream() error = %v, want KindParse", err)
	}
}

// TestCutWholeAnswerReadable: the whole (not streamed) answers of the
// truncate fault still say why they stopped where a client that checks the
// stop reason looks, and the malformed one does not parse.
func TestCutWholeAnswerReadable(t *testing.T) {
	t.Parallel()
	reasons := map[string]string{
		"anthropic": `"stop_reason":"max_tokens"`, "openai": `"finish_reason":"length"`,
		ResponsesProvider: `"incomplete_details":{"reason":"max_output_tokens"}`, GeminiProvider: `"finishReason":"MAX_TOKENS"`,
	}
	for _, name := range wirefmt.Names() {
		f := wirefmt.Must(name)
		p := wirefmt.Params{Format: f, Model: f.DefaultModel(), RequestID: "req_mock0001", Asks: wirefmt.Asks{NonStream: true}}
		p.Fault.Truncate = &wirefmt.Cut{AfterEvents: 3}
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(wirefmt.OK(p).Bytes()))), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || !strings.Contains(string(b), reasons[name]) {
			t.Errorf("%s: truncated whole answer %s (%v), want %s", name, b, err, reasons[name])
		}
	}
}
