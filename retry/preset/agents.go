package preset

import (
	"time"

	"github.com/retrylab/retrylab/retry"
)

// The presets of this file model coding agents and agent SDKs that people
// run unattended, each measured against retrylab's mock (docs/agents.md has
// the command lines and the figures) and, where its source is readable, read
// from it. Where a measurement disagreed with what was said of a client, the
// measurement won, and the doc comment says so.

// ClaudeCode models Claude Code (@anthropic-ai/claude-code 2.1.332, npm; a
// native binary, its JavaScript bundled inside), run as `claude -p`.
//
// Measured (scenarios/agents, docs/agents.md): 429, 500, 503, 529, 401 and
// a connection reset are retried after 500ms × 2^(n−1), capped at 32s, plus
// up to 25% (gaps 0.59–0.64s, 1.07–1.29s, 2.08–2.43s, 4.4s, 9.7s, 19.5s,
// then 36.0s, 36.0s, 37.4s, 39.6s at the cap); 10 retries (11 attempts)
// by default, CLAUDE_CODE_MAX_RETRIES=3 gives 3; retry-after is read in
// seconds and the wait is max(retry-after × (1 + up to 25%), the backoff)
// (2s → 2.32s; 3s → 3.70s; 0 → the backoff), read in the bundle as
// `Math.max(Math.round(a*(1+u)),i)` with u = random × 0.25 and a =
// parseInt(retry-after) × 1000: so an HTTP-date is no value (the backoff:
// 572, 734ms for a date in 2099) and "2.5" is 2s (retryAfter.integerPart);
// retry-after-ms is ignored (100 → 1.19s, the backoff). A retry-after
// above 60s is not waited: Claude Code gives up at once (5 … 20s and 60s
// waited, e.g. 19 → 19.8s, 60 → 72.4s; 61, 300, 1000, 3599, 3600 → exit 1
// after one attempt within a few seconds, on a 429 and a 529 alike):
// retryAfter.ceiling 60s.
// x-should-retry: false is obeyed on a 429, 500 and 529 (one attempt) but
// not on a 503, which is retried with the backoff (556, 1109ms; 821,
// 1353, 2586ms): shouldRetryIgnored [503].
//
// A stream cut mid-way is retried after the backoff of the attempt's
// number within its request (0.63s, 1.22s, 2.43s for three cuts; 529,
// 529, cut: 609, 1253, 2099ms), not at once, and the backoff loop of HTTP
// errors then counts from 1 again (cut, 529, 529: 626, 646, 1225ms; cut,
// reset: 703, 544ms; 529, 529, cut, 529: the last waits 528ms): a loop of
// its own (resends, inRequest, restart), 11 attempts like the rest (its
// own limit was not measured).
//
// Three failures are re-sent at once outside the backoff loop (resends):
// a 400 or a 422 with an adjusted body (another SHA-256), up to 5 times in
// all (400 × 8, 422 × 8, 400/422 alternating: 6 attempts, then exit 1;
// gaps 2–60ms); a 404 once (404 × 8:
// 2 attempts, three times); an error event inside the stream
// (overloaded_error, api_error, rate_limit_error after 3 events, and
// invalid_request_error, which classifies as stream_parse: chaos probe's
// journal, re-sent after 27ms) once,
// without streaming, and the backoff loop then counts from 1 again (529,
// 529, SSE error, 529: 625, 1113, 8, 629ms). A 400 or a 404 re-send does
// not count as an attempt of the backoff loop (529, 400, 529: 652, 7,
// 1217ms; 404, 529, 529: 11, 713, 1122ms).
//
// Not modelled (noStream: chaos reports the waits around such a fault as
// unverified): an error event before the first event of the stream
// (afterEvents: 0) is retried streaming on a counter of its own after the
// backoff (575ms, then a 529 waits 558ms), not re-sent at once; an error
// event's fault met by the non-streaming re-send (the mock answered it with
// a stream until issue 29, and Claude Code gave up on a stream it did not
// ask for; it now answers with the type's HTTP error, a 529 for
// overloaded_error, as the provider does, and what Claude Code does then
// is not measured yet); with --fallback-model, three
// 529s in a row (or one 500/503) switch model at once (an escalation the
// journal shows; chaos checks it without a trace).
func ClaudeCode() *retry.Policy {
	t := retry.Strategy{Retry: true, MaxAttempts: 11, InitialDelay: 500 * time.Millisecond, MaxDelay: 32 * time.Second,
		Multiplier: 2, Kind: retry.Exponential, Jitter: retry.AdditiveJitter, JitterFraction: 0.25, RespectRetryAfter: true}
	atOnce := func(attempts int) retry.Strategy {
		return retry.Strategy{Retry: true, MaxAttempts: attempts, Kind: retry.NoBackoff, Jitter: retry.NoJitter, Multiplier: 2}
	}
	return &retry.Policy{
		Name: "claude-code", Enabled: true, Default: off(t),
		FailureTypes: withTypes(t, retry.RateLimit, retry.Overloaded, retry.ServerError, retry.ProviderUnavailable, retry.UnsupportedFeature,
			retry.Timeout, retry.ConnectionError, retry.NetworkError, retry.Conflict, retry.StreamInterrupted, retry.AuthInvalid),
		StatusRetry:        map[int]bool{401: true, 408: true, 409: true, 429: true},
		HonorShouldRetry:   true,
		ShouldRetryIgnored: []int{503},
		StreamErrors:       true,
		Resends: []retry.Resend{
			{Statuses: []int{400, 422}, Strategy: atOnce(6)},
			{Statuses: []int{404}, Strategy: atOnce(2)},
			{Streamed: true, Types: []retry.FailureType{retry.Overloaded, retry.ServerError, retry.RateLimit, retry.InvalidRequest, retry.StreamParse}, Strategy: atOnce(2), Restart: true,
				NoStream: true},
			{Streamed: true, Types: []retry.FailureType{retry.StreamInterrupted}, Strategy: t, Restart: true, InRequest: true},
		},
		RetryAfter: retry.RetryAfter{Header: retry.HeaderRetryAfter, Jitter: 0.25, Floor: true, Zero: retry.ZeroBackoff,
			Ceiling: 60 * time.Second, IntegerPart: true},
	}
}

// VercelAISDK models the Vercel AI SDK (npm `ai` 7.0.173, with
// @ai-sdk/anthropic 4.0.105 and @ai-sdk/openai 4.0.118): streamText and
// generateText wrap each call in retryWithExponentialBackoff
// (packages/ai/src/util/retry-with-exponential-backoff.ts): maxRetries 2
// (3 attempts), initial delay 2s, factor 2, no jitter; an APICallError whose
// isRetryable is set is retried (the providers set it for 408, 409, 429
// and every status ≥ 500, and for a fetch that failed before a response);
// retry-after-ms, else retry-after (seconds or an HTTP-date), is used when
// it is between 0 and 60s or below the backoff, else the backoff.
// Measured in docs/agents.md.
func VercelAISDK() *retry.Policy {
	t := retry.Strategy{Retry: true, MaxAttempts: 3, InitialDelay: 2 * time.Second, Multiplier: 2,
		Kind: retry.Exponential, Jitter: retry.NoJitter, RespectRetryAfter: true}
	return &retry.Policy{
		Name: "vercel-ai-sdk", Enabled: true, Default: off(t),
		FailureTypes: withTypes(t, retry.RateLimit, retry.Overloaded, retry.ServerError, retry.ProviderUnavailable, retry.UnsupportedFeature,
			retry.Timeout, retry.ConnectionError, retry.NetworkError, retry.Conflict),
		StatusRetry: map[int]bool{408: true, 409: true, 429: true},
		RetryAfter:  retry.RetryAfter{MaxUsable: 60 * time.Second, Zero: retry.ZeroImmediate},
	}
}

// LangChainJS models @langchain/anthropic 1.5.11 over @langchain/core 1.4.0,
// read from @langchain/core's dist/utils/async_caller.js (AsyncCaller,
// defaultFailedAttemptHandler, classifyRateLimitError) and its vendored
// p-retry (dist/utils/p-retry/index.js); the Anthropic SDK it wraps is
// built with maxRetries 0 (chat_models.js), so these are the only retries.
//
// 6 retries (7 attempts); the wait before retry n is round((1 + random) ×
// 1s × 2^(n−1)): 1–2s, 2–4s, 4–8s, ... with no cap (p-retry's randomize,
// minTimeout 1000, factor 2). 400, 401, 402, 403, 404, 405, 406, 407, 409
// and 413 are not retried (STATUS_NO_RETRY), every other error is. A 429
// is retried only with a retry-after header (seconds or an HTTP-date) or a
// "try again in Ns" message of at most 60s, and then waits max(backoff,
// retry-after); a 429 without one, or over 60s, or with a quota message, is
// thrown at once. retry-after-ms is not read. With .stream(), the retried
// call ends at the response headers: an error inside the stream is thrown
// to the caller, not retried. Measured in docs/agents.md.
func LangChainJS() *retry.Policy {
	t := retry.Strategy{Retry: true, MaxAttempts: 7, InitialDelay: time.Second, Multiplier: 2,
		Kind: retry.Exponential, Jitter: retry.AdditiveJitter, JitterFraction: 1, RespectRetryAfter: true}
	return &retry.Policy{
		Name: "langchain-js", Enabled: true, Default: t,
		FailureTypes: map[retry.FailureType]retry.Strategy{
			retry.InvalidRequest: off(t), retry.AuthInvalid: off(t), retry.PermissionDenied: off(t), retry.BillingError: off(t),
			retry.ModelNotFound: off(t), retry.Conflict: off(t), retry.ContextTooLong: off(t), retry.QuotaExhausted: off(t),
			retry.ContentPolicy: off(t), retry.AccountSuspended: off(t), retry.Canceled: off(t),
		},
		StatusRetry: map[int]bool{400: false, 401: false, 402: false, 403: false, 404: false, 405: false, 406: false,
			407: false, 409: false, 413: false, 408: true},
		RetryAfter: retry.RetryAfter{Header: retry.HeaderRetryAfter, Ceiling: 60 * time.Second, Floor: true,
			RequiredFor: []retry.FailureType{retry.RateLimit}},
	}
}

// CodexCLI models Codex CLI (@openai/codex 0.171.0, npm; a native binary),
// run as `codex exec` with a custom provider on the Responses API
// (testdata/agents/codex.sh), measured against the mock (docs/agents.md).
//
// Codex nests two loops. The inner one retries an HTTP error before the
// stream: up to 4 retries (5 attempts) after 200ms × 2^(n−1) ± 10% (gaps
// 213, 396, 791, 1617ms). The outer one reconnects after a stream that
// failed (a cut, a response.failed event) or after the inner loop gave up:
// up to 5 reconnects ("Reconnecting... 1/5"), with the same backoff on its
// own counter (225, 453, 787, 1774, 3409ms between the inner rounds), so a
// steady 503 makes 6 × 5 = 30 requests. This preset is the inner loop for
// HTTP errors and the outer one for stream errors: right as long as a
// scenario keeps to one kind (at most 4 HTTP errors in a row, or stream
// errors alone). 503, 500, 502, 401, 408 and 409 are retried, 400 is not;
// a 402, 403, 413 or 422 is not retried by the inner loop but reconnected
// by the outer one, 5 times, after 200ms × 2^(n−1) ± 10% (403 × 8: 6
// attempts, then exit 1, three times; gaps 231, 446, 802, 1487, 3301ms;
// 230, 466, 781, 1562, 3164ms; 402 × 8: 229, 447, 887, 1679, 3297ms; 413 ×
// 8: 218, 443, 873, 1511, 3396ms; 422 × 8: 253, 385, 826, 1662, 3284ms):
// statusRetry, and 6 attempts for their types;
// a 429 is retried only with a retry-after header (2s → 2.01s), which is
// read in seconds (0 and an HTTP-date in the past: at once) and replaces
// the backoff, and retry-after-ms is ignored (1.5s → the 200ms backoff; a
// 429 with retry-after-ms alone is not retried). "Try again in 1.5s" in
// an error's message (a response.failed event) is waited like a
// retry-after (1.57s measured): retryAfter.message.
func CodexCLI() *retry.Policy {
	t := retry.Strategy{Retry: true, MaxAttempts: 5, InitialDelay: 200 * time.Millisecond, Multiplier: 2,
		Kind: retry.Exponential, Jitter: retry.ProportionalJitter, JitterFraction: 0.1, RespectRetryAfter: true}
	reconnect := t
	reconnect.MaxAttempts = 6
	types := withTypes(t, retry.RateLimit, retry.Overloaded, retry.ServerError, retry.ProviderUnavailable, retry.UnsupportedFeature,
		retry.Timeout, retry.ConnectionError, retry.NetworkError, retry.Conflict, retry.StreamInterrupted, retry.AuthInvalid)
	for _, ft := range []retry.FailureType{retry.PermissionDenied, retry.QuotaExhausted, retry.ContextTooLong, retry.InvalidRequest} {
		types[ft] = off(reconnect) // retried by status (statusRetry): 402, 403, 413, 422, not 400
	}
	return &retry.Policy{
		Name: "codex-cli", Enabled: true, Default: off(t),
		FailureTypes: types,
		StatusRetry:  map[int]bool{401: true, 402: true, 403: true, 408: true, 409: true, 413: true, 422: true},
		StreamErrors: true,
		RetryAfter: retry.RetryAfter{Header: retry.HeaderRetryAfter, Zero: retry.ZeroImmediate, Negative: retry.NegativeZero,
			RequiredFor: []retry.FailureType{retry.RateLimit}, Message: true},
	}
}

// Aider models aider 0.86.2 (PyPI aider-chat, with its own pins litellm
// 1.81.10 and openai 2.20.0), run headless (testdata/python/aider.sh),
// read from aider/coders/base_coder.py (Coder.send_message),
// aider/exceptions.py (EXCEPTIONS) and aider/models.py (RETRY_TIMEOUT),
// and measured by chaos probe (probe/testdata/agents/aider.json).
//
// Two loops nest. The inner one is the OpenAI SDK's under LiteLLM
// (openai 2.20.0, src/openai/_base_client.py): openai-sdk's rules, 2
// retries after min(0.5s × 2ⁿ, 8s) minus up to 25%, 408, 409, 429, ≥ 500
// and connection errors, x-should-retry first, retry-after-ms then
// retry-after used when 0 < v ≤ 60s (the rule before openai 2.52.0). The
// outer one is aider's: an exception EXCEPTIONS marks retryable
// (APIConnectionError, APIError, InternalServerError,
// ServiceUnavailableError, RateLimitError, Timeout, …; not
// BadRequestError, AuthenticationError, NotFoundError,
// ContextWindowExceededError) is tried again after retry_delay, doubled
// from 0.125s before each sleep, no jitter, until it would pass
// RETRY_TIMEOUT (60s): 8 tries more after 0.25s … 32s. A steady 503 costs
// (1 + 8) × (1 + 2) = 27 attempts, and aider then exits 0. This preset is
// the inner loop for HTTP errors and aider's for what fails after the
// response began (an error event mid-stream, whatever its type, and a cut
// stream: re-sent after 0.25s, 0.5s, … without jitter, the SDK's loop
// starting again for each; resends, restart), as codex-cli's: right as
// long as a scenario keeps to at most 2 HTTP errors in a row, or to stream
// errors alone. Not modelled: aider's loop after the SDK gave up (a third
// HTTP error, or a 503 with x-should-retry: false, which the SDK refuses
// and aider sends again after 0.25s).
func Aider() *retry.Policy {
	p := sdkPreset("aider", retry.RetryAfter{Zero: retry.ZeroBackoff, Negative: retry.NegativeBackoff, MaxUsable: 60 * time.Second})
	p.Resends = []retry.Resend{{Streamed: true, Restart: true, Strategy: retry.Strategy{Retry: true, MaxAttempts: 9,
		InitialDelay: 250 * time.Millisecond, Multiplier: 2, Kind: retry.Exponential, Jitter: retry.NoJitter}}}
	return p
}
