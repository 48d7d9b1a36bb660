package client

import (
	"context"
	"fmt"
	"time"
)

// KillTimer is when an external client is killed: deadline after its
// start, or, with a start grace, deadline after its first request at the
// mock (first closed), and grace after its start if no request came.
type KillTimer struct {
	Deadline, Grace time.Duration
	First           <-chan struct{} // nil: the deadline counts from the start
}

// WaitClient waits until the client exits, killing it at its deadline or
// when ctx ends (and saying so in exit.Problem; "killed after" starts
// every problem of a client stopped at a deadline).
func WaitClient(ctx context.Context, p *Proc, kt KillTimer, exit *ClientExit) ClientStatus {
	started := time.Now()
	first := kt.First
	limit := kt.Deadline
	if first != nil {
		limit = kt.Grace
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case st := <-p.exited:
			return st
		case <-first:
			// The deadline starts now: the client has started.
			first = nil
			timer.Stop()
			timer.Reset(kt.Deadline)
			continue
		case <-timer.C:
			p.Kill()
			switch {
			case first != nil:
				exit.Problem = fmt.Sprintf("killed after %s: no request reached the mock in its start-up allowance (%s)", kt.Grace, kt.Grace)
			case kt.First != nil:
				exit.Problem = fmt.Sprintf("killed after %s: still running at the deadline, %s after its first request (expect.maxDuration, default %s)",
					time.Since(started).Round(time.Millisecond), kt.Deadline, DefaultDeadline)
			default:
				exit.Problem = fmt.Sprintf("killed after %s: still running at the deadline (expect.maxDuration, default %s)", kt.Deadline, DefaultDeadline)
			}
		case <-ctx.Done():
			p.Kill()
			exit.Problem = "killed: the run was interrupted"
		}
		return <-p.exited
	}
}

// DefaultDeadline bounds a scenario without expect.maxDuration: past it the
// client is stopped (an external one killed) and the scenario fails.
const DefaultDeadline = 2 * time.Minute

// ClientExit is how an external client ended.
type ClientExit struct {
	Command  string
	ExitCode int    // -1 if it did not exit by itself
	Problem  string // "" if it exited by itself; else e.g. "killed after 30s: still running at maxDuration"
}
