package retry

import (
	"fmt"
	"strings"
	"time"
)

// presets maps a preset name to its constructor. Each constructor returns a
// fresh Policy, so callers may modify what Preset returns.
var presets = map[string]func() *Policy{
	"forgeflare":      Forgeflare,
	"plandex":         Plandex,
	"orchestrator":    Orchestrator,
	"escalation-epic": EscalationEpic,
	"forge-ticket":    ForgeTicket,
	"anthropic-sdk":   AnthropicSDK,
	"openai-sdk":      OpenAISDK,
}

// PresetNames returns the preset names in a fixed order.
func PresetNames() []string {
	return []string{"forgeflare", "plandex", "orchestrator", "escalation-epic", "forge-ticket", "anthropic-sdk", "openai-sdk"}
}

// Preset returns a fresh copy of the named preset. An unknown name is an
// error that lists the valid names.
func Preset(name string) (*Policy, error) {
	f, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy preset %q (valid: %s)", name, strings.Join(PresetNames(), ", "))
	}
	return f(), nil
}

func withTypes(s Strategy, types ...FailureType) map[FailureType]Strategy {
	m := make(map[FailureType]Strategy, len(types))
	for _, ft := range types {
		m[ft] = s
	}
	return m
}

func off(s Strategy) Strategy { s.Retry = false; return s }

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
func Forgeflare() *Policy {
	t := Strategy{Retry: true, MaxAttempts: 5, InitialDelay: 2 * time.Second, Multiplier: 2,
		Kind: Exponential, Jitter: NoJitter, RespectRetryAfter: true}
	p := &Policy{
		Name: "forgeflare", Enabled: true, Default: off(t),
		// unknown is retried after the stream began only (StreamTransient):
		// an SSE error event of unknown type.
		FailureTypes: withTypes(t, RateLimit, Overloaded, ServerError, ProviderUnavailable, UnsupportedFeature,
			Timeout, ConnectionError, StreamInterrupted),
		StatusRetry:     map[int]bool{429: true, 408: false},
		StreamErrors:    true,
		StreamTransient: true,
		RetryAfter:      RetryAfter{Header: HeaderRetryAfter, Cap: 60 * time.Second, IntegerOnly: true},
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
func Plandex() *Policy {
	st := func(n int, initial, max time.Duration, mult float64, kind Kind) Strategy {
		return Strategy{Retry: true, MaxAttempts: n, InitialDelay: initial, MaxDelay: max, Multiplier: mult,
			Kind: kind, Jitter: FullJitter, RespectRetryAfter: true}
	}
	return &Policy{
		Name: "plandex", Enabled: true, ExponentStart: 1,
		Default: Strategy{MaxAttempts: 1, Kind: NoBackoff, Jitter: NoJitter},
		FailureTypes: map[FailureType]Strategy{
			RateLimit:           st(5, time.Second, 60*time.Second, 2, Exponential),
			Overloaded:          st(5, 5*time.Second, 120*time.Second, 2, Exponential),
			ServerError:         st(3, time.Second, 30*time.Second, 2, Exponential),
			Timeout:             st(2, 0, 0, 1, NoBackoff),
			ConnectionError:     st(3, 500*time.Millisecond, 5*time.Second, 1.5, Exponential),
			StreamInterrupted:   st(2, time.Second, 5*time.Second, 1.5, Exponential),
			CacheError:          st(2, 0, 0, 1, NoBackoff),
			ProviderUnavailable: st(3, time.Second, 10*time.Second, 2, Exponential),
		},
		StreamErrors: true,
		RetryAfter:   RetryAfter{Padding: 0.10, Ceiling: 10 * time.Second},
		Fallback:     Fallback{Enabled: true, MaxRetriesWithoutFallback: 3, AdditionalAttempts: 1},
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
func Orchestrator() *Policy {
	t := Strategy{Retry: true, MaxAttempts: 4, InitialDelay: time.Second, MaxDelay: 10 * time.Second,
		Multiplier: 2, Kind: Exponential, Jitter: ProportionalJitter, JitterFraction: 0.10}
	return &Policy{
		Name: "orchestrator", Enabled: true, Default: off(t),
		FailureTypes: withTypes(t, RateLimit, Overloaded, ServerError, ProviderUnavailable, UnsupportedFeature,
			Timeout, ConnectionError, StreamInterrupted),
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
// Failure types keep retrylab's one taxonomy (seed 001's names, which
// DESIGN.md's scenario example uses: 529 → overloaded), whatever the preset:
// the epic's server_error is server_error for 500, provider_unavailable for
// 502, overloaded for 503 and timeout for 504; its auth_error is auth_invalid
// or permission_denied, its context_limit is context_too_long.
func EscalationEpic() *Policy {
	t := Strategy{Retry: true, MaxAttempts: 4, InitialDelay: time.Second, MaxDelay: 30 * time.Second,
		Multiplier: 2, Kind: Exponential, Jitter: NoJitter}
	return &Policy{
		Name: "escalation-epic", Enabled: true, Default: off(t), FailureTypes: map[FailureType]Strategy{},
		RetryableErrors: []string{"rate_limit", "server_error", "timeout"},
		Escalation:      Escalation{AfterRetries: 3, OnContextLimit: true},
	}
}

// ForgeTicket maps seed 002's ticket categories onto provider failures:
//
//	transient (rate_limit, overloaded, server_error, provider_unavailable,
//	  timeout, connection_error, stream_interrupted, cache_error):
//	  3 retries, exponential 1s × 2^k: 1s, 2s, 4s
//	api_error (auth_invalid, permission_denied, invalid_request, content_policy,
//	  context_too_long, quota_exhausted, model_not_found, model_deprecated,
//	  unsupported_feature, account_suspended, billing_error, conflict):
//	  2 retries, linear 1s × (k+1): 1s, 2s
//	code_error (stream_parse: malformed output): 1 retry, no delay
//	unknown: 1 retry, linear: 1s
//
// The seed gives no base delay; 1s is chosen for every kind so that the
// shapes (exponential, linear, none) are what a test sees. No jitter.
// system_error (ENOENT, EACCES, git) has no provider failure; Decide covers it.
func ForgeTicket() *Policy {
	exp := Strategy{Retry: true, MaxAttempts: 4, InitialDelay: time.Second, Multiplier: 2, Kind: Exponential, Jitter: NoJitter}
	lin := Strategy{Retry: true, MaxAttempts: 3, InitialDelay: time.Second, Kind: Linear, Jitter: NoJitter}
	code := Strategy{Retry: true, MaxAttempts: 2, Kind: NoBackoff, Jitter: NoJitter}
	unk := Strategy{Retry: true, MaxAttempts: 2, InitialDelay: time.Second, Kind: Linear, Jitter: NoJitter}
	m := withTypes(exp, RateLimit, Overloaded, ServerError, ProviderUnavailable, Timeout, ConnectionError,
		StreamInterrupted, CacheError)
	for ft, s := range withTypes(lin, AuthInvalid, PermissionDenied, InvalidRequest, ContentPolicy, ContextTooLong,
		QuotaExhausted, ModelNotFound, ModelDeprecated, UnsupportedFeature, AccountSuspended, BillingError, Conflict) {
		m[ft] = s
	}
	m[StreamParse] = code
	m[Unknown] = unk
	return &Policy{Name: "forge-ticket", Enabled: true, Default: unk, FailureTypes: m, StreamErrors: true}
}

func sdkPolicy(name string) *Policy {
	t := Strategy{Retry: true, MaxAttempts: 3, InitialDelay: 500 * time.Millisecond, MaxDelay: 8 * time.Second,
		Multiplier: 2, Kind: Exponential, Jitter: SDKJitter, RespectRetryAfter: true}
	return &Policy{
		Name: name, Enabled: true, Default: off(t),
		FailureTypes: withTypes(t, RateLimit, Overloaded, ServerError, ProviderUnavailable, UnsupportedFeature,
			Timeout, ConnectionError, NetworkError, Conflict),
		StatusRetry:      map[int]bool{408: true, 409: true, 429: true},
		HonorShouldRetry: true,
		RetryAfter:       RetryAfter{MaxUsable: 60 * time.Second},
	}
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
// The Retry-After rule is the Python SDK's. The TypeScript SDK differs: from
// @anthropic-ai/sdk 1.12 it uses any positive value, however long (a 120s
// Retry-After is waited, where this preset backs off instead). Write a policy
// with retryAfter.maxUsable: 0 to model it.
func AnthropicSDK() *Policy { return sdkPolicy("anthropic-sdk") }

// OpenAISDK reproduces the defaults of the official OpenAI Python SDK (the
// openai package, _base_client.py), which are the same as AnthropicSDK's
// (2 retries, 0.5s × 2^n capped at 8s, −25% jitter, 408/409/429/≥500 and
// connection errors, x-should-retry, retry-after-ms first, a Retry-After
// used only when 0 < value ≤ 60s).
//
// The Retry-After rule is the Python SDK's. The Node SDK (openai 6.x) uses
// any value it can parse, 0 included (retry at once) and above 60s.
func OpenAISDK() *Policy { return sdkPolicy("openai-sdk") }
