package wire

import "fmt"

// This file holds two error answers whose bytes differ by format in more
// than a type and a message: a context overflow (each API words it its own
// way, with its own numbers), and an sseError fault met by a request that
// did not ask for a stream (the provider answers that with an error status,
// not with a stream).

// ContextLength is a context-overflow error: a 400 invalid_request_error
// whose message gives the request's size and the model's limit, as each
// API words it. Form is ContextPrompt (the prompt alone is over the limit)
// or ContextMaxTokens (the prompt and max_tokens together are). Zero
// numbers are the format's usual ones (ContextNumbers).
type ContextLength struct {
	Form      string
	Tokens    int // the request's input tokens
	Limit     int // the model's context window
	MaxTokens int // the request's max_tokens (ContextMaxTokens)
}

// The forms of a context overflow, and the errorType of a status fault
// that asks for the ContextPrompt form with the usual numbers.
const (
	ContextPrompt    = "prompt"
	ContextMaxTokens = "maxTokens"
	ContextErrorType = "context_length"
)

// ContextNumbers returns c with its zero numbers filled in for format f: a
// limit of 200000 tokens for Anthropic, 128000 for OpenAI chat, 272000 for
// Responses, 1048576 for Gemini; in the prompt form 7.5% more tokens than
// the limit (215000 > 200000); in the max_tokens form a max_tokens of 32000
// and an input that leaves it 12000 short.
func ContextNumbers(f Format, c ContextLength) ContextLength {
	if c.Form == "" {
		c.Form = ContextPrompt
	}
	if c.Limit == 0 {
		switch f.(type) {
		case openai:
			c.Limit = 128000
		case responses:
			c.Limit = 272000
		case gemini:
			c.Limit = 1048576
		default:
			c.Limit = 200000
		}
	}
	if c.Form == ContextMaxTokens {
		if c.MaxTokens == 0 {
			c.MaxTokens = 32000
		}
		if c.Tokens == 0 {
			c.Tokens = max(c.Limit-c.MaxTokens+12000, 1)
		}
		return c
	}
	if c.Tokens == 0 {
		c.Tokens = c.Limit + c.Limit*3/40
	}
	return c
}

// contextBody is the error body of a context overflow in p's format
// (Fault.Context, or a status fault with errorType context_length), "\n"
// included; ok false when p's fault is not one. Each body is the one the
// API sends (as its users quote it):
//
//	Anthropic  {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"},"request_id":…}
//	           "input length and `max_tokens` exceed context limit: 188000 + 32000 > 200000, decrease input length or `max_tokens` and try again"
//	OpenAI     {"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 137600 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}
//	           "… However, you requested N tokens (X in the messages, Y in the completion). Please reduce the length of the messages or completion."
//	Responses  {"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}
//	Gemini     {"error":{"code":400,"message":"The input token count (1127219) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}
//
// Responses and Gemini have one form; Gemini's counts input tokens only,
// so its max_tokens form reports the input and max_tokens together as the
// count that is over the limit. A scenario's message replaces the API's.
func contextBody(p Params) (string, bool) {
	c := p.Fault.Context
	if c == nil && p.Fault.ErrorType != ContextErrorType {
		return "", false
	}
	if c == nil {
		c = &ContextLength{}
	}
	n := ContextNumbers(p.Format, *c)
	msg := p.Fault.Message
	switch p.Format.(type) {
	case anthropic:
		if msg == "" {
			msg = fmt.Sprintf("prompt is too long: %d tokens > %d maximum", n.Tokens, n.Limit)
			if n.Form == ContextMaxTokens {
				msg = fmt.Sprintf("input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again",
					n.Tokens, n.MaxTokens, n.Limit)
			}
		}
		return jsonString(anthropicErrorBody{"error", anthropicError{"invalid_request_error", msg}, p.RequestID}) + "\n", true
	case openai, responses:
		param := "messages"
		if _, ok := p.Format.(responses); ok {
			param = "input"
			if msg == "" {
				msg = "Your input exceeds the context window of this model. Please adjust your input and try again."
			}
		}
		if msg == "" {
			msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", n.Limit, n.Tokens)
			if n.Form == ContextMaxTokens {
				msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
					n.Limit, n.Tokens+n.MaxTokens, n.Tokens, n.MaxTokens)
			}
		}
		code := "context_length_exceeded"
		return jsonString(openaiErrorBody{openaiError{msg, "invalid_request_error", &param, &code}}) + "\n", true
	case gemini:
		count := n.Tokens
		if n.Form == ContextMaxTokens {
			count += n.MaxTokens
		}
		if msg == "" {
			msg = fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", count, n.Limit)
		}
		return jsonString(geminiErrorBody{geminiStatus{Code: p.Fault.Status, Message: msg, Status: GeminiStatus(p.Fault.Status)}}) + "\n", true
	}
	return "", false
}

// openaiOverloaded is the message of the OpenAI APIs' 503 for an overload.
const openaiOverloaded = "That model is currently overloaded with other requests. You can retry your request, " +
	"or contact us through our help center at help.openai.com if the error persists."

// NonStreamedError is p with its sseError fault turned into the error
// answer the provider sends a request that did not ask for a stream: the
// HTTP status of the error type, and the format's error body for it.
//
//	Anthropic  the type's status (overloaded_error 529, api_error 500,
//	           rate_limit_error 429, invalid_request_error 400 …), the
//	           type and message as the stream's error event has them;
//	OpenAI,    the status the type stands for (overloaded_error and
//	Responses  server_is_overloaded 503, api_error and server_error 500,
//	           rate_limit_exceeded 429, context_length_exceeded 400 …)
//	           with the API's body for it: type server_error and code null
//	           for a 5xx, an OpenAI code kept as the code (Responses
//	           answers a failed non-streamed response with the same error
//	           body, not with response.failed);
//	Gemini     the code and status name of its error frame (overloaded_error
//	           503 UNAVAILABLE), the same message.
func NonStreamedError(p Params) Params {
	s := p.Fault.SSEError
	typ := sseErrorType(s)
	q := p
	q.Fault.SSEError = nil
	q.Fault.Status = sseErrorStatus(p.Format, typ)
	q.Fault.ErrorType, q.Fault.Code, q.Fault.Message = typ, "", sseErrorMessage(s)
	switch p.Format.(type) {
	case gemini:
		code, name := GeminiCode(typ)
		q.Fault.Status, q.Fault.ErrorType = code, name
		if s.Message == "" {
			q.Fault.Message = geminiMessage(name, typ)
		}
	case openai, responses:
		q.Fault.ErrorType = ""
		if _, ok := openaiCodes[typ]; ok {
			q.Fault.Code = typ
		}
		if s.Message == "" {
			q.Fault.Message = defaultMessage(typ)
			if q.Fault.Status == 503 {
				q.Fault.Message = openaiOverloaded
			}
		}
	}
	return q
}

// openaiCodes are the OpenAI error codes an sseError fault may name that
// the API sends as a body's code.
var openaiCodes = map[string]bool{
	"rate_limit_exceeded": true, "insufficient_quota": true, "server_error": true, "server_is_overloaded": true,
	"slow_down": true, "context_length_exceeded": true, "invalid_api_key": true, "model_not_found": true,
	"invalid_prompt": true, "billing_not_active": true,
}

// sseErrorStatus is the HTTP status an error type is sent with by format
// f: for Anthropic the status its type has (overloaded_error 529), for the
// others the one it stands for (geminiTypes: overloaded_error 503), a
// google.rpc.Code name its own; anything else 500.
func sseErrorStatus(f Format, typ string) int {
	if _, ok := f.(anthropic); ok {
		for _, st := range []int{400, 401, 402, 403, 404, 413, 429, 500, 529, 504} {
			if AnthropicErrorType(st) == typ {
				return st
			}
		}
	}
	if code, ok := geminiCodes[typ]; ok {
		return code
	}
	if code, ok := geminiTypes[typ]; ok {
		return code
	}
	switch typ {
	case "context_length_exceeded", "context_length":
		return 400
	case "server_is_overloaded", "slow_down":
		return 503
	case "billing_not_active":
		return 429
	}
	return 500
}
