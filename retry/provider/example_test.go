package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/retrylab/retrylab/retry/provider"
)

// A fake Anthropic endpoint: one attempt streams the reply, the next is
// rate limited.
func fakeAnthropic() *httptest.Server {
	n := 0
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		if n > 1 {
			w.Header().Set("retry-after", "2")
			w.Header().Set("request-id", "req_2")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-haiku-4-5\",\"usage\":{\"input_tokens\":5}}}\n\n"+
			"event: ping\ndata: {\"type\":\"ping\"}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi there\"}}\n\n"+
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
}

func Example() {
	srv := fakeAnthropic()
	defer srv.Close()

	c, err := provider.New("anthropic", provider.Config{BaseURL: srv.URL, APIKey: "sk-ant-example"})
	if err != nil {
		panic(err)
	}
	req := provider.Request{Model: "claude-haiku-4-5", Messages: []provider.Message{{Role: "user", Content: "hello"}}}

	resp, err := c.Stream(context.Background(), req)
	fmt.Printf("%q %s %+v %v\n", resp.Text, resp.StopReason, resp.Usage, err)

	// The second attempt fails; the typed error carries what a retry policy needs.
	_, err = c.Stream(context.Background(), req)
	var pe *provider.Error
	if errors.As(err, &pe) {
		fmt.Println(pe.Kind, pe.Status, pe.ErrorType, pe.RetryAfter, pe.RequestID)
	}
	fmt.Println(err)
	// Output:
	// "Hi there" end_turn {InputTokens:5 OutputTokens:2} <nil>
	// http 429 rate_limit_error 2s req_2
	// anthropic: HTTP 429 rate_limit_error: slow down
}

func ExampleSSEReader() {
	r := provider.NewSSEReader(strings.NewReader(": comment\r\nevent: greeting\r\ndata: hello\r\ndata: world\r\n\r\ndata: [DONE]\n\n"))
	for {
		ev, err := r.Next()
		if err != nil {
			break // io.EOF at the end of the stream
		}
		fmt.Printf("%s %q\n", ev.Event, ev.Data)
	}
	// Output:
	// greeting "hello\nworld"
	// message "[DONE]"
}

// The Responses API client: a response.failed event is a typed in-stream
// error whose Code the classifier reads.
func ExampleNewResponses() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":0,\"delta\":\"Hi\"}\n\n"+
			"event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":1,\"response\":{\"status\":\"failed\","+
			"\"error\":{\"code\":\"rate_limit_exceeded\",\"message\":\"Please try again in 2s.\"}}}\n\n")
	}))
	defer srv.Close()

	c := provider.NewResponses(provider.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-example"})
	_, err := c.Stream(context.Background(), provider.Request{Model: "gpt-4.1", Messages: []provider.Message{{Role: "user", Content: "hi"}}})
	var pe *provider.Error
	if errors.As(err, &pe) {
		fmt.Println(pe.Kind, pe.Code, pe.Streamed, pe.Text)
		fmt.Println(provider.ParseTryAgain(pe.Message))
	}
	fmt.Println(err)
	// Output:
	// sse_error rate_limit_exceeded true Hi
	// 2s true
	// openai-responses: stream error: rate_limit_exceeded: Please try again in 2s.
}
