// Package client runs an external client: the environment it is given
// (clientenv.go: a clean base, the harness's variables, a HOME of its own,
// client.env and client.inheritEnv), its command (clientcmd.go checks that
// it can start, and says why not), its start under a supervisor that takes
// its whole process group down with it (supervise*.go, procgroup_linux.go,
// procstat.go), and its deadline (deadline.go). It measures the noise around
// the client's waits: the scheduling probe (run_probe.go) and the client's
// CPU and run-queue time (clientlag*.go).
//
// It imports only the schema (chaos/scenario) and the leaves; the runner
// (package chaos) drives it.
package client
