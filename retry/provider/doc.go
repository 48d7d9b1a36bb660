// Package provider holds streaming clients for the Anthropic Messages API
// (POST /v1/messages, SSE), the OpenAI chat completions API
// (POST /v1/chat/completions, SSE), the OpenAI Responses API
// (POST /v1/responses, SSE) and the Gemini API
// (POST /v1beta/models/{model}:streamGenerateContent?alt=sse), one file
// each, registered by name for New ("anthropic", "openai",
// "openai-responses", "gemini"). A client makes exactly one attempt per
// call and never retries: a failed attempt returns a *Error carrying what the
// retry package's classifier reads. No API key ever appears in an error.
//
// What callers may rely on, for every failed attempt (always a *Error):
//
//   - Non-2xx response: KindHTTP with Status, the body's error type and
//     message (Anthropic error.type; OpenAI error.type and error.code),
//     RequestID (request-id / x-request-id header, else the body's
//     request_id), the Retry-After wait as ParseRetryAfter reads it, and
//     ShouldRetry from x-should-retry ("true"/"false"; nil otherwise).
//   - An SSE `error` event (Anthropic), or a chunk with an "error" object
//     (OpenAI): KindSSEError with ErrorType = data.error.type, never the
//     top-level "type" (which is always "error"), and Code = error.code.
//     In a Responses stream, response.failed: KindSSEError with Code =
//     response.error.code (rate_limit_exceeded, server_error, ...) and
//     Message = response.error.message; an `error` event: Code = its code.
//   - The stream ends before message_stop (Anthropic), `data: [DONE]`
//     (OpenAI) or response.completed (Responses), or reaches it without a
//     stop_reason (finish_reason), or ends with response.incomplete: the
//     response was cut (seed 000 R1: "stream ended without stop_reason" is
//     StreamTransient), KindIncomplete. Streamed says whether any content
//     delta had arrived, Text holds the text that had.
//   - A body read fails after a 2xx status (connection reset, unexpected EOF
//     of a chunked body): KindIncomplete with Err set, because downstream a
//     mid-stream drop is a stream interruption, not a connection failure.
//   - Malformed JSON in a data line: KindParse.
//   - Config.Timeout fires, or the network reports a timeout: KindTimeout,
//     whether before or during the body.
//   - Connection refused: KindRefused; reset or broken pipe before a
//     response: KindReset; the server closes the connection before sending a
//     response (EOF / unexpected EOF): KindEOF; any other transport error:
//     KindNetwork.
//   - The caller's context is done (canceled or its own deadline passed):
//     KindCanceled, which wins over every other kind. The per-attempt timeout
//     is told apart from it by its context cause.
//
// Error strings never contain Config.APIKey nor anything shaped like an
// sk-... key: transport errors and server messages are scrubbed, while
// errors.Is/As still reach the underlying error through Unwrap.
//
// SSEReader is the event-stream parser every client uses; it follows the
// WHATWG rules byte for byte and can be used on its own.
package provider
