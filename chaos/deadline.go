package chaos

import (
	"context"
	"fmt"
	"time"
)

// killTimer is when an external client is killed: deadline after its
// start, or, with a start grace, deadline after its first request at the
// mock (first closed), and grace after its start if no request came.
type killTimer struct {
	deadline, grace time.Duration
	first           <-chan struct{} // nil: the deadline counts from the start
}

// waitClient waits until the client exits, killing it at its deadline or
// when ctx ends (and saying so in exit.Problem; "killed after" starts
// every problem of a client stopped at a deadline).
func waitClient(ctx context.Context, p *clientProc, kt killTimer, exit *ClientExit) clientStatus {
	started := time.Now()
	first := kt.first
	limit := kt.deadline
	if first != nil {
		limit = kt.grace
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
			timer.Reset(kt.deadline)
			continue
		case <-timer.C:
			p.kill()
			switch {
			case first != nil:
				exit.Problem = fmt.Sprintf("killed after %s: no request reached the mock in its start-up allowance (%s)", kt.grace, kt.grace)
			case kt.first != nil:
				exit.Problem = fmt.Sprintf("killed after %s: still running at the deadline, %s after its first request (expect.maxDuration, default %s)",
					time.Since(started).Round(time.Millisecond), kt.deadline, defaultDeadline)
			default:
				exit.Problem = fmt.Sprintf("killed after %s: still running at the deadline (expect.maxDuration, default %s)", kt.deadline, defaultDeadline)
			}
		case <-ctx.Done():
			p.kill()
			exit.Problem = "killed: the run was interrupted"
		}
		return <-p.exited
	}
}

// defaultDeadline bounds a scenario without expect.maxDuration: past it the
// client is stopped (an external one killed) and the scenario fails.
const defaultDeadline = 2 * time.Minute

// ClientExit is how an external client ended.
type ClientExit struct {
	Command  string
	ExitCode int    // -1 if it did not exit by itself
	Problem  string // "" if it exited by itself; else e.g. "killed after 30s: still running at maxDuration"
}
