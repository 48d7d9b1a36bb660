package retry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/retry/provider"
)

// streamer is what the built-in clients of the four formats share.
type streamer interface {
	Stream(ctx context.Context, req provider.Request) (*provider.Response, error)
}

// TestContextOverflowEveryFormat: the built-in client meets each format's
// context overflow, byte for byte as the mock sends it (both Anthropic
// forms, both OpenAI chat forms, the Responses API's, Gemini's token
// count), as a KindHTTP 400; the retry core classifies every one
// context_too_long, which is not retried.
func TestContextOverflowEveryFormat(t *testing.T) {
	t.Parallel()
	clients := map[string]func(url string) streamer{
		wire.ProviderAnthropic: func(u string) streamer { return provider.NewAnthropic(provider.Config{BaseURL: u, APIKey: "k"}) },
		wire.ProviderOpenAI:    func(u string) streamer { return provider.NewOpenAI(provider.Config{BaseURL: u + "/v1", APIKey: "k"}) },
		wire.ProviderResponses: func(u string) streamer {
			return provider.NewResponses(provider.Config{BaseURL: u + "/v1", APIKey: "k"})
		},
		wire.ProviderGemini: func(u string) streamer { return provider.NewGemini(provider.Config{BaseURL: u, APIKey: "k"}) },
	}
	for _, name := range wire.Names() {
		for _, c := range []wire.ContextLength{{}, {Form: wire.ContextMaxTokens}} {
			p := wire.Params{Format: wire.Must(name), Model: "m", RequestID: "req_1", Now: time.Now(),
				Fault: wire.Fault{Status: 400, Context: &c}}
			resp := wire.Error(p)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(resp.Status)
				_, _ = w.Write(resp.Pieces[0])
			}))
			_, err := clients[name](srv.URL).Stream(t.Context(), provider.Request{Model: "m", Messages: []provider.Message{{Role: "user", Content: "hi"}}})
			srv.Close()
			pe, ok := err.(*provider.Error)
			if !ok || pe.Kind != provider.KindHTTP || pe.Status != 400 {
				t.Errorf("%s %s: got %v, want a KindHTTP 400", name, c.Form, err)
				continue
			}
			if cl := Classify(err); cl.Type != ContextTooLong || cl.Class != NonRetryable {
				t.Errorf("%s %s: %q classified %s (%s), want context_too_long, non-retryable", name, c.Form, pe.Message, cl.Type, cl.Class)
			}
		}
	}
}
