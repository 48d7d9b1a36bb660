package client

import (
	"fmt"
	"io"
	"os"
	"testing"
)

// TestMain lets this test binary be the client supervisor (MaybeSupervise,
// first thing, as in retrylab's main: StartClient re-runs the running
// binary as one) and, for TestSupervisorKillsGroupWhenRunnerKilled, a
// runner that starts a client and waits to be killed.
func TestMain(m *testing.M) {
	MaybeSupervise()
	if name := os.Getenv("RETRYLAB_TEST_CLIENT"); name != "" {
		os.Exit(helperClient(name))
	}
	os.Exit(m.Run())
}

// helperClient runs the named test client.
func helperClient(name string) int {
	if name != "parent" {
		fmt.Fprintln(os.Stderr, "unknown test client", name)
		return 2
	}
	p, err := StartClient([]string{"sh", "-c", "sleep 600 & sleep 600"}, os.Environ(), io.Discard, io.Discard)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("pgid %d\n", p.Pgid)
	select {}
}
