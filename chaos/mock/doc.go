// Package mock is the mock server the client under test talks to: an Env
// (env.go) is one scenario's mock, behind a Toxiproxy proxy (toxi*.go) when
// a fault of the scenario needs one (see Paths). It
// reads each request (request.go), answers it as the attempt's fault kind
// says (faults.go; mock.go maps it to internal/wire, which renders the
// bytes, one file per wire format; routes.go lists what it serves), answers
// side requests (side.go) and journals every attempt as a ServerAttempt
// (journal.go, server.go → server.jsonl), which package verify reads.
//
// # Attempts
//
// Attempts are counted by requests at the mock: a connection becomes attempt
// k when it has delivered a request that a wire format answers (POST
// /v1/messages, POST /v1/chat/completions, ...: one file per format in
// internal/wire, behind wire.Format, listed in one registry); the k-th such
// request meets the scenario's k-th fault (past the end of the list, ok).
// With the scenario key attemptsMatch, only the answer requests it matches
// are attempts. Anything else is a side request (a token count, a
// model list, a WebSocket upgrade, a health probe, a routing call),
// answered without consuming a fault and journaled with side: true (a
// failed attempts or delays check whose attempts carry different prompts
// hints at attemptsMatch, and one whose requests went to a path the mock
// does not serve at the base URL: verify/attempthints.go), and
// a connection that closes without a request is not an attempt, with one
// exception: when the next fault is raw toxics, which may hold the request
// back inside the proxy, such a connection is that attempt (with no path).
// Arrived is when the request's first byte reached the mock, not when the
// connection was accepted: a client may connect long before it sends
// (Connected records that: when the mock accepted the connection, which
// Toxiproxy dials as soon as a client connects to it; on the direct path
// the client's own connection). The mock keeps a connection alive after a complete answer
// (Env.keepAlive: a success or an error status, not cut, held or made with
// toxics, to a client that did not ask to close, and not before an attempt
// whose toxics must be on the proxy before it connects), as the providers
// do; such an attempt ends at its last byte and the connection waits
// idleTimeout for the next request, which is the next attempt. Any other
// answer ends its connection (and says Connection: close unless the
// response is to be cut; see wire.Params.KeepAlive), so an attempt whose
// fault uses toxics starts on a new connection and a fresh set of
// per-connection toxics. The toxics on the proxy act on every connection, so
// a health probe that connects while attempt k's reset or raw toxics are in
// place meets them too (but consumes nothing).
//
// # Faults
//
// Each fault kind is one file of package chaos/fault (status, sseError,
// drop, hang, reset, latency, toxics, ok, stall, slow), registered there by name
// (fault.Register, as Toxiproxy registers its toxics): it decodes and
// validates its own keys of attempts[k] through the loader's diagnostics,
// and says what the mock does with it and what a client meets through
// optional interfaces found by type assertion (fault.PreConnecter,
// fault.Server, fault.Closer, fault.Failer …). Fault holds the decoded
// kind; nothing in chaos switches on kinds, so a new kind is one new file
// (chaos/fault/example shows one). How each kind is made is documented on
// its type: status, sseError, ok, latency and hang come from the mock,
// and so do stall and slow, which pace the ok answer piece by piece in
// policy time (EnvConfig.TimeScale; fault.Serving's Start, Piece, Wait and
// End);
// drop is a limit_data toxic the mock installs once it knows the exact cut;
// reset and raw toxics are put on the proxy before the attempt connects,
// with toxicity 1.0 unless the scenario says otherwise.
//
// # Paths
//
// Whether clients go through Toxiproxy is decided once, when the Env
// starts, from the scenario (EnvConfig.Proxy, chaos run and chaos serve's
// --proxy; Env.Path, result.json's path): a scenario none of whose faults
// puts toxics on the proxy (fault.UsesProxy over attempts: and every
// outage phase's mix: drop, reset and raw toxics do; a fleet shares its
// attempts:, limits: and side requests are answered by the mock) is
// served direct: BaseURL is the mock's own listener and no proxy is
// created. Every kind such a scenario can serve is made by the mock, so
// what a client meets is the same bytes on both paths; what differs is
// when an attempt ends (below) and the closeIdle close (a plain close,
// which the client reads as EOF, as it does from the proxy when the mock
// resets its side). --proxy always puts every scenario behind a proxy, as
// before the direct path existed. The exception of raw toxics holding a
// request back (Attempts) and the per-attempt switch of toxics
// (Per-attempt toxics) are the proxy path's alone.
//
// # When an attempt ends
//
// On a connection kept alive, at the answer's last byte (Attempts). On
// the direct path, an answer the mock wrote whole ends when its last byte
// is written: on loopback it is then in the client's socket, and nothing
// but the client's own reading is left; the mock half-closes and keeps the
// connection until the client closes it (endWait at most), without holding
// the attempt. An attempt the client leaves before the end (hang, stall, a
// client timeout in a slow answer) ends when the client closes the
// connection (the mock's read of it fails), and closeIdle when the mock
// closes it. Through the proxy:
//
// After its last byte the mock half-closes the connection and waits until
// the proxy closes it. Toxiproxy closes the upstream side only after it has
// delivered (or cut) everything toward the client and closed the client's
// connection, so ServerAttempt.Ended is the moment the client saw the end,
// for every fault kind: for drop it is when limit_data cut the stream, for
// reset when reset_peer fired, for hang when the client gave up, for a
// latency or bandwidth toxic when the delayed bytes were delivered. The
// residual error is the proxy's hand-off from its client side to its
// upstream side plus the client's connect time: the gap Arrived(k+1) −
// Ended(k) overstates the client's wait by that. Measured with
// TestGapResidual (RETRYLAB_MEASURE=1): mean 0.4–0.8 ms, worst 1–3 ms, for
// every fault kind, embedded and real toxiproxy-server, on a 2-core machine
// (verify.ServerResidual). On the direct path the residual is the client's
// read of the answer's end plus its connect time, with no proxy hand-off:
// mean 0.5–0.6 ms, worst 0.6–1.3 ms for status, ok and sseError, in two
// runs at load average 7 and 27 (the proxy path in the same runs: mean
// 0.3–1.1 ms, worst 1.9–4.5 ms at 7; mean up to 23 ms, worst up to 276 ms
// at 27).
//
// # Per-attempt toxics
//
// On the proxy path only. Toxics act on every live connection of a proxy.
// So when attempt k ends (as
// above) the Env removes attempt k's toxics and installs attempt k+1's
// pre-connect toxics, and only then records attempt k as ended (Attempts,
// OnAttempt, journal). A client that retries within the time of those API
// calls (about a millisecond) can connect before the switch: the mock then
// withholds attempt k+1's response until the switch is done, so downstream
// toxics are right; an upstream raw toxic may miss data already sent; a
// reset whose toxic was not in place when the connection was made falls back
// to the mock closing the connection abruptly (the client sees EOF instead
// of ECONNRESET; the log says so).
package mock
