package fault

import (
	"fmt"
	"net/http"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/internal/yamldiag"
	"github.com/retrylab/retrylab/retry/provider"
)

// ContextOverflow is a 400 that says the request does not fit the model's
// context window, in the format's own words and numbers
// (wire.ContextLength): Anthropic's "prompt is too long: 215000 tokens >
// 200000 maximum" (form prompt) or "input length and `max_tokens` exceed
// context limit: 188000 + 32000 > 200000, …" (form maxTokens, which Claude
// Code answers by re-sending with a smaller max_tokens); OpenAI's
// context_length_exceeded ("This model's maximum context length is …");
// the Responses API's "Your input exceeds the context window of this
// model."; Gemini's 400 INVALID_ARGUMENT "The input token count (N)
// exceeds the maximum number of tokens allowed (M).". Zero numbers are the
// format's usual ones (wire.ContextNumbers). The same body, with the usual
// numbers, is a status fault's errorType: context_length.
type ContextOverflow struct {
	Form      string `yaml:"form"`      // prompt (default) or maxTokens
	Tokens    int    `yaml:"tokens"`    // the request's input tokens
	Limit     int    `yaml:"limit"`     // the model's context window
	MaxTokens int    `yaml:"maxTokens"` // the request's max_tokens (form maxTokens)
	Message   string `yaml:"message"`   // the error message, replacing the API's
}

func init() { Register(Def{Kind: ContextOverflow{}, Order: 85, Decode: decodeContextOverflow}) }

// decodeContextOverflow decodes contextOverflow: {} or its keys (the
// loader rejects negative numbers and unknown keys); the numbers must say
// an overflow (tokens over limit; tokens + maxTokens over
// it in the maxTokens form), or the message would contradict itself.
func decodeContextOverflow(m *Mapping) Kind {
	var c *ContextOverflow
	m.Decode("contextOverflow", &c)
	if c == nil {
		return nil // contextOverflow: null is no fault, as drop: null is; {} is the usual overflow
	}
	fields := yamldiag.Fields(m.Value("contextOverflow"))
	node := func(k string) *yaml.Node { // the key's value, else the mapping
		if n := fields[k]; n != nil {
			return n
		}
		return m.Value("contextOverflow")
	}
	path := func(k string) string { return yamldiag.Join(m.Path("contextOverflow"), k) }
	switch c.Form {
	case "", wire.ContextPrompt, wire.ContextMaxTokens:
	default:
		m.Errorf(node("form"), path("form"), "write form: prompt (the prompt alone is over the limit) or form: maxTokens (prompt and max_tokens together are)",
			"form %q is not a form of context overflow", c.Form)
		return nil
	}
	if c.MaxTokens > 0 && c.Form != wire.ContextMaxTokens {
		m.Errorf(node("maxTokens"), path("maxTokens"), "add form: maxTokens, or remove maxTokens", "maxTokens is only in the maxTokens form")
		return nil
	}
	if c.Tokens > 0 && c.Limit > 0 {
		if c.Form == wire.ContextMaxTokens && c.MaxTokens > 0 && c.Tokens+c.MaxTokens <= c.Limit {
			m.Errorf(node("tokens"), path("tokens"), "make tokens + maxTokens more than limit: it is an overflow",
				"tokens %d + maxTokens %d fit in limit %d", c.Tokens, c.MaxTokens, c.Limit)
			return nil
		}
		if c.Form != wire.ContextMaxTokens && c.Tokens <= c.Limit {
			m.Errorf(node("tokens"), path("tokens"), "make tokens more than limit: it is an overflow", "tokens %d fit in limit %d", c.Tokens, c.Limit)
			return nil
		}
	}
	return *c
}

func (ContextOverflow) Name() string { return "contextOverflow" }

func (c ContextOverflow) Describe() string {
	d := "400 context overflow"
	if c.Form == wire.ContextMaxTokens {
		d += " (max_tokens)"
	}
	if c.Tokens > 0 || c.Limit > 0 {
		d += fmt.Sprintf(" %d > %d", c.Tokens+c.MaxTokens, c.Limit)
	}
	return d
}

// Serve sends the wire format's error answer.
func (ContextOverflow) Serve(sv Serving) { sv.Answer(true, nil) }

func (c ContextOverflow) Wire(f *wire.Fault) {
	f.Status, f.Message = http.StatusBadRequest, c.Message
	f.Context = &wire.ContextLength{Form: c.Form, Tokens: c.Tokens, Limit: c.Limit, MaxTokens: c.MaxTokens}
}

func (ContextOverflow) HTTPStatus() int { return http.StatusBadRequest }

func (ContextOverflow) ResponseHeaders(Met) http.Header { return http.Header{} }

// Failure is the 400 a client meets: invalid_request_error with code
// context_length_exceeded (the OpenAI formats' code; the other formats say
// it in their message), which the retry core classifies context_too_long.
func (c ContextOverflow) Failure(pe *provider.Error, _ Met) {
	pe.Kind, pe.Status, pe.ErrorType, pe.Code = provider.KindHTTP, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded"
	pe.Message = c.Message
	if pe.Message == "" {
		pe.Message = "context length exceeded"
	}
}
