package preset

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/ticket"
)

// presets maps a preset name to its constructor. Each constructor returns a
// fresh Policy, so callers may modify what Get returns.
var presets = map[string]func() *retry.Policy{
	"forgeflare":         Forgeflare,
	"plandex":            Plandex,
	"orchestrator":       Orchestrator,
	"escalation-epic":    EscalationEpic,
	"forge-ticket":       ForgeTicket,
	"anthropic-sdk":      AnthropicSDK,
	"openai-sdk":         OpenAISDK,
	"anthropic-node":     AnthropicNode,
	"anthropic-python":   AnthropicPython,
	"anthropic-python-2": AnthropicPython2,
	"anthropic-go":       AnthropicGo,
	"openai-node":        OpenAINode,
	"openai-node-7":      OpenAINode7,
	"openai-go":          OpenAIGo,
	"openai-python":      OpenAIPython,
	"gemini-sdk":         GeminiSDK,
	"gemini-cli":         GeminiCLI,
	"claude-code":        ClaudeCode,
	"codex-cli":          CodexCLI,
	"vercel-ai-sdk":      VercelAISDK,
	"langchain-js":       LangChainJS,
	"anthropic-java":     AnthropicJava,
	"openai-java":        OpenAIJava,
	"aider":              Aider,
}

// Names returns the preset names in a fixed order.
func Names() []string {
	return []string{"forgeflare", "plandex", "orchestrator", "escalation-epic", "forge-ticket", "anthropic-sdk", "openai-sdk",
		"anthropic-node", "anthropic-python", "anthropic-python-2", "anthropic-go", "openai-node", "openai-node-7", "openai-go", "openai-python", "gemini-sdk", "gemini-cli",
		"claude-code", "codex-cli", "vercel-ai-sdk", "langchain-js", "anthropic-java", "openai-java", "aider"}
}

// Get returns a fresh copy of the named preset. An unknown name is an
// error that lists the valid names.
func Get(name string) (*retry.Policy, error) {
	f, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy preset %q (valid: %s)", name, strings.Join(Names(), ", "))
	}
	return f(), nil
}

func withTypes(s retry.Strategy, types ...retry.FailureType) map[retry.FailureType]retry.Strategy {
	m := make(map[retry.FailureType]retry.Strategy, len(types))
	for _, ft := range types {
		m[ft] = s
	}
	return m
}

func off(s retry.Strategy) retry.Strategy { s.Retry = false; return s }

// Forgeflare reproduces seed 000 (forgeflare's R1–R4).
//
// Transient, retried: 429, 503, 529 and every other status ≥ 500 (types
// rate_limit, overloaded, server_error, provider_unavailable,
// unsupported_feature, and timeout for 504), every SSE error event but
// invalid_request_error (overloaded_error, api_error, rate_limit_error, and
// any other or absent error.type, even authentication_error or
// not_found_error: the seed names no other permanent SSE type), a stream that
// ended without stop_reason (stream_interrupted), timeouts and connection
// errors. A 429 is transient whatever its message
// (forgeflare looks at the status only), so quota-exhausted 429s are retried.
// Permanent: 400, 401, 403, 408 and every other 4xx but 429, any status
// below 400 that is not a success (a 304: unknown; R1 lists no 3xx as
// transient), StreamParse (invalid_request_error SSE events, malformed JSON:
// stream_parse), and every transport error that is neither a timeout nor a
// failure to connect (R1's other Api errors: network_error, for DNS
// resolution, TLS, an HTTP server on an https URL, an unsupported URL scheme;
// unknown for an error retrylab cannot identify).
//
// Waits: 5 attempts in all (4 retries), 2s, 4s, 8s, 16s, no jitter. A
// retry-after header of whole seconds replaces the backoff, capped at 60s, 0
// meaning at once; an HTTP-date or a fraction falls back to the backoff.
// retry-after-ms is not read (the seed parses retry-after only): a 429 with
// retry-after-ms alone waits the backoff. Only HTTP errors carry
// Retry-After. DNS resolution and TLS certificate failures are
// network_error and permanent, as R1 says. Choices where the seed is silent:
// no per-attempt timeout and no elapsed limit. The Retrier's log prints
// `[retry] Attempt {n}/4: {status} — waiting {delay}s`, with the failure type
// in place of {status} when there is no HTTP status.
func Forgeflare() *retry.Policy {
	t := retry.Strategy{Retry: true, MaxAttempts: 5, InitialDelay: 2 * time.Second, Multiplier: 2,
		Kind: retry.Exponential, Jitter: retry.NoJitter, RespectRetryAfter: true}
	p := &retry.Policy{
		Name: "forgeflare", Enabled: true, Default: off(t),
		// unknown is retried after the stream began only (StreamTransient):
		// an SSE error event of unknown type.
		FailureTypes: withTypes(t, retry.RateLimit, retry.Overloaded, retry.ServerError, retry.ProviderUnavailable, retry.UnsupportedFeature,
			retry.Timeout, retry.ConnectionError, retry.StreamInterrupted),
		StatusRetry:     map[int]bool{429: true, 408: false},
		StreamErrors:    true,
		StreamTransient: true,
		RetryAfter:      retry.RetryAfter{Header: retry.HeaderRetryAfter, Cap: 60 * time.Second, IntegerOnly: true},
	}
	return p
}

// Plandex reproduces seed 001's configuration table, per failure type:
//
//	rate_limit           5 attempts, 1s–60s  ×2, respects Retry-After
//	overloaded           5 attempts, 5s–120s ×2
//	server_error         3 attempts, 1s–30s  ×2
//	timeout              2 attempts, immediate
//	connection_error     3 attempts, 500ms–5s ×1.5
//	stream_interrupted   2 attempts, 1s–5s   ×1.5
//	cache_error          2 attempts (1 retry), no delay
//	provider_unavailable 3 attempts, 1s–10s  ×2
//
// Every other type fails fast (billing_error, conditional in the seed, is not
// retried: retrylab cannot know whether a payment went through).
//
// delay = initial × multiplier^attemptNumber with attemptNumber the 1-based
// number of the attempt that failed (ExponentStart 1), then full jitter,
// clamped to [0, max]. attemptNumber starts at 1 because that is the only
// reading under which the walkthrough's jittered examples are possible
// (1.4s after a first stream_interrupted attempt needs 1s × 1.5¹ = 1.5s as
// the bound; 7.2s after the second attempt's overload fits 5s × 2² = 20s).
//
// Retry-After: the value plus 10% padding replaces the backoff, for every
// type; a value above MaxProviderRetryAfterMs (10s) makes the error
// non-retryable. The walkthrough waits 13.2s on a 12s Retry-After, which its
// own configuration table forbids (12s > 10s ceiling): the preset follows the
// table, because the table is the documented default and the walkthrough
// shows a configured, non-default ceiling.
//
// Fallback chain: a retryable failure that persists through 3 failed attempts
// (MAX_RETRIES_WITHOUT_FALLBACK), or any non-retryable failure but
// cancellation, switches to a fallback when the Retrier has one:
// LargeContext for context_too_long, else Error, else Provider. The switch
// happens at once; the counter resets and the new target gets 1 attempt
// (MAX_ADDITIONAL_RETRIES_WITH_FALLBACK). Irreversible operations are never
// retried (PLANDEX_RETRY_IRREVERSIBLE=false).
func Plandex() *retry.Policy {
	st := func(n int, initial, max time.Duration, mult float64, kind retry.Kind) retry.Strategy {
		return retry.Strategy{Retry: true, MaxAttempts: n, InitialDelay: initial, MaxDelay: max, Multiplier: mult,
			Kind: kind, Jitter: retry.FullJitter, RespectRetryAfter: true}
	}
	return &retry.Policy{
		Name: "plandex", Enabled: true, ExponentStart: 1,
		Default: retry.Strategy{MaxAttempts: 1, Kind: retry.NoBackoff, Jitter: retry.NoJitter},
		FailureTypes: map[retry.FailureType]retry.Strategy{
			retry.RateLimit:           st(5, time.Second, 60*time.Second, 2, retry.Exponential),
			retry.Overloaded:          st(5, 5*time.Second, 120*time.Second, 2, retry.Exponential),
			retry.ServerError:         st(3, time.Second, 30*time.Second, 2, retry.Exponential),
			retry.Timeout:             st(2, 0, 0, 1, retry.NoBackoff),
			retry.ConnectionError:     st(3, 500*time.Millisecond, 5*time.Second, 1.5, retry.Exponential),
			retry.StreamInterrupted:   st(2, time.Second, 5*time.Second, 1.5, retry.Exponential),
			retry.CacheError:          st(2, 0, 0, 1, retry.NoBackoff),
			retry.ProviderUnavailable: st(3, time.Second, 10*time.Second, 2, retry.Exponential),
		},
		StreamErrors: true,
		RetryAfter:   retry.RetryAfter{Padding: 0.10, Ceiling: 10 * time.Second},
		Fallback:     retry.Fallback{Enabled: true, MaxRetriesWithoutFallback: 3, AdditionalAttempts: 1},
	}
}

// Orchestrator reproduces seed 003's provider API retry: maxRetries 3 (4
// attempts), delay = min(10s, 1s × 2^(attempt−1)), then ±10% proportional
// jitter (so a capped 10s wait may be 9s–11s), never below 0. Retried: 429
// (whatever its message), timeouts, every 5xx, connection errors
// (ETIMEDOUT, ECONNRESET, ECONNREFUSED) and mid-stream drops. Not retried:
// 400, 401, 403, 404, 408 and other 4xx, cancellation (AbortError).
// Choices: SSE error events are retried when their type is one of the
// retried ones (overloaded_error, api_error, rate_limit_error); Retry-After
// is ignored (the seed never reads it).
func Orchestrator() *retry.Policy {
	t := retry.Strategy{Retry: true, MaxAttempts: 4, InitialDelay: time.Second, MaxDelay: 10 * time.Second,
		Multiplier: 2, Kind: retry.Exponential, Jitter: retry.ProportionalJitter, JitterFraction: 0.10}
	return &retry.Policy{
		Name: "orchestrator", Enabled: true, Default: off(t),
		FailureTypes: withTypes(t, retry.RateLimit, retry.Overloaded, retry.ServerError, retry.ProviderUnavailable, retry.UnsupportedFeature,
			retry.Timeout, retry.ConnectionError, retry.StreamInterrupted),
		StatusRetry:  map[int]bool{429: true, 408: false},
		StreamErrors: true,
	}
}

// EscalationEpic reproduces seed 004 (US-001, US-003, the ErrorClassifier):
// retried are HTTP 429, 500, 502, 503, 504 and client-side timeouts; 1s,
// 2s, 4s, 8s capped at 30s, no jitter; at most 3 retries (4 attempts).
// Everything else is not retried, as the epic's classifier says (401/403,
// 400, every other status such as 408, 501, 505 and 529, SSE errors,
// dropped streams and connection errors, which it calls unknown). The
// preset is seed 004's RetryPolicy with retryableErrors [rate_limit,
// server_error, timeout], so writing that list changes nothing. A 400 whose message says context_length is
// context_too_long: not retried, but escalated with reason context_limit when
// the Retrier has a model ladder (chosen: a larger model is the only thing
// that can help). Model ladder: after 3 failed retries on one model
// (auto_after_retries, configurable as escalation.afterRetries) the Retrier
// moves to the next model at once with a fresh retry counter. Retry-After is
// ignored (the seed never reads it). Disable with `enabled: false`.
//
// US-002: a response the caller rejects (Retrier.Validate, logical_failure)
// is retried once, at once, the retry meant to carry the error context (the
// epic's "Retry with error context" is one action; chosen: one automatic
// retry, then the ladder). retryableErrors leaves it as it is.
//
// US-003: the default ladder is the seed's MODEL_LADDER (SeedLadder:
// claude-haiku-3-5-20241022 → claude-sonnet-4-20250514 →
// claude-opus-4-20250514), used when the Retrier names none; at its top a
// failure that would escalate stops with "already at the most capable
// model". Every switch's cost estimate is offered to Retrier.Confirm before
// it happens; escalation.maxCost caps a run's escalation spending (none by
// default: the seed names no figure).
//
// Failure types keep retrylab's one taxonomy (seed 001's names, which
// DESIGN.md's scenario example uses: 529 → overloaded), whatever the preset:
// the epic's server_error is server_error for 500, provider_unavailable for
// 502, overloaded for 503 and timeout for 504; its auth_error is auth_invalid
// or permission_denied, its context_limit is context_too_long.
func EscalationEpic() *retry.Policy {
	t := retry.Strategy{Retry: true, MaxAttempts: 4, InitialDelay: time.Second, MaxDelay: 30 * time.Second,
		Multiplier: 2, Kind: retry.Exponential, Jitter: retry.NoJitter}
	return &retry.Policy{
		Name: "escalation-epic", Enabled: true, Default: off(t),
		FailureTypes:    map[retry.FailureType]retry.Strategy{retry.LogicalFailure: {Retry: true, MaxAttempts: 2, Kind: retry.NoBackoff, Jitter: retry.NoJitter}},
		RetryableErrors: []string{"rate_limit", "server_error", "timeout"},
		Escalation:      retry.Escalation{AfterRetries: 3, OnContextLimit: true, Ladder: slices.Clone(retry.SeedLadder)},
	}
}

// ForgeTicket maps seed 002's ticket categories onto provider failures:
//
//	transient (rate_limit, overloaded, server_error, provider_unavailable,
//	  timeout, connection_error, stream_interrupted):
//	  3 retries, exponential 1s × 2^k: 1s, 2s, 4s
//	api_error (auth_invalid, permission_denied, invalid_request, content_policy,
//	  context_too_long, quota_exhausted, model_not_found, model_deprecated,
//	  unsupported_feature, account_suspended, billing_error, conflict,
//	  cache_error: a 400 like the rest):
//	  2 retries, linear 1s × (k+1): 1s, 2s
//	code_error (stream_parse: malformed output; logical_failure: an output
//	  the caller rejected, the seed's "logic issues"): 1 retry, no delay
//	unknown: 1 retry, linear: 1s
//
// The base delay is ticket.BaseDelay (1s), the same as ticket.Decide's, so that the
// preset and the ticket lifecycle give one answer to seed 002 (see
// ticket.BaseDelay for why 1s). No jitter. system_error (ENOENT, EACCES,
// git) has no provider failure; ticket.Decide covers it.
func ForgeTicket() *retry.Policy {
	base := ticket.BaseDelay
	exp := retry.Strategy{Retry: true, MaxAttempts: 4, InitialDelay: base, Multiplier: 2, Kind: retry.Exponential, Jitter: retry.NoJitter}
	lin := retry.Strategy{Retry: true, MaxAttempts: 3, InitialDelay: base, Kind: retry.Linear, Jitter: retry.NoJitter}
	code := retry.Strategy{Retry: true, MaxAttempts: 2, Kind: retry.NoBackoff, Jitter: retry.NoJitter}
	unk := retry.Strategy{Retry: true, MaxAttempts: 2, InitialDelay: base, Kind: retry.Linear, Jitter: retry.NoJitter}
	m := withTypes(exp, retry.RateLimit, retry.Overloaded, retry.ServerError, retry.ProviderUnavailable, retry.Timeout, retry.ConnectionError,
		retry.StreamInterrupted)
	for ft, s := range withTypes(lin, retry.AuthInvalid, retry.PermissionDenied, retry.InvalidRequest, retry.ContentPolicy, retry.ContextTooLong,
		retry.QuotaExhausted, retry.ModelNotFound, retry.ModelDeprecated, retry.UnsupportedFeature, retry.AccountSuspended, retry.BillingError, retry.Conflict,
		retry.CacheError) {
		m[ft] = s
	}
	m[retry.StreamParse] = code
	m[retry.LogicalFailure] = code
	m[retry.Unknown] = unk
	return &retry.Policy{Name: "forge-ticket", Enabled: true, Default: unk, FailureTypes: m, StreamErrors: true}
}

func sdkPolicy(name string) *retry.Policy {
	t := retry.Strategy{Retry: true, MaxAttempts: 3, InitialDelay: 500 * time.Millisecond, MaxDelay: 8 * time.Second,
		Multiplier: 2, Kind: retry.Exponential, Jitter: retry.SDKJitter, RespectRetryAfter: true}
	return &retry.Policy{
		Name: name, Enabled: true, Default: off(t),
		FailureTypes: withTypes(t, retry.RateLimit, retry.Overloaded, retry.ServerError, retry.ProviderUnavailable, retry.UnsupportedFeature,
			retry.Timeout, retry.ConnectionError, retry.NetworkError, retry.Conflict),
		StatusRetry:      map[int]bool{408: true, 409: true, 429: true},
		HonorShouldRetry: true,
		RetryAfter:       retry.RetryAfter{MaxUsable: 60 * time.Second},
	}
}

// sdkTimeout is the official SDKs' default request timeout: 10 minutes.
const sdkTimeout = 10 * time.Minute

// sdkPreset is sdkPolicy with an SDK's own Retry-After rule and its default
// timeout as the per-attempt timeout.
func sdkPreset(name string, ra retry.RetryAfter) *retry.Policy {
	p := sdkPolicy(name)
	p.RetryAfter = ra
	p.AttemptTimeout = sdkTimeout
	return p
}

// maxTimer is the largest delay a JavaScript setTimeout can wait: 2³¹−1 ms.
const maxTimer = (1<<31 - 1) * time.Millisecond

// The SDK presets below share these rules, each read from the SDK's source:
// 2 retries (3 attempts); x-should-retry: true or false decides first, else
// 408, 409, 429 and every status ≥ 500 are retried, and so is every error
// that has no response (connection refused or reset before the response, a
// timeout before the response headers, DNS, TLS, an unsupported URL scheme:
// retrylab's timeout, connection_error and network_error); every other
// status (a 304 included) is not, nor cancellation, nor anything after the
// response headers (an SSE error event, a stream cut or stalled midway:
// streamErrors false); the backoff is min(0.5s × 2ⁿ, 8s), n the retries so
// far (0.5s, then 1s), minus up to 25% (× (1 − 0.25·u), u uniform in
// [0, 1)); a usable Retry-After replaces it, not jittered. They differ in
// how they read and bound the Retry-After and in their timeouts, which each
// doc comment states. Their per-attempt timeout is the SDK's default of 10
// minutes (a hung request fails after it and is retried), but it bounds the
// whole attempt, where the Node and Go SDKs time out only until the response
// headers and the Python SDKs per socket read.

// AnthropicNode models @anthropic-ai/sdk 1.12.0 (npm), read from
// src/client.ts: BaseAnthropic.makeRequest, shouldRetry, retryRequest,
// calculateDefaultRetryTimeoutMillis and fetchWithTimeout.
//
// Retry-After: retry-after-ms (parseFloat, in ms) when it is a number; a 0
// yields to retry-after when there is one (`retryAfterHeader &&
// !timeoutMillis`); retry-after is read as seconds (parseFloat) or as an
// HTTP-date (Date.parse − now). The value is used when 0 < value ≤ 2³¹−1
// ms (about 24.8 days, the longest setTimeout); 0, a negative value (a date
// in the past) or a larger one waits the backoff. No ceiling: a 120s Retry-After
// is waited. Timeout: 10 minutes (DEFAULT_TIMEOUT), armed around fetch
// until the response headers; its expiry is retried like a connection error
// (APIConnectionTimeoutError once retries run out). Not modelled: parseFloat
// reads a leading number ("5s" is 5) and Date.parse formats beyond
// HTTP-dates.
func AnthropicNode() *retry.Policy {
	return sdkPreset("anthropic-node", retry.RetryAfter{ZeroMsDefers: true, Zero: retry.ZeroBackoff, Negative: retry.NegativeBackoff, MaxUsable: maxTimer})
}

// AnthropicPython models the anthropic Python package 0.121.0 (the newest
// readable: anthropic-sdk-python at 009b035, 2026-08-07), read from
// src/anthropic/_base_client.py: SyncAPIClient.request and _attempt_request,
// BaseClient._should_retry, _should_retry_exception,
// _parse_retry_after_header and _calculate_retry_timeout; numbers from
// _constants.py (DEFAULT_MAX_RETRIES 2, INITIAL_RETRY_DELAY 0.5,
// MAX_RETRY_DELAY 8.0, DEFAULT_TIMEOUT).
//
// Retry-After: retry-after-ms (float, in ms) whenever it parses, 0 and
// negative included; else retry-after as seconds (float) or an HTTP-date
// (email.utils.parsedate_tz − now). Used when 0 < value ≤ 60s; 0, a negative
// value (a date in the past) or more than 60s waits the backoff. No ceiling.
// Timeout: httpx.Timeout(600, connect=5): 5s to connect, 600s for each read;
// httpx.TimeoutException before the response is APITimeoutError, retried.
// The same rules as anthropic-sdk, which also takes negative numbers as no
// value; this preset reads them as the SDK does.
func AnthropicPython() *retry.Policy {
	return sdkPreset("anthropic-python", retry.RetryAfter{Zero: retry.ZeroBackoff, Negative: retry.NegativeBackoff, MaxUsable: 60 * time.Second})
}

// AnthropicPython2 models the anthropic Python package 2.17.0 (PyPI), the
// SDK under langchain-anthropic 1.7.10 and pydantic-ai 2.78.0
// (testdata/python/agents), read from its src/anthropic/_base_client.py:
// _parse_retry_after_header and _calculate_retry_timeout, numbers from
// _constants.py (DEFAULT_MAX_RETRIES 2, INITIAL_RETRY_DELAY 0.5,
// MAX_RETRY_DELAY 8.0). Everything as anthropic-python but the Retry-After
// limit: 2.x drops the 60s cut-off ("If the API asks us to wait a certain
// amount of time, just do what it says"): any positive value is waited, up
// to the platform's sleep limit (4,294,967 s); 0, a negative value or a
// past date still waits the backoff.
func AnthropicPython2() *retry.Policy {
	return sdkPreset("anthropic-python-2", retry.RetryAfter{Zero: retry.ZeroBackoff, Negative: retry.NegativeBackoff})
}

// AnthropicGo models github.com/anthropics/anthropic-sdk-go v1.84.0, read
// from internal/requestconfig/requestconfig.go: shouldRetry, retryHeader,
// parseRetryAfterHeader, retryDelay and (*RequestConfig).send, with
// internal/requestconfig/defaultclient.go and message.go
// (MessageService.NewStreaming, CalculateNonStreamingTimeout).
//
// Retry-After: Retry-After-Ms (strconv.ParseFloat, in ms) whenever it
// parses; else Retry-After as seconds or an HTTP-date (time.RFC1123 −
// now). Any value is used, max(0, value): 0 and a negative value (a date in
// the past) retry at once; no upper limit, no ceiling (a 120s Retry-After
// is waited). Jitter: delay − rand.Int63n(delay/4). Timeout: a streaming
// request has none of its own; the default HTTP client waits 10 minutes for
// the response headers (ResponseHeaderTimeout), an error without a response,
// retried. A request timeout (option.WithRequestTimeout, or the 10 minutes
// New sets for a non-streaming request) that expires is retried too ("treat
// it like a connection error").
func AnthropicGo() *retry.Policy {
	return sdkPreset("anthropic-go", retry.RetryAfter{Zero: retry.ZeroImmediate, Negative: retry.NegativeZero})
}

// OpenAINode models openai 6.49.0 for Node (npm; the newest 6.x), read from
// src/client.ts: OpenAI.makeRequest, shouldRetry, retryRequest,
// calculateDefaultRetryTimeoutMillis and fetchWithTimeout.
//
// Retry-After: retry-after-ms (parseFloat, in ms) when it is a number; a 0
// yields to retry-after when there is one; retry-after is read as seconds
// (parseFloat) or an HTTP-date (Date.parse − now). Whatever it
// reads is slept: 0 and a negative value (a date in the past) retry at once;
// no upper limit, no ceiling (a 120s Retry-After is waited). Timeout: 10
// minutes (DEFAULT_TIMEOUT) until the response headers; its expiry is
// retried. Not modelled: a retry-after that is neither a number nor a date
// sleeps NaN, which is at once (retrylab backs off); a value above 2³¹−1 ms
// overflows setTimeout, which fires at once (retrylab waits it, up to a
// year); parseFloat's and Date.parse's leniency.
func OpenAINode() *retry.Policy {
	return sdkPreset("openai-node", retry.RetryAfter{ZeroMsDefers: true, Zero: retry.ZeroImmediate, Negative: retry.NegativeZero})
}

// OpenAINode7 models openai 7.57.0 for Node (npm), read from src/client.ts:
// OpenAI.makeRequest, shouldRetry, retryRequest,
// calculateDefaultRetryTimeoutMillis and parseResponseWithTimeout. It
// differs from 6.x in the Retry-After rule only, which is not the Python
// SDKs' (a 0 retries at once here).
//
// Retry-After: retry-after-ms (parseFloat, in ms) whenever it is a number,
// 0 included (`timeoutMillis === undefined`); else retry-after as seconds or
// an HTTP-date (Date.parse − now). Used when 0 ≤ value ≤ 60s: 0 retries at
// once; a negative value (a date in the past) or more than 60s waits the
// backoff. No ceiling. Timeout: 10 minutes (DEFAULT_TIMEOUT) until the
// response headers, and for a non-streaming body; its expiry is retried
// (a streamed body is not).
func OpenAINode7() *retry.Policy {
	return sdkPreset("openai-node-7", retry.RetryAfter{Zero: retry.ZeroImmediate, Negative: retry.NegativeBackoff, MaxUsable: 60 * time.Second})
}

// OpenAIGo models github.com/openai/openai-go/v3 v3.96.0, read from
// internal/requestconfig/requestconfig.go: shouldRetry,
// parseRetryAfterHeader, retryDelay and (*RequestConfig).Execute, with
// default_http_client.go and option/requestoption.go (WithMaxRetryDelay).
//
// Retry-After: Retry-After-Ms (strconv.ParseFloat, in ms) when it is a
// number ≥ 0; else (a negative number is skipped) Retry-After as seconds
// ≥ 0 or an HTTP-date (time.RFC1123 − now, a date in the past is 0). A value
// of 0 ≤ v ≤ 2 minutes is used exactly (0: at once); above 2 minutes the
// request is not retried at all, whatever x-should-retry says (the original
// error is returned). Jitter: delay − rand.Int63n(delay/4). Timeout: none
// of its own by default; the default HTTP client waits 10 minutes for the
// response headers (ResponseHeaderTimeout), an error without a response,
// retried (the preset's attemptTimeout). A request timeout
// (option.WithRequestTimeout; a scenario's client.timeout) that expires is
// not retried: Execute returns the context's error (clientTimeoutFinal).
func OpenAIGo() *retry.Policy {
	p := sdkPreset("openai-go", retry.RetryAfter{Zero: retry.ZeroImmediate, Ceiling: 2 * time.Minute})
	p.ClientTimeoutFinal = true
	return p
}

// OpenAIPython models the openai Python package 3.3.1 (the newest
// readable: openai-python at e43b422, 2026-08-21), read from
// src/openai/_base_client.py: SyncAPIClient.request, BaseClient._should_retry,
// _parse_retry_after_header and _calculate_retry_timeout; numbers from
// _constants.py (DEFAULT_MAX_RETRIES 2, INITIAL_RETRY_DELAY 0.5,
// MAX_RETRY_DELAY 8.0, MAX_RETRY_AFTER_DELAY 120, DEFAULT_TIMEOUT).
//
// Retry-After: retry-after-ms (float, in ms) whenever it parses, 0 and
// negative included; else retry-after as seconds (float) or an HTTP-date
// (email.utils.parsedate_tz − now). A finite value above 120s is not retried
// at all, checked before x-should-retry; 0 < value ≤ 120s is used; 0 or a
// negative value (a date in the past) waits the backoff. Timeout:
// httpx2.Timeout(600, connect=5): 5s to connect, 600s for each read; a
// timeout before the response is retried. Since openai 2.52.0 (the change
// "honor Retry-After delays up to two minutes"); before it the rule was
// anthropic-python's, which openai-sdk keeps.
func OpenAIPython() *retry.Policy {
	return sdkPreset("openai-python", retry.RetryAfter{Zero: retry.ZeroBackoff, Negative: retry.NegativeBackoff, MaxUsable: 2 * time.Minute, Ceiling: 2 * time.Minute})
}

// AnthropicJava models com.anthropic:anthropic-java 3.16.0 (Maven
// Central; its -sources.jar), read from anthropic-java-core's
// com/anthropic/core/http/RetryingHttpClient.kt: execute, shouldRetry
// (response and throwable) and getRetryBackoffDuration; the defaults from
// ClientOptions.Builder (maxRetries 2) and Timeout (request 10 minutes,
// connect 1 minute); the OkHttp client of anthropic-java-client-okhttp
// (OkHttpClient.kt: retryOnConnectionFailure(false), callTimeout = the
// request timeout).
//
// Retried: x-should-retry "true"/"false" first, then 408, 409, 429, ≥ 500;
// a thrown IOException (OkHttp's connection errors and timeouts),
// AnthropicIoException or AnthropicRetryableException. Retry-After:
// Retry-After-Ms (String.toFloatOrNull, in ms) whenever it parses, 0 and
// negative included (then Retry-After is not read); else Retry-After as
// seconds (toFloatOrNull) or an RFC 1123 date (− now). The value is used
// when it is positive and finite, however long (no limit, no ceiling); 0,
// a negative value or a date in the past waits the backoff. Timeout: OkHttp's
// callTimeout of 10 minutes bounds the whole call, the streamed body
// included; a timeout before the response is an IOException, retried.
// Not modelled: toFloatOrNull reads "1e3", "NaN" (no value: the backoff) and
// Java's float suffixes ("2f").
func AnthropicJava() *retry.Policy {
	return sdkPreset("anthropic-java", retry.RetryAfter{Zero: retry.ZeroBackoff, Negative: retry.NegativeBackoff})
}

// OpenAIJava models com.openai:openai-java 4.105.0 (Maven Central; its
// -sources.jar), read from openai-java-core's
// com/openai/core/http/RetryingHttpClient.kt: executeInternal, shouldRetry
// and getRetryBackoffDuration (MAX_RETRY_DELAY 8s); the defaults from
// ClientOptions.Builder (maxRetries 2) and Timeout (request 10 minutes); the
// OkHttp client of openai-java-client-okhttp (retryOnConnectionFailure(false)).
//
// The same statuses and exceptions as anthropic-java (IOException,
// OpenAIIoException, OpenAIRetryableException). Retry-After: Retry-After-Ms
// (toFloatOrNull, in ms) whenever it parses, 0 and negative included; else
// Retry-After as seconds or an RFC 1123 date (− now). Every value is used,
// clamped to [0, 8s] ("Server-directed delays share the
// exponential-backoff ceiling"): 0, a negative value or a date in the past
// retries at once; a Retry-After of 20s or 2 hours waits 8s; nothing is too
// long to retry. Timeout: as anthropic-java's, 10 minutes for the whole call.
func OpenAIJava() *retry.Policy {
	return sdkPreset("openai-java", retry.RetryAfter{Zero: retry.ZeroImmediate, Negative: retry.NegativeZero, Cap: 8 * time.Second})
}

// AnthropicSDK reproduces the defaults of the official Anthropic Python SDK
// (the anthropic package, _base_client.py): 2 retries (3 attempts); wait
// min(0.5s × 2^n, 8s) × (1 − 0.25 × random) with n the number of retries so
// far; retried are 408, 409, 429 (whatever its message), every status ≥ 500,
// timeouts and connection errors before the response began (DNS and TLS
// failures included: the SDKs raise APIConnectionError for every transport
// error and retry it);
// x-should-retry: true/false overrides all of that; retry-after-ms, else
// retry-after (seconds or HTTP-date), is used when 0 < value ≤ 60s,
// otherwise the backoff is. Errors after the stream began (SSE error events,
// drops mid-stream) are never retried, as in the SDKs.
//
// The Retry-After rule is the Python SDK's. Kept as it was; the presets
// named for each SDK (anthropic-python, anthropic-node, anthropic-go) model
// one version each, from its source.
func AnthropicSDK() *retry.Policy { return sdkPolicy("anthropic-sdk") }

// OpenAISDK reproduces the defaults of the official OpenAI Python SDK (the
// openai package, _base_client.py), which are the same as AnthropicSDK's
// (2 retries, 0.5s × 2^n capped at 8s, −25% jitter, 408/409/429/≥500 and
// connection errors, x-should-retry, retry-after-ms first, a Retry-After
// used only when 0 < value ≤ 60s).
//
// The Retry-After rule is the Python SDK's before openai 2.52.0 (which
// honours up to 120s and does not retry above it: openai-python). Kept as
// it was; the presets named for each SDK (openai-python, openai-node,
// openai-node-7, openai-go) model one version each, from its source.
func OpenAISDK() *retry.Policy { return sdkPolicy("openai-sdk") }
