package mock

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// TestRequestPrompt: the journal's prompt is the last user message's text,
// in either wire format, bounded and valid UTF-8 whatever the body.
func TestRequestPrompt(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 3000) + "END"
	for _, tc := range []struct {
		name, body, want string
	}{
		{"anthropic string", `{"model":"m","messages":[{"role":"user","content":"Say hello."}]}`, "Say hello."},
		{"anthropic blocks", `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]}]}`, "a\nb"},
		{"openai last user", `{"messages":[{"role":"system","content":"sys"},{"role":"user","content":"first"},{"role":"assistant","content":"x"},{"role":"user","content":"second"}]}`, "second"},
		{"openai parts", `{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, "hi"},
		{"no user", `{"messages":[{"role":"assistant","content":"x"}]}`, ""},
		{"not JSON", `hello`, ""},
		{"content neither", `{"messages":[{"role":"user","content":42}]}`, ""},
		{"empty", ``, ""},
	} {
		if got := requestPrompt([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: requestPrompt = %q, want %q", tc.name, got, tc.want)
		}
	}
	got := requestPrompt([]byte(`{"messages":[{"role":"user","content":"` + long + `"}]}`))
	if len(got) > maxPromptExcerpt+len(" … ") || !utf8.ValidString(got) || !strings.HasPrefix(got, "éé") || !strings.HasSuffix(got, "END") || !strings.Contains(got, " … ") {
		t.Errorf("long prompt: %d bytes, valid %v, head %q, tail %q", len(got), utf8.ValidString(got), got[:4], got[len(got)-4:])
	}
	if got := requestPrompt([]byte("{\"messages\":[{\"role\":\"user\",\"content\":\"a\xffb\"}]}")); !utf8.ValidString(got) {
		t.Errorf("invalid UTF-8 kept: %q", got)
	}
}

// TestOKText: an ok fault's text replaces the mock's answer in both wire
// formats and its usage counts its words.
func TestOKText(t *testing.T) {
	t.Parallel()
	for _, prov := range []string{wire.ProviderAnthropic, wire.ProviderOpenAI} {
		p := respParams{provider: prov, model: "m", fault: scenario.Fault{Kind: fault.OK{Text: "one two three"}}, asks: wire.Asks{IncludeUsage: true}}
		body := string(okResponse(p).Bytes())
		if !strings.Contains(body, "one two three") || strings.Contains(body, "Retries are a contract") {
			t.Errorf("%s: response does not carry the ok text:\n%.400s", prov, body)
		}
		tokens := `"output_tokens":3`
		if prov == wire.ProviderOpenAI {
			tokens = `"completion_tokens":3`
		}
		if !strings.Contains(body, tokens) {
			t.Errorf("%s: usage does not count the text's 3 words (%s):\n%s", prov, tokens, body)
		}
	}
	p := respParams{provider: wire.ProviderAnthropic, fault: scenario.Fault{Kind: fault.OK{}}}
	if body := string(okResponse(p).Bytes()); !strings.Contains(body, "Retries are a contract") {
		t.Errorf("ok: {} must answer the mock's default text")
	}
}

// FuzzRequestPrompt: whatever a request body holds, the journal's prompt is
// valid UTF-8 and bounded.
func FuzzRequestPrompt(f *testing.F) {
	f.Add(`{"messages":[{"role":"user","content":"Say hello."}]}`)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"text","text":"a\u0000b"}]}]}`)
	f.Add("{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}")
	f.Fuzz(func(t *testing.T, body string) {
		got := requestPrompt([]byte(body))
		if !utf8.ValidString(got) || len(got) > maxPromptExcerpt+len(" … ") {
			t.Errorf("requestPrompt = %d bytes, valid %v", len(got), utf8.ValidString(got))
		}
	})
}

// TestRequestDecodedOnce: messages of any shape never spoil the fields that
// shape the answer, and give no prompt.
func TestRequestDecodedOnce(t *testing.T) {
	t.Parallel()
	rb := readRequest(wire.Must(wire.ProviderAnthropic), nil, []byte(`{"model":"m","stream":true,"messages":5}`))
	if rb.Model != "m" || !rb.Stream || rb.Prompt != "" {
		t.Errorf("readRequest = %+v", rb)
	}
}

// requestPrompt is the journal's prompt of a Messages or Chat Completions
// request body.
func requestPrompt(body []byte) string {
	return readRequest(wire.Must(wire.ProviderAnthropic), nil, body).Prompt
}

// requestFields returns the model, stream and include_usage the mock reads
// of a Chat Completions request body.
func requestFields(body []byte) (model string, stream, includeUsage bool) {
	r := readRequest(wire.Must(wire.ProviderOpenAI), nil, body)
	return r.Model, r.Stream, r.IncludeUsage
}

// FuzzReadRequest feeds arbitrary bodies to every wire format's request
// parser (wire.Format.Read, as readRequest bounds it): none panics, the
// prompt is valid UTF-8 and bounded, the model at most 200 bytes.
func FuzzReadRequest(f *testing.F) {
	f.Add(`{"model":"gpt-4o-mini","stream":true,"input":"Say hello."}`)
	f.Add(`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image"}]}]}`)
	f.Add(`{"input":[{"type":"message","role":"user","content":"x"},{"role":"assistant","content":5}]}`)
	f.Add(`{"messages":[{"role":"user","content":"Say hello."}],"stream_options":{"include_usage":true}}`)
	f.Add(`{"input":`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, name := range wire.Names() {
			r := readRequest(wire.Must(name), nil, []byte(body))
			if !utf8.ValidString(r.Prompt) || len(r.Prompt) > maxPromptExcerpt+len(" … ") || len(r.Model) > 200 {
				t.Errorf("%s: prompt %d bytes (valid %v), model %d bytes", name, len(r.Prompt), utf8.ValidString(r.Prompt), len(r.Model))
			}
		}
	})
}

// TestResponsesPrompt: the journal's prompt of a Responses API request is
// its input string, or the text of its last user item.
func TestResponsesPrompt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"string", `{"input":"Say hello."}`, "Say hello."},
		{"items", `{"input":[{"role":"user","content":"first"},{"role":"assistant","content":"x"},{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image"},{"type":"input_text","text":"b"}]}]}`, "a\nb"},
		{"no input", `{"model":"m"}`, ""},
		{"not JSON", `{"input":`, ""},
	} {
		if got := readRequest(wire.Must(wire.ProviderResponses), nil, []byte(tc.body)).Prompt; got != tc.want {
			t.Errorf("%s: prompt %q, want %q", tc.name, got, tc.want)
		}
	}
}
