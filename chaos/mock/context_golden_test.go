package mock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// TestContextAndNonStreamedGolden pins, byte for byte, a context overflow
// in each format's own words (both Anthropic forms, both OpenAI chat
// forms, a status fault's errorType: context_length) and an sseError fault
// met by a request that did not ask for a stream: the provider's error
// status and JSON body, not a stream.
func TestContextAndNonStreamedGolden(t *testing.T) {
	t.Parallel()
	nonStream := func(provider string, k fault.Kind) *response {
		p := goldenParams(provider, scenario.Fault{Kind: k})
		p.asks.NonStream = true
		return okResponse(p)
	}
	mt := fault.ContextOverflow{Form: wire.ContextMaxTokens, Tokens: 188000, MaxTokens: 32000, Limit: 200000}
	for _, tc := range []struct {
		name   string
		resp   *response
		status int
	}{
		{"anthropic_context.golden", errorResponse(goldenParams(wire.ProviderAnthropic, scenario.Fault{Kind: fault.ContextOverflow{}})), 400},
		{"anthropic_context_max_tokens.golden", errorResponse(goldenParams(wire.ProviderAnthropic, scenario.Fault{Kind: mt})), 400},
		{"anthropic_400_context_length.golden", errorResponse(goldenParams(wire.ProviderAnthropic,
			scenario.Fault{Kind: fault.Status{Status: 400, ErrorType: wire.ContextErrorType}})), 400},
		{"openai_context.golden", errorResponse(goldenParams(wire.ProviderOpenAI, scenario.Fault{Kind: fault.ContextOverflow{}})), 400},
		{"openai_context_max_tokens.golden", errorResponse(goldenParams(wire.ProviderOpenAI,
			scenario.Fault{Kind: fault.ContextOverflow{Form: wire.ContextMaxTokens, Tokens: 120000, MaxTokens: 16384, Limit: 128000}})), 400},
		{"responses_context.golden", errorResponse(goldenParams(wire.ProviderResponses, scenario.Fault{Kind: fault.ContextOverflow{}})), 400},
		{"gemini_context.golden", errorResponse(goldenParams(wire.ProviderGemini,
			scenario.Fault{Kind: fault.ContextOverflow{Tokens: 1200293, Limit: 1048576}})), 400},
		{"anthropic_sse_error_nonstream.golden", nonStream(wire.ProviderAnthropic, fault.SSEError{AfterEvents: 4}), 529},
		{"openai_sse_error_nonstream.golden", nonStream(wire.ProviderOpenAI, fault.SSEError{AfterEvents: 3}), 503},
		{"openai_sse_error_nonstream_500.golden", nonStream(wire.ProviderOpenAI, fault.SSEError{AfterEvents: 3, Type: "server_error"}), 500},
		{"responses_sse_error_nonstream.golden", nonStream(wire.ProviderResponses,
			fault.SSEError{AfterEvents: 5, Type: "rate_limit_exceeded", Message: "Rate limit reached. Please try again in 1.5s."}), 429},
		{"gemini_sse_error_nonstream.golden", nonStream(wire.ProviderGemini, fault.SSEError{AfterEvents: 2}), 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.resp.Bytes()
			golden(t, tc.name, raw)
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("body: %v", err)
			}
			if resp.StatusCode != tc.status || tc.resp.Chunked || !json.Valid(body) {
				t.Errorf("status %d chunked %v, want %d and one JSON body: %s", resp.StatusCode, tc.resp.Chunked, tc.status, body)
			}
		})
	}
}
