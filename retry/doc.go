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
//     retry throttling) before every retry. Retrier.Run is Do for a call
//     that returns output: Validate turns an output the caller rejects into
//     a logical_failure, and the RetryContext it returns records every
//     attempt (Summary: "succeeded after N attempt(s)").
//   - Every Attempt carries the failures before it (Previous, History: the
//     error, its classification, the failed output), so that a request can
//     be rebuilt from them (seed 004 US-002, EnhancedRetryPrompt,
//     Attempt.Prompt; seed 001's cache_error, retried without the cache
//     parameters). ErrorContext marks such retries in the trace.
//   - When Do gives up, the *ExhaustedError carries a Report (seed 001's
//     ErrorReport: root cause, the caller's StepContext from WithStep,
//     recovery actions, retry history), also written as an ErrorReport event
//     and, with Retrier.Registry, kept in an ErrorRegistry file (the last
//     100, written atomically under a file lock). Report.Render prints the
//     seed's boxed UNRECOVERABLE ERROR at the width and colour the caller
//     gives (StyleFor helps).
//   - Every switch of model or provider is priced before it happens, offered
//     to Confirm, and held to Policy.Escalation.MaxCost for the Retrier's
//     run; one that does not happen is an EscalationDeclined event. At the
//     top of the ladder the request stops with ReasonTopOfLadder.
//   - A SafeAfterRollback operation is rolled back (Rollback) before each
//     retry; an Irreversible one is not retried unless the policy allows it.
//   - The environment is never read inside the loop: FromEnv applies
//     Plandex's PLANDEX_* variables to a copy of a policy, when the caller
//     asks.
//   - Tickets is seed 002's ticket lifecycle (ready, in_progress,
//     needs_review, on_hold), driven by Decide, one TicketTransition event
//     per transition.
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
//     The attempt line ends with " — " and the error message, on one line
//     (R3: the message is shown on every attempt).
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
//	maxAttempts: 4           # global cap on attempts in all (only lowers; 0: none)
//	maxDelay: 30s            # global cap on every wait, Retry-After included
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
//	  message: false         # no header: read "Please try again in 1.5s" in the message
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
//	escalation: {afterRetries: 3, onContextLimit: true,
//	             ladder: [claude-haiku-4-5, claude-sonnet-4-5], maxCost: 0.05}
//	fallback: {enabled: true, maxRetriesWithoutFallback: 3, additionalAttempts: 1}
//
// Shorthands: strategy fields written at the top level (maxRetries: 2,
// initialDelay: 1s, ...) mean the same as under `all`, but for maxAttempts
// and maxDelay, which are global caps there (`all` sets every type, a cap
// only lowers); escalateAfterRetries: N is escalation.afterRetries. retryableErrors is seed 004's list: its names
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
