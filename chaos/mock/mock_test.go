package mock

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// golden compares got with testdata/name, or rewrites it with -update.
// update rewrites the golden files instead of comparing with them.
var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// goldenText is a short ok.text, so that a golden stream stays readable.
const goldenText = "Retries are a contract between a client and a provider, kept in writing."

func goldenParams(provider string, f scenario.Fault) respParams {
	return respParams{
		provider:  provider,
		model:     wire.Must(provider).DefaultModel(),
		requestID: "req_mock0123456789ab000001",
		now:       time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC),
		fault:     f,
	}
}

// TestResponsesGolden pins the mock's responses byte for byte, as they go on
// the wire (head, chunk framing, SSE events).
func TestResponsesGolden(t *testing.T) {
	t.Parallel()
	ra := "2"
	for _, tc := range []struct {
		name string
		resp *response
	}{
		{"anthropic_ok.golden", streamResponse(goldenParams(wire.ProviderAnthropic, scenario.Fault{}))},
		{"openai_ok.golden", streamResponse(func() respParams {
			p := goldenParams(wire.ProviderOpenAI, scenario.Fault{})
			p.model = "gpt-4o-mini"
			return p
		}())},
		{"anthropic_sse_error.golden", streamResponse(goldenParams(wire.ProviderAnthropic,
			scenario.Fault{Kind: fault.SSEError{AfterEvents: 4, Type: "overloaded_error"}}))},
		{"anthropic_429.golden", errorResponse(goldenParams(wire.ProviderAnthropic,
			scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra, Headers: map[string]string{"x-should-retry": "true"}}}))},
		{"anthropic_529.golden", errorResponse(goldenParams(wire.ProviderAnthropic, scenario.Fault{Kind: fault.Status{Status: 529}}))},
		{"openai_429_quota.golden", errorResponse(goldenParams(wire.ProviderOpenAI,
			scenario.Fault{Kind: fault.Status{Status: 429, ErrorType: "insufficient_quota"}}))},
		{"openai_503.golden", errorResponse(goldenParams(wire.ProviderOpenAI, scenario.Fault{Kind: fault.Status{Status: 503}}))},
		{"openai_ok_usage.golden", streamResponse(func() respParams {
			p := goldenParams(wire.ProviderOpenAI, scenario.Fault{})
			p.model, p.asks.IncludeUsage = "gpt-4o-mini", true
			return p
		}())},
		{"anthropic_message.golden", okResponse(func() respParams {
			p := goldenParams(wire.ProviderAnthropic, scenario.Fault{})
			p.asks.NonStream = true
			return p
		}())},
		{"openai_message.golden", okResponse(func() respParams {
			p := goldenParams(wire.ProviderOpenAI, scenario.Fault{})
			p.model, p.asks.NonStream = "gpt-4o-mini", true
			return p
		}())},
		{"openai_sse_error.golden", streamResponse(goldenParams(wire.ProviderOpenAI,
			scenario.Fault{Kind: fault.SSEError{AfterEvents: 3, Type: "server_error"}}))},
		{"responses_ok.golden", streamResponse(goldenParams(wire.ProviderResponses, scenario.Fault{Kind: fault.OK{Text: goldenText}}))},
		{"responses_message.golden", okResponse(func() respParams {
			p := goldenParams(wire.ProviderResponses, scenario.Fault{Kind: fault.OK{Text: goldenText}})
			p.asks.NonStream = true
			return p
		}())},
		{"responses_429.golden", errorResponse(goldenParams(wire.ProviderResponses,
			scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra, Message: "Rate limit reached for gpt-4o-mini. Please try again in 2s."}}))},
		{"responses_503.golden", errorResponse(goldenParams(wire.ProviderResponses, scenario.Fault{Kind: fault.Status{Status: 503}}))},
		{"responses_sse_error.golden", streamResponse(goldenParams(wire.ProviderResponses,
			scenario.Fault{Kind: fault.SSEError{AfterEvents: 5, Type: "rate_limit_exceeded", Message: "Rate limit reached. Please try again in 1.5s."}}))},
		{"gemini_ok.golden", streamResponse(goldenParams(wire.ProviderGemini, scenario.Fault{Kind: fault.OK{Text: goldenText}}))},
		{"gemini_message.golden", okResponse(func() respParams {
			p := goldenParams(wire.ProviderGemini, scenario.Fault{Kind: fault.OK{Text: goldenText}})
			p.asks.NonStream = true
			return p
		}())},
		{"gemini_429.golden", errorResponse(goldenParams(wire.ProviderGemini, scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra}}))},
		{"gemini_503.golden", errorResponse(goldenParams(wire.ProviderGemini, scenario.Fault{Kind: fault.Status{Status: 503}}))},
		{"gemini_400.golden", errorResponse(goldenParams(wire.ProviderGemini, scenario.Fault{Kind: fault.Status{Status: 400}}))},
		{"gemini_sse_error.golden", streamResponse(goldenParams(wire.ProviderGemini,
			scenario.Fault{Kind: textSSEError{fault.SSEError{AfterEvents: 2}, goldenText}}))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.resp.Bytes()
			golden(t, tc.name, raw)
			// What an HTTP client reads back is well formed.
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("body: %v", err)
			}
			if resp.StatusCode != tc.resp.Status || !resp.Close {
				t.Errorf("status %d close %v", resp.StatusCode, resp.Close)
			}
			if want := bytes.Join(tc.resp.Pieces, nil); !bytes.Equal(body, want) {
				t.Errorf("decoded body differs from the pieces")
			}
		})
	}
}

func TestAnthropicStreamShape(t *testing.T) {
	t.Parallel()
	r := streamResponse(goldenParams(wire.ProviderAnthropic, scenario.Fault{}))
	var names []string
	for _, p := range r.Pieces {
		name := strings.TrimPrefix(strings.SplitN(string(p), "\n", 2)[0], "event: ")
		if len(names) == 0 || names[len(names)-1] != name {
			names = append(names, name)
		}
	}
	want := []string{"message_start", "content_block_start", "ping", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("event order mismatch (-want +got):\n%s", diff)
	}
	if n := len(bytes.Join(r.Pieces, nil)); n < 1024 {
		t.Errorf("stream is %d bytes; want it long enough to drop mid-stream", n)
	}
}

// TestWireOffset checks the drop arithmetic: cutting the wire at head +
// wireOffset(n) leaves a client exactly n bytes of the event stream.
func TestWireOffset(t *testing.T) {
	t.Parallel()
	r := streamResponse(goldenParams(wire.ProviderAnthropic, scenario.Fault{}))
	total := len(bytes.Join(r.Pieces, nil))
	for _, n := range []int{0, 1, 100, 400, 401, total - 1, total} {
		checkWireOffset(t, r, n)
	}
}

func checkWireOffset(t *testing.T, r *response, n int) {
	t.Helper()
	raw := r.Bytes()
	cut := raw[:len(r.Head)+r.WireOffset(n)]
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(cut)), nil)
	if err != nil {
		t.Fatalf("n=%d: %v", n, err)
	}
	body, _ := io.ReadAll(resp.Body)
	full := bytes.Join(r.Pieces, nil)
	if !bytes.Equal(body, full[:n]) {
		t.Errorf("n=%d: client read %d bytes, want the first %d", n, len(body), n)
	}
}

func FuzzWireOffset(f *testing.F) {
	f.Add(400, 3, true)
	f.Add(0, 0, false)
	f.Add(5000, 100, true)
	f.Fuzz(func(t *testing.T, n, after int, other bool) {
		// other picks a format by after's value, so every format is fuzzed.
		prov := wire.ProviderAnthropic
		if names := wire.Names(); other {
			prov = names[((after/2)%len(names)+len(names))%len(names)]
		}
		fl := scenario.Fault{}
		if after%2 == 1 {
			fl.Kind = fault.SSEError{AfterEvents: after % 60}
		}
		r := streamResponse(goldenParams(prov, fl))
		total := len(bytes.Join(r.Pieces, nil))
		if n < 0 || n > total {
			n = ((n % (total + 1)) + total + 1) % (total + 1)
		}
		checkWireOffset(t, r, n)
	})
}

// FuzzRequestModel feeds arbitrary request bodies to the parser the mock
// uses: it never panics and never lets an sk- key through redaction.
func FuzzRequestModel(f *testing.F) {
	f.Add([]byte(`{"model":"claude-haiku-4-5","stream":true}`))
	f.Add([]byte(`{"model":"sk-ant-api03-abcdefgh"}`))
	f.Add([]byte(`{"model":`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		model, _, _ := requestFields(body)
		m := redact.RedactSecrets(model)
		if regexp.MustCompile(`sk-[A-Za-z0-9_\-]{4,}`).MatchString(m) {
			t.Errorf("redacted model %q still holds a secret", m)
		}
	})
}

func TestErrorTypes(t *testing.T) {
	t.Parallel()
	got := map[int]string{}
	for _, s := range []int{400, 401, 402, 403, 404, 408, 409, 413, 429, 500, 501, 502, 503, 504, 529} {
		got[s] = wire.AnthropicErrorType(s)
	}
	want := map[int]string{
		400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
		403: "permission_error", 404: "not_found_error", 408: "invalid_request_error",
		409: "invalid_request_error", 413: "request_too_large", 429: "rate_limit_error",
		500: "api_error", 501: "api_error", 502: "api_error", 503: "overloaded_error",
		504: "timeout_error", 529: "overloaded_error",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AnthropicErrorType mismatch (-want +got):\n%s", diff)
	}
}

// TestConnectionHeader: a response meant to be cut says keep-alive, as the
// real APIs do; Node's fetch (undici, under both official SDKs) takes EOF on
// a Connection: close response for the end of the message even mid-chunk,
// so the Anthropic SDK saw a dropped stream end cleanly without a message
// and the OpenAI SDK returned a truncated completion as a success. A
// complete response says keep-alive when the mock keeps its connection
// (respParams.keep, TestEnvKeepAlive), else close, because the mock closes
// the connection after it and a keep-alive client would otherwise reuse it
// (TestEnvKeepAliveClient).
func TestConnectionHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		p    respParams
		want string
	}{
		{"ok stream", goldenParams(wire.ProviderAnthropic, scenario.Fault{}), "close"},
		{"drop stream", goldenParams(wire.ProviderAnthropic, scenario.Fault{Kind: fault.Drop{AfterBytes: 400}}), "keep-alive"},
		{"drop openai stream", goldenParams(wire.ProviderOpenAI, scenario.Fault{Kind: fault.Drop{AfterBytes: 10}}), "keep-alive"},
		{"drop non-streaming", func() respParams {
			p := goldenParams(wire.ProviderAnthropic, scenario.Fault{Kind: fault.Drop{AfterBytes: 10}})
			p.asks.NonStream = true
			return p
		}(), "keep-alive"},
		{"raw toxics may cut", goldenParams(wire.ProviderOpenAI, scenario.Fault{Kind: fault.Toxics{{Type: "limit_data"}}}), "keep-alive"},
		{"sseError ends the stream itself", goldenParams(wire.ProviderAnthropic, scenario.Fault{Kind: fault.SSEError{AfterEvents: 3}}), "close"},
		{"status", goldenParams(wire.ProviderAnthropic, scenario.Fault{Kind: fault.Status{Status: 529}}), "close"},
		{"ok stream, kept alive", func() respParams {
			p := goldenParams(wire.ProviderAnthropic, scenario.Fault{})
			p.keep = true
			return p
		}(), "keep-alive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *response
			if _, ok := tc.p.fault.Kind.(fault.Status); ok {
				r = errorResponse(tc.p)
			} else {
				r = okResponse(tc.p)
			}
			var got []string
			for _, line := range strings.Split(string(r.Head), "\r\n") {
				if v, ok := strings.CutPrefix(line, "Connection: "); ok {
					got = append(got, v)
				}
			}
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("Connection headers mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequestFields: the mock follows stream and, for OpenAI,
// stream_options.include_usage (it once ignored include_usage, so clients
// that ask for the usage chunk never got one).
func TestRequestFields(t *testing.T) {
	t.Parallel()
	type fields struct {
		Model                string
		Stream, IncludeUsage bool
	}
	for _, tc := range []struct {
		name, body string
		want       fields
	}{
		{"anthropic stream", `{"model":"claude-haiku-4-5","stream":true}`, fields{"claude-haiku-4-5", true, false}},
		{"no stream", `{"model":"gpt-4o-mini"}`, fields{"gpt-4o-mini", false, false}},
		{"include_usage", `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true}}`, fields{"gpt-4o-mini", true, true}},
		{"include_usage false", `{"model":"m","stream":true,"stream_options":{"include_usage":false}}`, fields{"m", true, false}},
		{"stream_options null", `{"model":"m","stream":true,"stream_options":null}`, fields{"m", true, false}},
		{"not JSON", `{"model":`, fields{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got fields
			got.Model, got.Stream, got.IncludeUsage = requestFields([]byte(tc.body))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requestFields mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// textSSEError is an sseError fault whose stream carries a text of its own,
// for a golden stream that shows both.
type textSSEError struct {
	fault.SSEError
	text string
}

func (k textSSEError) Wire(f *wire.Fault) { k.SSEError.Wire(f); f.Text = k.text }
