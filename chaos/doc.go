// Package chaos runs scenario files against a mock Anthropic/OpenAI streaming
// server placed behind Toxiproxy and verifies, from the client's trace and from
// the server's own journal, that the client retried exactly as its policy says.
//
// # Data flow
//
// The harness is cut into packages along its data path, each importing only
// those before it (TestLayers, layers_test.go, enforces it):
//
//	chaos/fault      the fault kinds, one file each, registered by name
//	chaos/scenario   the scenario file: schema, loader, limits, client.policy
//	chaos/client     an external client's process: environment, start, supervision, deadline
//	chaos/mock       the mock server behind Toxiproxy and its journal
//	chaos/verify     journal + trace ──▶ Observed ──▶ Checks (pure: evaluate)
//	chaos            the runner, results and summary (this package)
//
// with two leaves any of them may use: chaos/runfolder (run files opened and
// written without following a client's links; output errors) and
// chaos/redact (the keys a client sent, scrubbed from every run file).
//
// One scenario goes through these steps, each in the file named after it:
//
//	scenario file ──scenario.LoadPaths──▶ Scenario
//	Runner.Run (run.go) ──▶ per scenario, one run (run_once.go): a mock.Env behind a proxy
//	    the client: built in (run_builtin.go) or a command (run_external.go, package
//	    client); skipped when client.requires are missing (skip.go)
//	    the mock answers each attempt as its fault's kind says and journals it
//	    (server.jsonl); the client writes trace.jsonl
//	journal + trace ──verify.Observe──▶ Observed ──verify.Evaluate──▶ Checks ──▶ Result (result.go)
//	a scenario whose only failures are timing failures is re-run: confirm.go
//	the client's ErrorReport events, made safe, go to result.json and report.txt;
//	every string of a Result is scrubbed of the keys the client sent (errreport.go)
//	the live board: board.go; progress lines: progress.go
//	on an interrupt, what finished is written first, before anything slow is awaited: interrupt.go
//	`retrylab chaos serve`, the mock for a client run by hand: serve.go
//	an external client's own OpenTelemetry: one OTLP receiver per scenario (telemetry.go, package
//	otlp), kept in otlp/, mapped to client-otel.jsonl and checked as selfReport (verify)
//
// Package report renders Results and Summaries; package cmd/retrylab wires
// the flags. The checks are pure functions of a Scenario and an Observed
// (verify.Evaluate), so they are tested without a network.
//
// # Verdicts
//
// A check passes, fails, is inconclusive or unverified (package verify says
// when); a scenario whose only failures are timing failures is re-run
// (--confirm) before it fails. Infrastructure problems (a proxy that cannot
// be made, too few file descriptors) give the verdict error and stop the
// run, never a false failure of the client.
package chaos
