// Command rss runs a command and prints its wall time and peak resident set
// size, for machines without /usr/bin/time -v:
//
//	go run ./bench/rss -- retrylab trace analyze bench/corpus
//
// It prints "wall_ms=N max_rss_kb=N" on stderr and exits with the
// command's exit code.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: rss -- COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	rss := maxRSSKiB(cmd.ProcessState)
	fmt.Fprintf(os.Stderr, "wall_ms=%d max_rss_kb=%d\n", wall.Milliseconds(), rss)
	os.Exit(code)
}
