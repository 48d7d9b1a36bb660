// Package provider holds streaming clients for the Anthropic Messages API
// (POST /v1/messages, SSE) and the OpenAI chat completions API
// (POST /v1/chat/completions, SSE). A client makes exactly one attempt per
// call and never retries: a failed attempt returns a *Error carrying what the
// retry package's classifier reads. No API key ever appears in an error.
package provider
