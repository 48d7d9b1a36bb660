//go:build !unix

package client

import (
	"os"
	"os/exec"
)

// spawn starts argv directly: there is no process group to kill, only the
// client itself, and no supervisor.
func spawn(argv, env []string, stdout, stderr *os.File) (*Proc, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = env
	c.Stdout, c.Stderr = stdout, stderr
	if err := c.Start(); err != nil {
		return nil, err
	}
	p := &Proc{exited: make(chan ClientStatus, 1), killFn: func() { _ = c.Process.Kill() }}
	go func() {
		ps, err := c.Process.Wait()
		if err != nil {
			p.exited <- ClientStatus{Code: -1, Err: err}
			return
		}
		p.exited <- ClientStatus{Code: ps.ExitCode()}
	}()
	return p, nil
}

// supervise is never entered here: StartClient never asks for it.
func supervise([]string) int { return 2 }
