//go:build unix && !linux

package client

import "os"

// spawn starts argv directly, in a process group of its own: only Linux
// has Pdeathsig, which the supervisor stands on.
func spawn(argv, env []string, stdout, stderr *os.File) (*Proc, error) {
	return spawnDirect(argv, env, stdout, stderr)
}

// supervise is never entered here: StartClient never asks for it.
func supervise([]string) int { return 2 }
