// Command retrylab tests and analyses the retry logic of LLM agents.
// See README.md for the reference; main only wires os state into run.
package main

import (
	"os"
)

func main() {
	os.Exit(mainExit(os.Args[1:], os.Stdout, os.Stderr))
}
