// Package ticket is seed 002's ticket lifecycle: a failed agent ticket is
// classified, then either put back in the queue with a retry_after or put
// on hold for a person, instead of being cancelled.
//
//   - ClassifyError maps an agent's error message to a ticket category
//     (transient, api_error, code_error, system_error, unknown), and Decide
//     is the pure decision for a category after n retries (seed 002's
//     shouldRetryTicket and calculateBackoff: Strategies, with BaseDelay).
//   - Board holds the tickets in memory and makes seed 002's transitions
//     (Claim, Succeed, Fail, Release by a named person); a transition the
//     state machine does not have is an *Error that says which state the
//     ticket is in and which it must be in. Every transition writes a
//     TicketTransition event, and Fail the RetryDecision of the seed's
//     activity log.
//
// The forge-ticket preset (retry/preset) maps the same categories onto
// provider failures with the same BaseDelay, so that the preset and the
// lifecycle give one answer to the seed.
package ticket
