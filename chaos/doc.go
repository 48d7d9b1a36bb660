// Package chaos runs scenario files against a mock Anthropic/OpenAI streaming
// server placed behind Toxiproxy and verifies, from the client's trace and from
// the server's own journal, that the client retried exactly as its policy says.
//
// # Data flow
//
// One scenario goes through these steps, each in the file named after it:
//
//	scenario file ──load.go──▶ Scenario (scenario.go, limits.go; policy.go resolves client.policy)
//	Runner.Run (run.go) ──▶ per scenario, an Env (env.go): the mock (server.go) behind a proxy (toxi.go)
//	    the client: built in (run_builtin.go) or a command (run_external.go, supervise*.go, procgroup_linux.go;
//	    clientcmd.go checks that it can start); skipped when client.requires are missing (skip.go)
//	    the mock answers each attempt as its fault's kind says (package chaos/fault, one file per kind;
//	    faults.go serves it; mock.go maps it to
//	    internal/wire, which renders the bytes, one file per wire format)
//	    and journals it (server.go → server.jsonl); the client writes trace.jsonl
//	journal + trace ──observe.go──▶ Observed ──check.go, tolerance.go──▶ Checks ──▶ Result (result.go)
//	keys the client sent (learn.go) are scrubbed from every run file (redact.go);
//	the client's ErrorReport events, made safe, go to result.json and report.txt (errreport.go);
//	run files are opened and written without following a client's links (runfolder.go)
//	the live board: board.go; progress lines: progress.go; the scheduling probe: run_probe.go, clientlag*.go
//	on an interrupt, what finished is written first, before anything slow is awaited: interrupt.go
//	`retrylab chaos serve`, the mock for a client run by hand: serve.go
//	an external client's own OpenTelemetry: one OTLP receiver per scenario (telemetry.go, package
//	otlp), kept in otlp/, mapped to client-otel.jsonl and checked as selfReport (check_selfreport.go)
//
// Package report renders Results and Summaries; package cmd/retrylab wires
// the flags. The checks are pure functions of a Scenario and an Observed
// (evaluate), so they are tested without a network.
//
// # Attempts
//
// Attempts are counted by requests at the mock: a connection becomes attempt
// k when it has delivered a request that a wire format answers (POST
// /v1/messages, POST /v1/chat/completions, ...: one file per format in
// internal/wire, behind wire.Format, listed in one registry); the k-th such
// request meets the scenario's k-th fault (past the end of the list, ok).
// With the scenario key attemptsMatch, only the answer requests it matches
// are attempts. Anything else is a side request (side.go: a token count, a
// model list, a WebSocket upgrade, a health probe, a routing call),
// answered without consuming a fault and journaled with side: true (a
// failed attempts or delays check whose attempts carry different prompts
// hints at attemptsMatch, and one whose requests went to a path the mock
// does not serve at the base URL: attempthints.go), and
// a connection that closes without a request is not an attempt, with one
// exception: when the next fault is raw toxics, which may hold the request
// back inside the proxy, such a connection is that attempt (with no path).
// Arrived is when the request's first byte reached the mock, not when the
// connection was accepted: Toxiproxy dials the mock as soon as a client
// connects, and a client may connect long before it sends (Connected
// records that). The mock closes each connection after one response (and
// says Connection: close unless the response is to be cut; see
// wire.Params.KeepAlive), so every attempt is a new connection and a fresh set of
// per-connection toxics. The toxics on the proxy act on every connection, so
// a health probe that connects while attempt k's reset or raw toxics are in
// place meets them too (but consumes nothing).
//
// # Faults
//
// Each fault kind is one file of package chaos/fault (status, sseError,
// drop, hang, reset, latency, toxics, ok), registered there by name
// (fault.Register, as Toxiproxy registers its toxics): it decodes and
// validates its own keys of attempts[k] through the loader's diagnostics,
// and says what the mock does with it and what a client meets through
// optional interfaces found by type assertion (fault.PreConnecter,
// fault.Server, fault.Closer, fault.Failer …). Fault holds the decoded
// kind; nothing in chaos switches on kinds, so a new kind is one new file
// (chaos/fault/example shows one). How each kind is made is documented on
// its type: status, sseError, ok, latency and hang come from the mock;
// drop is a limit_data toxic the mock installs once it knows the exact cut;
// reset and raw toxics are put on the proxy before the attempt connects,
// with toxicity 1.0 unless the scenario says otherwise.
//
// # When an attempt ends
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
// (ServerResidual).
//
// # Per-attempt toxics
//
// Toxics act on every live connection of a proxy. So when attempt k ends (as
// above) the Env removes attempt k's toxics and installs attempt k+1's
// pre-connect toxics, and only then records attempt k as ended (Attempts,
// OnAttempt, journal). A client that retries within the time of those API
// calls (about a millisecond) can connect before the switch: the mock then
// withholds attempt k+1's response until the switch is done, so downstream
// toxics are right; an upstream raw toxic may miss data already sent; a
// reset whose toxic was not in place when the connection was made falls back
// to the mock closing the connection abruptly (the client sees EOF instead
// of ECONNRESET; the log says so).
//
// # Verdicts
//
// A check passes, fails, is inconclusive (the noise measured around a wait is
// too large to tell a right wait from a wrong one) or unverified (nothing to
// check it against); a scenario whose only failures are timing failures is
// re-run (--confirm) before it fails. Infrastructure problems (a proxy that
// cannot be made, too few file descriptors) give the verdict error and stop
// the run, never a false failure of the client.
package chaos
