// Package retry is retrylab's retry core: it classifies every failed provider
// attempt, waits the time its Policy says, retries, escalates to another model
// or provider when retrying stops helping, and writes one trace event per
// thing that happened.
//
// # Layout
//
// The retry core is this package: classification, policies, backoff and
// jitter, Retry-After, the loop, escalation and its cost guard, the retry
// budget, resends and replay. Around it, each in a package of its own:
//
//   - retry/errreport: seed 001's ErrorReport, its rendering and its
//     ErrorRegistry file. It imports nothing of retry, so the loop can
//     build and keep reports.
//   - retry/ticket: seed 002's ticket lifecycle (Board, Decide), on top of
//     retry's backoff kinds.
//   - retry/preset: the named policies (the seeds, the official SDKs, the
//     agents), each a constructor; Get finds one by name and rejects an
//     unknown name with the list of known ones.
//   - retry/policyfile: the policy YAML (Parse, DecodeNode, Load), which
//     starts from a preset; Policy.String, here, writes it.
//   - retry/provider: the provider clients and their errors.
//
// # Pure decision cores
//
// These decide without a clock, a random source or I/O of their own, so a
// harness can ask them what the loop would do: Classify (an error to a
// FailureType and Class), Policy.Envelope (the range of waits allowed after
// an attempt, jitter and Retry-After included), Policy.DecideFirst (what
// the policy does after one failed attempt), Policy.Schedule, Policy.Retries,
// Replay (the loop's decisions replayed attempt by attempt) and RecoveryFor
// (what a person does about a request given up on).
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
//     time, a per-attempt timeout and an on/off switch. The presets of
//     retry/preset reproduce the seeds and the official SDKs, each SDK
//     preset one version read from its source; every preset's doc comment
//     lists its numbers, its sources and the choices made where a seed is
//     silent. retry/policyfile reads a policy from YAML.
//   - Retrier.Do takes ctx first, uses the injected clock (Now) and random
//     source (Rand), waits with select on a timer and ctx.Done (it never
//     sleeps past cancellation), and consults a shared Budget (gRPC-style
//     retry throttling) and Throttle (the SRE book's client-side adaptive
//     throttling) before every retry. Retrier.Run is Do for a call
//     that returns output: Validate turns an output the caller rejects into
//     a logical_failure, and the RetryContext it returns records every
//     attempt (Summary: "succeeded after N attempt(s)").
//   - Every Attempt carries the failures before it (Previous, History: the
//     error, its classification, the failed output), so that a request can
//     be rebuilt from them (seed 004 US-002, EnhancedRetryPrompt,
//     Attempt.Prompt; seed 001's cache_error, retried without the cache
//     parameters). ErrorContext marks such retries in the trace.
//   - When Do gives up, the *ExhaustedError carries an errreport.Report
//     (seed 001's ErrorReport: root cause, the caller's StepContext from
//     WithStep, the recovery actions of RecoveryFor, retry history), also
//     written as an ErrorReport event and, with Retrier.Registry, kept in an
//     errreport.ErrorRegistry file (the last 100, written atomically under a
//     file lock). Report.Render prints the seed's boxed UNRECOVERABLE ERROR
//     at the width and colour the caller gives (errreport.StyleFor helps).
//   - Every switch of model or provider is priced before it happens, offered
//     to Confirm, and held to Policy.Escalation.MaxCost for the Retrier's
//     run; one that does not happen is an EscalationDeclined event. At the
//     top of the ladder the request stops with ReasonTopOfLadder.
//   - A SafeAfterRollback operation is rolled back (Rollback) before each
//     retry; an Irreversible one is not retried unless the policy allows it.
//   - The environment is never read inside the loop: FromEnv applies
//     Plandex's PLANDEX_* variables to a copy of a policy, when the caller
//     asks.
//   - ticket.Board is seed 002's ticket lifecycle (ready, in_progress,
//     needs_review, on_hold), driven by ticket.Decide, one
//     TicketTransition event per transition.
//   - Trace events follow trace format v1: one RetryAttempt per failed
//     attempt (attempt is the 1-based number of the attempt that failed,
//     delayMs the wait before the next attempt in policy time, 0 when there
//     is none), one ProviderRequestFinished per logical request (retries =
//     attempts − 1), one RunEscalated per switch of model or provider, and
//     RetryDecision for ticket-level decisions (ticket.Decide, seed 002).
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
package retry
