package mock

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// TestGeminiSideRequests: Gemini CLI's routing call (an answer request
// attemptsMatch does not match, asking for JSON) is answered {} without
// consuming a fault, as are countTokens and the model list; a hostile path
// forges no line of the mock's log; the streamed request meets the fault.
func TestGeminiSideRequests(t *testing.T) {
	toxi := startToxi(t)
	yes := true
	e := startEnvWith(t, EnvConfig{Toxi: toxi, Scenario: &scenario.Scenario{Name: "gemini-side", Provider: wire.ProviderGemini,
		Model: "gemini-3.1-pro-preview", AttemptsMatch: &scenario.AttemptsMatch{Stream: &yes}, Attempts: []scenario.Fault{{Kind: fault.Status{Status: 503}}}}})
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, e.BaseURL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-goog-api-key", "goog-side-key-123456")
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	route := `{"contents":[{"role":"user","parts":[{"text":"Say hello."}]}],"generationConfig":{"responseMimeType":"application/json"}}`
	for _, tc := range []struct {
		method, path, body string
		status             int
		holds              string
	}{
		{"POST", wire.PathGemini + "gemini-3.5-flash-lite:generateContent", route, 200, `"parts":[{"text":"{}"}]`},
		{"POST", wire.PathGemini + "gemini-3.1-pro-preview:countTokens", `{"contents":[]}`, 200, `{"totalTokens":25}`},
		{"GET", "/v1beta/models", "", 200, `"name":"models/gemini-3.1-pro-preview"`},
		{"GET", "/v1beta/models/a%0A%5Bmock%5D%20forged", "", 200, "\"name\":\"models/a\ufffd[mock] forged\""},
	} {
		if status, body := do(tc.method, tc.path, tc.body); status != tc.status || !strings.Contains(body, tc.holds) {
			t.Errorf("%s %s = %d %s, want %d with %s", tc.method, tc.path, status, body, tc.status, tc.holds)
		}
	}
	stream := wire.PathGemini + "gemini-3.1-pro-preview:streamGenerateContent?alt=sse"
	if status, body := do("POST", stream, route); status != 503 || !strings.Contains(body, `"status":"UNAVAILABLE"`) {
		t.Fatalf("first attempt = %d %s, want the 503 no side request consumed", status, body)
	}
	as := waitAttempts(t, e, 1)
	if as[0].Model != "gemini-3.1-pro-preview" || as[0].Path != wire.PathGemini+"gemini-3.1-pro-preview:streamGenerateContent" {
		t.Errorf("attempt %+v", as[0])
	}
	for _, line := range strings.Split(e.log.String(), "\n") {
		if strings.HasPrefix(line, "[mock] forged") || strings.Contains(line, "goog-side-key") {
			t.Errorf("mock log line %q: forged or holds the key", line)
		}
	}
}
