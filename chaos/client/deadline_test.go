package client

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestWaitClientDeadlineFromFirstRequest: with a start grace, a client's
// deadline counts from its first request at the mock, so a slow start-up
// (Kilo CLI never reached the mock inside the hang probe's 15s) is not
// taken from it; a client that sends nothing is killed at the grace.
// Fake time (synctest): a fake process killed by a function field.
func TestWaitClientDeadlineFromFirstRequest(t *testing.T) {
	tests := []struct {
		name      string
		kt        func(first <-chan struct{}) KillTimer
		firstAt   time.Duration // when the first request arrives; 0: never
		exitAt    time.Duration // when the client exits by itself; 0: never
		wantKill  time.Duration // when it is killed; 0: not killed
		wantWords string        // in exit.Problem
	}{
		{"no grace: the deadline counts from the start, a slow start-up eats it",
			func(<-chan struct{}) KillTimer { return KillTimer{Deadline: 15 * time.Second} },
			12 * time.Second, 0, 15 * time.Second, "killed after 15s: still running at the deadline (expect.maxDuration"},
		{"grace: 12s of start-up, then 15s from the first request",
			func(f <-chan struct{}) KillTimer {
				return KillTimer{Deadline: 15 * time.Second, Grace: 30 * time.Second, First: f}
			},
			12 * time.Second, 0, 27 * time.Second, "killed after 27s: still running at the deadline, 15s after its first request"},
		{"grace: a client that never calls ends at the grace",
			func(f <-chan struct{}) KillTimer {
				return KillTimer{Deadline: 15 * time.Second, Grace: 30 * time.Second, First: f}
			},
			0, 0, 30 * time.Second, "killed after 30s: no request reached the mock in its start-up allowance"},
		{"grace: a client that exits by itself after its first request is not killed",
			func(f <-chan struct{}) KillTimer {
				return KillTimer{Deadline: 15 * time.Second, Grace: 30 * time.Second, First: f}
			},
			12 * time.Second, 20 * time.Second, 0, ""},
		{"grace: a first request at once, the deadline as without",
			func(f <-chan struct{}) KillTimer {
				return KillTimer{Deadline: 15 * time.Second, Grace: 30 * time.Second, First: f}
			},
			time.Millisecond, 0, 15*time.Second + time.Millisecond, "15s after its first request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				first := make(chan struct{})
				p := &Proc{exited: make(chan ClientStatus, 1)}
				var killedAt time.Duration
				p.killFn = func() {
					if killedAt == 0 {
						killedAt = time.Since(start)
						p.exited <- ClientStatus{Signaled: true, Signal: "killed"}
					}
				}
				if tt.firstAt > 0 {
					time.AfterFunc(tt.firstAt, func() { close(first) })
				}
				if tt.exitAt > 0 {
					time.AfterFunc(tt.exitAt, func() {
						if killedAt == 0 {
							p.exited <- ClientStatus{}
						}
					})
				}
				exit := &ClientExit{}
				WaitClient(context.Background(), p, tt.kt(first), exit)
				if killedAt != tt.wantKill {
					t.Errorf("killed at %s, want %s (%q)", killedAt, tt.wantKill, exit.Problem)
				}
				if !strings.Contains(exit.Problem, tt.wantWords) || (tt.wantWords == "") != (exit.Problem == "") {
					t.Errorf("Problem = %q, want %q", exit.Problem, tt.wantWords)
				}
				if tt.wantKill > 0 && !strings.HasPrefix(exit.Problem, "killed after ") {
					t.Errorf("Problem = %q: a client stopped at a deadline is \"killed after ...\"", exit.Problem)
				}
			})
		})
	}
}
