// Package scenario is the scenario file: its schema (scenario.go; the
// expected output, output.go; attemptsMatch, attemptsmatch.go), the loader
// (load.go, over the YAML decoder of decode.go), which reports every
// problem with its file, line, field and a hint, and rejects unknown keys
// with the list of known ones; the limits a file may not pass (limits.go);
// client.policy, resolved to a retry.Policy (policy.go); client files
// (clientfile.go); the client.env, client.inheritEnv and client.home names
// the harness keeps for itself (envnames.go); and client.requires
// (requires.go).
//
// Each attempts[k] entry is decoded by its fault kind (package chaos/fault),
// through this package's diagnostics, at its own lines.
package scenario
