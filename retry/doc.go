// Package retry is retrylab's retry core: it classifies every failed provider
// attempt, waits the time its Policy says, retries, escalates to another model
// or provider when retrying stops helping, and writes one trace event per
// thing that happened.
//
// # Contracts
//
//   - Classify maps an error to a FailureType and a Class. It reads
//     *provider.Error (HTTP status, body error type and code, message
//     patterns, SSE error events by error.type, streams without stop_reason,
//     network errors, x-should-retry), context errors and net errors.
//     Cancellation is never retried.
//   - A Policy holds a Strategy per FailureType (max attempts, initial and max
//     delay, multiplier, kind, jitter), Retry-After handling (which headers,
//     padding, cap, ceiling above which the error is non-retryable, usable
//     range, what 0 and a past date mean, whole seconds only), a max elapsed
//     time, a per-attempt timeout and an on/off switch. Presets reproduce
//     the seeds and the official SDKs, each SDK preset one version read from
//     its source; every preset's doc comment lists its numbers, its sources
//     and the choices made where a seed is silent.
//   - Retrier.Do takes ctx first, uses the injected clock (Now) and random
//     source (Rand), waits with select on a timer and ctx.Done (it never
//     sleeps past cancellation), and consults a shared Budget (gRPC-style
//     retry throttling) before every retry.
//   - Trace events follow trace format v1: one RetryAttempt per failed
//     attempt (attempt is the 1-based number of the attempt that failed,
//     delayMs the wait before the next attempt in policy time, 0 when there
//     is none), one ProviderRequestFinished per logical request (retries =
//     attempts − 1), one RunEscalated per switch of model or provider, and
//     RetryDecision for ticket-level decisions (Decide, seed 002).
//   - Log lines follow seed 000 R4: "[retry] Attempt 1/4: 529 — waiting 2s",
//     "[retry] Using retry-after: 5s", "[retry] Retrying from beginning of
//     response...". {status} is the HTTP status, or the failure type when
//     there is none; the denominator is the strategy's max attempts − 1.
//
// # Waits
//
// With k the retry index on the current target (0 for the first retry) plus
// Policy.ExponentStart, the nominal wait is initialDelay × multiplier^k
// (exponential), initialDelay × (k+1) (linear), initialDelay (constant) or 0
// (none), capped at maxDelay; then jitter applies (see Jitter). A usable
// Retry-After replaces the whole computation. A switch to a fallback or to
// the next model of a ladder happens at once (delayMs 0, delaySource none).
// Policy.Envelope gives the range of waits allowed after a given attempt.
//
// # Policy YAML
//
// A policy is either a preset name (`forgeflare`) or a mapping. Every key is
// optional; unknown keys, bad durations ("2s", "500ms", "1m"), unknown enum
// values and out-of-range numbers are errors naming file:line and the field.
//
//	preset: plandex          # start from a preset (default: nothing is retried)
//	name: my-project
//	enabled: true            # false: one attempt, no retries, no escalation
//	maxElapsed: 2m           # stop when the next wait would end later than this
//	attemptTimeout: 30s      # per-attempt timeout; hitting it is a timeout failure
//	clientTimeoutFinal: false # never retry a timeout of the provider client's own
//	                         #   per-attempt timeout (client.timeout), as openai-go
//	exponentStart: 0         # added to k in the backoff formula
//	streamErrors: true       # retry failures after the response began streaming
//	streamTransient: false   # retry every stream failure but stream_parse (forgeflare)
//	honorShouldRetry: false  # obey x-should-retry
//	allowIrreversible: false # retry irreversible operations
//	statusRetry: {408: false, 429: true}   # per-status override of `retry`
//	retryAfter:
//	  respect: true          # sets respectRetryAfter on default and every type
//	  header: both           # both: retry-after-ms, then retry-after; or retry-after
//	  zeroMsDefers: false    # a retry-after-ms of 0 yields to retry-after (Node SDKs)
//	  padding: 0.1           # +10%
//	  cap: 60s               # use at most this
//	  ceiling: 10s           # above this the error is non-retryable
//	  maxUsable: 60s         # above this fall back to the backoff
//	  zero: auto             # 0: immediate | backoff | auto (backoff if maxUsable set)
//	  negative: standard     # a past date, a negative number: zero | backoff |
//	                         #   standard (past date = 0, negative number ignored)
//	  integerOnly: false     # only whole seconds count
//	default:                 # the strategy of every type not listed
//	  retry: false
//	  maxAttempts: 1         # or maxRetries: 0 (= maxAttempts − 1)
//	all: {maxAttempts: 4}    # applied to default and to every listed type
//	failureTypes:
//	  rate_limit:
//	    retry: true
//	    maxAttempts: 5
//	    initialDelay: 1s
//	    maxDelay: 60s
//	    multiplier: 2
//	    kind: exponential    # exponential | linear | constant | none
//	    jitter: full         # none | full | equal | decorrelated | proportional | sdk
//	    jitterFraction: 0.1  # for proportional: ±10%
//	    respectRetryAfter: true
//	retryableErrors: [rate_limit, server_error, timeout]  # seed 004's list
//	escalation: {afterRetries: 3, onContextLimit: true}
//	fallback: {enabled: true, maxRetriesWithoutFallback: 3, additionalAttempts: 1}
//
// Shorthands: strategy fields written at the top level (maxRetries: 2,
// initialDelay: 1s, ...) mean the same as under `all`; escalateAfterRetries: N
// is escalation.afterRetries. retryableErrors is seed 004's list: its names
// keep seed 004's meaning, by HTTP status (rate_limit: 429 whatever its
// message; server_error: 500, 502, 503, 504; timeout: a client-side timeout,
// not a 408 or a 504; context_limit: a 400 saying the context is too long;
// invalid_request: another 400; auth_error: 401, 403; unknown: any other
// status and any failure without one; content_filter: content_policy), and
// it takes retrylab's other failure types too (overloaded retries 503, 529,
// ...). It turns retrying by type off and drops the preset's statusRetry;
// statusRetry and failureTypes in the same mapping apply on top of it.
//
// Keys are applied in this order, whatever their order in the file: preset,
// the scalar fields, default, the top-level strategy fields, all,
// retryAfter, retryableErrors, statusRetry, failureTypes (each starting from
// the type's current strategy), escalateAfterRetries, escalation, fallback.
package retry
