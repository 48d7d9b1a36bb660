package mock

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// formatClient is what the table test needs to act as a client of one wire
// format: the path of an answer request (and of a streamed one, with its
// query, when the format tells them apart by path), how to read the
// assistant's text from a streamed or a whole answer. A new format adds a
// line here.
type formatClient struct {
	path       string
	text       func(t *testing.T, body []byte, stream bool) string
	streamPath string
}

var formatClients = map[string]formatClient{
	wire.ProviderAnthropic: {path: wire.PathAnthropic, text: func(t *testing.T, body []byte, stream bool) string {
		return collectText(t, body, stream, func(data []byte) (string, error) {
			var v struct {
				Type    string `json:"type"`
				Delta   struct{ Text string }
				Content []struct{ Text string }
			}
			err := json.Unmarshal(data, &v)
			if stream && v.Type == "content_block_delta" {
				return v.Delta.Text, err
			}
			if !stream && len(v.Content) > 0 {
				return v.Content[0].Text, err
			}
			return "", err
		})
	}},
	wire.ProviderOpenAI: {path: wire.PathOpenAI, text: func(t *testing.T, body []byte, stream bool) string {
		return collectText(t, body, stream, func(data []byte) (string, error) {
			var v struct {
				Choices []struct {
					Delta   struct{ Content string }
					Message struct{ Content string }
				}
			}
			err := json.Unmarshal(data, &v)
			if len(v.Choices) == 0 {
				return "", err
			}
			return v.Choices[0].Delta.Content + v.Choices[0].Message.Content, err
		})
	}},
	wire.ProviderResponses: {path: wire.PathResponses, text: func(t *testing.T, body []byte, stream bool) string {
		return collectText(t, body, stream, func(data []byte) (string, error) {
			var v struct {
				Type   string `json:"type"`
				Delta  string `json:"delta"`
				Output []struct{ Content []struct{ Text string } }
			}
			err := json.Unmarshal(data, &v)
			if stream && v.Type == "response.output_text.delta" {
				return v.Delta, err
			}
			if !stream && len(v.Output) > 0 && len(v.Output[0].Content) > 0 {
				return v.Output[0].Content[0].Text, err
			}
			return "", err
		})
	}},
	wire.ProviderGemini: {path: wire.PathGemini + "m-1:generateContent", streamPath: wire.PathGemini + "m-1:streamGenerateContent?alt=sse",
		text: func(t *testing.T, body []byte, stream bool) string {
			return collectText(t, body, stream, func(data []byte) (string, error) {
				var v struct {
					Candidates []struct {
						Content struct{ Parts []struct{ Text string } }
					}
				}
				err := json.Unmarshal(data, &v)
				if len(v.Candidates) == 0 || len(v.Candidates[0].Content.Parts) == 0 {
					return "", err
				}
				return v.Candidates[0].Content.Parts[0].Text, err
			})
		}},
}

// reqPath is the path (and query) of an answer request in this format.
func (fc formatClient) reqPath(stream bool) string {
	if stream && fc.streamPath != "" {
		return fc.streamPath
	}
	return fc.path
}

// collectText joins the text that pick reads from a whole answer, or from
// each data: line of a stream.
func collectText(t *testing.T, body []byte, stream bool, pick func(data []byte) (string, error)) string {
	t.Helper()
	datas := []string{string(body)}
	if stream {
		datas = nil
		for _, ev := range sseEvents(body) {
			if ev.data != "" && ev.data != "[DONE]" {
				datas = append(datas, ev.data)
			}
		}
	}
	var out strings.Builder
	for _, d := range datas {
		s, err := pick([]byte(d))
		if err != nil {
			t.Fatalf("data %q: %v", d, err)
		}
		out.WriteString(s)
	}
	return out.String()
}

type sseEv struct{ name, data string }

// sseEvents splits a stream into its events.
func sseEvents(body []byte) []sseEv {
	var out []sseEv
	for _, block := range strings.Split(string(body), "\n\n") {
		var ev sseEv
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				ev.name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				ev.data = v
			}
		}
		if ev.name != "" || ev.data != "" {
			out = append(out, ev)
		}
	}
	return out
}

// postFormat sends one request in a format (the body holds the fields of
// every format: each reads its own) and returns what the client read.
func postFormat(t *testing.T, ctx context.Context, url, path string, stream bool) (*http.Response, []byte, error) {
	t.Helper()
	s := "false"
	if stream {
		s = "true"
	}
	body := `{"model":"m-1","max_tokens":64,"stream":` + s + `,"messages":[{"role":"user","content":"hi"}],"input":"hi"}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// TestFaultsInEveryFormat: every fault kind works in every wire format,
// streamed and not: what the client reads, and what the mock journals.
func TestFaultsInEveryFormat(t *testing.T) {
	toxi := startToxi(t)
	const text = "The answer is the scenario's ok text, whole, in every format."
	ra := "1"
	two, zeroEvents := 2, 0
	for _, name := range wire.Names() {
		fc, ok := formatClients[name]
		if !ok {
			t.Fatalf("format %s: add its path and text reader to formatClients", name)
		}
		for _, stream := range []bool{true, false} {
			afterEvents := &two
			if !stream {
				afterEvents = &zeroEvents // a whole answer is one event
			}
			for _, tc := range []struct {
				kind  string
				fault scenario.Fault
				check func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt)
			}{
				{"ok", scenario.Fault{Kind: fault.OK{Text: text}}, func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt) {
					if err != nil || resp.StatusCode != 200 || fc.text(t, body, stream) != text {
						t.Errorf("got %v %v, text %q", resp, err, fc.text(t, body, stream))
					}
				}},
				{"status", scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra}}, func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt) {
					var v struct{ Error json.RawMessage }
					if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || json.Unmarshal(body, &v) != nil || v.Error == nil {
						t.Errorf("got %v %v, body %s", resp, err, body)
					}
				}},
				{"sseError", scenario.Fault{Kind: fault.SSEError{AfterEvents: 3, Type: "rate_limit_error"}}, func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt) {
					if !stream { // the provider's answer to a request that did not ask for a stream: its status and JSON body
						var v struct{ Error json.RawMessage }
						if err != nil || resp.StatusCode != 429 || a.Status != 429 || json.Unmarshal(body, &v) != nil || v.Error == nil {
							t.Errorf("got %v %v, attempt %+v, body %s; want 429 and a JSON error", resp, err, a, body)
						}
						return
					}
					evs := sseEvents(body)
					if err != nil || resp.StatusCode != 200 || len(evs) != 4 {
						t.Fatalf("got %v %v, %d events", resp, err, len(evs))
					}
					// Each format says it its own way; each says "error".
					if last := evs[3]; !strings.Contains(last.data, `"error"`) {
						t.Errorf("last event %+v", last)
					}
				}},
				{"contextOverflow", scenario.Fault{Kind: fault.ContextOverflow{}}, func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt) {
					// Each format says it its own way, with its own numbers.
					if err != nil || resp.StatusCode != 400 || !json.Valid(body) || !regexp.MustCompile(`context|token count|too long`).Match(body) {
						t.Errorf("got %v %v, body %s", resp, err, body)
					}
				}},
				{"drop afterBytes", scenario.Fault{Kind: fault.Drop{AfterBytes: 50}}, func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt) {
					if !errors.Is(err, io.ErrUnexpectedEOF) || len(body) != 50 {
						t.Errorf("got %v, %d bytes, want unexpected EOF after 50", err, len(body))
					}
				}},
				{"drop afterEvents", scenario.Fault{Kind: fault.Drop{AfterEvents: afterEvents}}, func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt) {
					if n := len(sseEvents(body)); !errors.Is(err, io.ErrUnexpectedEOF) || n != *afterEvents || !strings.HasSuffix(string(body), "\n\n") && n > 0 {
						t.Errorf("got %v, %d events, want unexpected EOF after %d whole events", err, n, *afterEvents)
					}
				}},
				{"hang", scenario.Fault{Kind: fault.Hang{}}, func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt) {
					if !errors.Is(err, context.DeadlineExceeded) || a.ClosedBy != trace.ClosedByClient {
						t.Errorf("got %v, attempt %+v", err, a)
					}
				}},
				{"reset", scenario.Fault{Kind: fault.Reset{}}, func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt) {
					if !errors.Is(err, syscall.ECONNRESET) || a.Status != 0 {
						t.Errorf("got %v, attempt %+v", err, a)
					}
				}},
				{"closeIdle", scenario.Fault{Kind: fault.CloseIdle{}}, func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt) {
					if !errors.Is(err, io.EOF) || a.Status != 0 || a.Bytes != 0 || a.Path == "" {
						t.Errorf("got %v, attempt %+v", err, a)
					}
				}},
				{"latency", scenario.Fault{Kind: fault.Latency{D: scenario.Duration(20 * time.Millisecond)}}, func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt) {
					if err != nil || resp.StatusCode != 200 || fc.text(t, body, stream) != wire.DefaultText {
						t.Errorf("got %v %v", resp, err)
					}
				}},
				{"toxics", scenario.Fault{Kind: fault.Toxics{{Type: "slicer", Attributes: map[string]any{"average_size": 64, "size_variation": 32, "delay": 0}}}}, func(t *testing.T, resp *http.Response, body []byte, err error, a ServerAttempt) {
					if err != nil || resp.StatusCode != 200 || fc.text(t, body, stream) != wire.DefaultText {
						t.Errorf("got %v %v", resp, err)
					}
				}},
			} {
				mode := map[bool]string{true: "stream", false: "whole"}[stream]
				t.Run(name+"/"+mode+"/"+tc.kind, func(t *testing.T) {
					e := startEnv(t, toxi, name, tc.fault)
					ctx := t.Context()
					if tc.kind == "hang" {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
						defer cancel()
					}
					resp, body, err := postFormat(t, ctx, e.BaseURL(), fc.reqPath(stream), stream)
					as := waitAttempts(t, e, 1)
					if wantPath, _, _ := strings.Cut(fc.reqPath(stream), "?"); as[0].Fault != tc.fault.Name() || as[0].Path != wantPath || as[0].Model != "m-1" {
						t.Errorf("attempt %+v", as[0])
					}
					tc.check(t, resp, body, err, as[0])
				})
			}
		}
	}
}
