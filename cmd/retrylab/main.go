// Command retrylab tests and analyses the retry logic of LLM agents.
// See docs/cli.md for the reference; main only wires os state into run.
package main

import (
	"os"

	"github.com/retrylab/retrylab/chaos/client"
)

func main() {
	// A client's supervisor is this program run again (Linux): it must
	// supervise before anything else.
	client.MaybeSupervise()
	os.Exit(mainExit(os.Args[1:], os.Stdout, os.Stderr))
}
