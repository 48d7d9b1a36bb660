package mock

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

func TestAttemptsMatch(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	turn := wire.Request{Model: "m", Stream: true, Prompt: "Say hi", Tools: true}
	with := func(f func(*wire.Request)) wire.Request { r := turn; f(&r); return r }
	for _, tc := range []struct {
		name string
		m    *scenario.AttemptsMatch
		path string
		rb   wire.Request
		want bool
	}{
		{"nil matches all", nil, "/v1/messages", with(func(r *wire.Request) { r.Stream = false }), true},
		{"path", &scenario.AttemptsMatch{Path: "/v1/responses"}, "/v1/responses", turn, true},
		{"other path", &scenario.AttemptsMatch{Path: "/v1/responses"}, "/v1/messages", turn, false},
		{"path pattern", &scenario.AttemptsMatch{Path: "/v1beta/models/*:streamGenerateContent"}, "/v1beta/models/gemini-2.5-pro:streamGenerateContent", with(func(r *wire.Request) { r.Model = "" }), true},
		{"model pattern", &scenario.AttemptsMatch{Model: "claude-sonnet-*"}, "/v1/messages", with(func(r *wire.Request) { r.Model = "claude-sonnet-4-5" }), true},
		{"routing model", &scenario.AttemptsMatch{Model: "claude-sonnet-*"}, "/v1/messages", with(func(r *wire.Request) { r.Model = "claude-haiku-4-5" }), false},
		{"stream", &scenario.AttemptsMatch{Stream: &yes}, "/v1/messages", turn, true},
		{"not streamed", &scenario.AttemptsMatch{Stream: &yes}, "/v1/messages", with(func(r *wire.Request) { r.Stream = false }), false},
		{"stream false", &scenario.AttemptsMatch{Stream: &no}, "/v1/messages", with(func(r *wire.Request) { r.Stream = false }), true},
		{"all", &scenario.AttemptsMatch{Path: "/v1/messages", Model: "m", Stream: &yes}, "/v1/messages", turn, true},
		{"prompt", &scenario.AttemptsMatch{Prompt: "Say hi"}, "/v1/chat/completions", turn, true},
		{"memory extraction", &scenario.AttemptsMatch{Prompt: "Say hi"}, "/v1/chat/completions",
			with(func(r *wire.Request) {
				r.Prompt = "Managed memory directory: ...\n\nScan the recent conversation history"
			}), false},
		{"prompt and model", &scenario.AttemptsMatch{Model: "m", Prompt: "Say hi"}, "/v1/messages", with(func(r *wire.Request) { r.Model = "small" }), false},
		{"tools", &scenario.AttemptsMatch{Tools: &yes}, "/v1/chat/completions", turn, true},
		{"title call without tools", &scenario.AttemptsMatch{Tools: &yes}, "/v1/chat/completions", with(func(r *wire.Request) { r.Tools = false }), false},
		{"tools false", &scenario.AttemptsMatch{Tools: &no}, "/v1/chat/completions", with(func(r *wire.Request) { r.Tools = false }), true},
	} {
		if got := tc.m.Matches(tc.path, tc.rb); got != tc.want {
			t.Errorf("%s: matches(%s, %+v) = %v, want %v", tc.name, tc.path, tc.rb, got, tc.want)
		}
	}
}

// TestSideRequests: what an agent sends beside its answer request is
// answered with the real APIs' shapes and journaled as side: true, and
// consumes no fault; an answer request that attemptsMatch does not match
// is a side request answered with a success.
func TestSideRequests(t *testing.T) {
	toxi := startToxi(t)
	yes := true
	e := startEnvWith(t, EnvConfig{Toxi: toxi, Scenario: &scenario.Scenario{Name: "side", Provider: wire.ProviderResponses,
		Model: "gpt-5", Client: scenario.Client{Escalation: []string{"gpt-5", "gpt-5-pro"}},
		AttemptsMatch: &scenario.AttemptsMatch{Path: wire.PathResponses, Stream: &yes}, Attempts: []scenario.Fault{{Kind: fault.Status{Status: 503}}}}})
	do := func(method, path, body string, hdr ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, e.BaseURL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		method, path, body string
		hdr                []string
		status             int
		holds              string
	}{
		{"GET", "/v1/models", "", nil, 200, `{"object":"list","data":[{"id":"gpt-5","object":"model","created":1727740800,"owned_by":"openai"},{"id":"gpt-5-pro",`},
		{"GET", "/v1/models/gpt-5-mini", "", nil, 200, `{"id":"gpt-5-mini","object":"model"`},
		{"POST", "/v1/responses/input_tokens", `{"model":"gpt-5","input":"hi"}`, nil, 200, `{"object":"response.input_tokens","input_tokens":25}`},
		{"POST", "/v1/messages/count_tokens", `{"model":"claude-haiku-4-5","messages":[]}`, nil, 200, `{"input_tokens":25}`},
		{"GET", "/v1/responses", "", []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}, 426, `"error"`},
		{"HEAD", "/", "", nil, 200, ""},
		{"GET", "/healthz", "", nil, 200, `{"status":"ok"}`},
		{"POST", "/v1/responses", `{"model":"gpt-5-nano","input":"route this","stream":false}`, nil, 200, `"status":"completed"`},
		{"GET", "/v1/nothing", "", nil, 404, `"message":"mock serves POST /v1/messages, POST /v1beta/models/{model}:generateContent|streamGenerateContent, POST /v1/chat/completions, POST /v1/responses, not GET /v1/nothing"`},
	} {
		status, body := do(tc.method, tc.path, tc.body, tc.hdr...)
		if status != tc.status || !strings.Contains(body, tc.holds) {
			t.Errorf("%s %s = %d %s, want %d with %s", tc.method, tc.path, status, body, tc.status, tc.holds)
		}
	}
	// The first attempt still meets the first fault.
	stream := `{"model":"gpt-5","input":"hi","stream":true}`
	if status, body := do("POST", wire.PathResponses, stream); status != 503 {
		t.Fatalf("first attempt = %d %s, want the 503 no side request consumed", status, body)
	}
	if status, _ := do("POST", wire.PathResponses, stream); status != 200 {
		t.Fatalf("second attempt = %d", status)
	}
	as := waitAttempts(t, e, 2)
	if len(as) != 2 || as[0].Status != 503 || as[1].Status != 200 {
		t.Errorf("attempts %+v", as)
	}
	var sides []string
	for _, s := range e.SideRequests() {
		sides = append(sides, fmt.Sprintf("%s %s %d", s.Method, s.Path, s.Status))
	}
	want := []string{"GET /v1/models 200", "GET /v1/models/gpt-5-mini 200", "POST /v1/responses/input_tokens 200",
		"POST /v1/messages/count_tokens 200", "GET /v1/responses 426", "HEAD / 200", "GET /healthz 200",
		"POST /v1/responses 200", "GET /v1/nothing 404"}
	if diff := cmp.Diff(want, sides); diff != "" {
		t.Errorf("side requests mismatch (-want +got):\n%s", diff)
	}
	// The journal has them as side: true, attempt 0, beside the attempts.
	f, err := os.Open(e.journalPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var journaled []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev struct {
			Type    string
			Payload trace.MockRequest
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Type != trace.TypeMockRequest {
			continue
		}
		p := ev.Payload
		journaled = append(journaled, fmt.Sprintf("%d %v %s %s %s %d", p.Attempt, p.Side, p.Method, p.Path, p.Model, p.Status))
	}
	if got := journaled[7]; got != "0 true POST /v1/responses gpt-5-nano 200" {
		t.Errorf("routing call journaled as %q", got)
	}
	if got := journaled[9:]; !cmp.Equal(got, []string{"1 false  /v1/responses gpt-5 503", "2 false  /v1/responses gpt-5 200"}) {
		t.Errorf("attempts journaled as %q", got)
	}
}

// TestLoadAttemptsMatch: attemptsMatch loads as written.
func TestLoadAttemptsMatch(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/codex.yaml"
	if err := os.WriteFile(path, []byte("provider: openai-responses\nattemptsMatch: {path: /v1/responses, model: \"gpt-5*\", stream: true, prompt: Say hi, tools: true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.LoadScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	if diff := cmp.Diff(&scenario.AttemptsMatch{Path: "/v1/responses", Model: "gpt-5*", Stream: &yes, Prompt: "Say hi", Tools: &yes}, sc.AttemptsMatch); diff != "" {
		t.Errorf("attemptsMatch mismatch (-want +got):\n%s", diff)
	}
	if sc.Model != "gpt-4o-mini" {
		t.Errorf("default model of openai-responses = %q", sc.Model)
	}
}

// TestAttemptsMatchWholePrompt: attemptsMatch.prompt reads the whole last
// user message, not the journal's excerpt of it, which may cut the text
// it looks for.
func TestAttemptsMatchWholePrompt(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("context ", maxPromptExcerpt/8) + "Say hi" + strings.Repeat(" context", maxPromptExcerpt/8)
	body, err := json.Marshal(map[string]any{"model": "m", "stream": true, "messages": []map[string]string{{"role": "user", "content": long}}})
	if err != nil {
		t.Fatal(err)
	}
	f := wire.Must(wire.ProviderOpenAI)
	if strings.Contains(readRequest(f, nil, body).Prompt, "Say hi") {
		t.Fatal("the journal's excerpt kept the middle of the prompt: the test does not test the cut")
	}
	if m := (&scenario.AttemptsMatch{Prompt: "Say hi"}); !m.Matches("/v1/chat/completions", readWhole(f, nil, body)) {
		t.Error("attemptsMatch.prompt did not match the whole prompt")
	}
}
