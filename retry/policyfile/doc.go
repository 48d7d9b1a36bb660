// Package policyfile reads retry policies written in YAML: a policy
// file, a scenario's client.policy, a probe's policy. Parse reads a
// document, DecodeNode a node of a larger one, Load a file (a regular file
// only, at most MaxFileBytes). Policy.String, in package retry, writes the
// same format, and what it writes parses back to the same policy.
//
// Every problem is reported at once, as one *Error: each with its
// file:line:column and field, what is wrong, and what to write instead
// (the valid values, presets or failure types are listed).
//
// # Format
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
//	budget: {maxTokens: 10, tokenRatio: 0.1}   # gRPC retry throttling (retry.Budget)
//	adaptiveThrottling: {k: 2, window: 2m}     # SRE client-side throttling (retry.Throttle)
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
// the type's current strategy), escalateAfterRetries, escalation, fallback,
// budget, adaptiveThrottling.
package policyfile
