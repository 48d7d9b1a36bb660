//go:build unix

package client

import (
	"os"
	"os/exec"
	"syscall"
)

// spawnDirect starts argv as the leader of a new process group.
func spawnDirect(argv, env []string, stdout, stderr *os.File) (*Proc, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = env
	c.Stdout, c.Stderr = stdout, stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		return nil, err
	}
	pgid := c.Process.Pid // Setpgid: the group's id is the client's pid
	p := &Proc{Pgid: pgid, exited: make(chan ClientStatus, 1), killFn: func() { killGroup(pgid) }}
	go func() { p.exited <- statusOf(c.Process.Wait()) }()
	return p, nil
}

// killGroup sends SIGKILL to process group pgid. ESRCH (the group is gone)
// is fine; the group's id cannot be reused while it has members.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// statusOf says how a process ended.
func statusOf(ps *os.ProcessState, err error) ClientStatus {
	if err != nil {
		return ClientStatus{Code: -1, Err: err}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ClientStatus{Code: -1, Signaled: true, Signal: ws.Signal().String()}
	}
	return ClientStatus{Code: ps.ExitCode()}
}
