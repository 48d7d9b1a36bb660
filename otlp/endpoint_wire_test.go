package otlp_test

import (
	"testing"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/otlp"
)

// TestOTLPAttemptEndpoint holds package otlp's reading of a client's HTTP
// spans in step with the mock: a span is an attempt exactly when the mock
// would answer its request as one (wire.Recognize), never for a side
// request.
func TestOTLPAttemptEndpoint(t *testing.T) {
	reqs := []struct{ method, path string }{
		{"POST", wire.PathAnthropic}, {"POST", wire.PathOpenAI}, {"POST", wire.PathResponses},
		{"POST", "/v1beta/models/gemini-2.5-flash:generateContent"},
		{"POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent"},
		{"POST", "/v1/models/gemini-2.5-flash:generateContent"},
		{"POST", "/v1alpha/models/gemini-2.5-flash:streamGenerateContent"},
		{"POST", "/v1beta/models/gemini-2.5-flash:countTokens"},
		{"POST", "/v1beta/models/a/b:generateContent"},
		{"POST", "/v1beta/models/:generateContent"},
		{"POST", wire.PathAnthropic + "/count_tokens"}, {"POST", wire.PathAnthropic + "/batches"},
		{"POST", wire.PathResponses + "/input_tokens"}, {"POST", wire.PathAnthropic + "/"},
		{"GET", "/v1/models"}, {"GET", "/v1/models/claude-haiku-4-5"}, {"GET", "/v1beta/models"},
		{"GET", wire.PathAnthropic}, {"PUT", wire.PathOpenAI}, {"POST", "/v1/completions"}, {"POST", "/health"},
	}
	for _, r := range reqs {
		_, _, answers := wire.Recognize(r.method, r.path)
		if got := otlp.AttemptEndpoint(r.method, r.path); got != answers {
			t.Errorf("otlp.AttemptEndpoint(%s %s) = %v, the mock answers it as an attempt: %v", r.method, r.path, got, answers)
		}
		p := wire.Params{Format: wire.Must(wire.ProviderAnthropic), Models: []string{"m"}}
		if _, side := wire.Side(p, r.method, r.path); side && otlp.AttemptEndpoint(r.method, r.path) {
			t.Errorf("otlp.AttemptEndpoint(%s %s) = true for a side request of the mock", r.method, r.path)
		}
	}
}
