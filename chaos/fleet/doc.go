// Package fleet computes a fleet's figures (result.json's fleet:) from what
// the mock journaled of every client's attempts and how each client ended:
// a pure function of its input, with no clock, file or network of its own.
//
// The definitions (docs/chaos.md, "Fleet figures") are its contract:
//
//   - requests: logical requests, counted from the journal: each client's
//     first attempt, and each of its attempts after one that succeeded,
//     begins one (a client that gives up on a request and starts the next
//     continues the same count: the journal cannot tell a retry from a new
//     request that follows a failure).
//   - amplification: attempts ÷ requests, exact.
//   - synchrony: of the retry attempts (every attempt that begins no
//     logical request), the share that arrived within SyncWindow (policy
//     time) of a retry attempt of another client; null without retries.
//   - goodputPerMin: successful answers per minute of policy time, from
//     the fleet's first arrival to its last attempt's end.
//   - recoveryMs: see Recovery.
//   - wastedOutputTokens: output tokens that left the mock in answers
//     that began (200) but did not complete: cut by a fault or abandoned by
//     their client.
package fleet
