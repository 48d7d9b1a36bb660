package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stopGrace is how long a command may take, after the first SIGINT or
// SIGTERM, to write what it finished and clean up before the process exits
// anyway: whatever it is blocked on (a pipe that never writes, a FIFO, a
// client that ignores signals), retrylab stops within a second.
var stopGrace = 800 * time.Millisecond // a variable for tests only

// flushBound is how long, once mainExit stops waiting for the command, the
// command's exit hooks (atForcedExit) may take to write what is known and
// delete what would outlive the process: with stopGrace, under a second.
var flushBound = 150 * time.Millisecond // a variable for tests only

// runCommand is run; tests replace it with a command that ignores its context.
var runCommand = run

// signalsReady, if set, is called once mainExit handles SIGINT and SIGTERM
// (tests wait for it: until then a signal kills the process).
var signalsReady func()

// Exit codes of an interrupted command: 128 + the signal's number, as shells
// report it.
const (
	exitInterrupted = 130 // SIGINT
	exitTerminated  = 143 // SIGTERM
)

// interruptError is the cause of the command's context once a signal came.
type interruptError struct{ sig os.Signal }

func (e *interruptError) Error() string { return "interrupted by " + signalName(e.sig) }

// Is makes an interruptError a context.Canceled, so that code checking for
// a cancelled context treats both alike.
func (e *interruptError) Is(target error) bool { return target == context.Canceled }

func signalName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

func signalExit(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return exitTerminated
	}
	return exitInterrupted
}

// mainExit runs the command named by args and returns the process's exit
// code. The first SIGINT or SIGTERM cancels the command's context: the
// command stops, writes what it finished and returns; if it has not returned
// stopGrace later, or a second signal comes, mainExit runs the command's
// exit hooks (atForcedExit: chaos run writes what finished, prints its
// report of it and deletes its proxies), for flushBound at most, and
// returns. An interrupted command
// exits 130 (SIGINT) or 143 (SIGTERM), whatever it returned, unless a
// signal is how it ends (signalEnds: chaos serve) and it returned its
// verdict within stopGrace: then its own exit code stands.
func mainExit(args []string, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if signalsReady != nil {
		signalsReady()
	}
	hooks := &exitHooks{fns: map[int]func(time.Duration){}}
	ctx, cancel := context.WithCancelCause(context.WithValue(context.Background(), exitHooksKey{}, hooks))
	defer cancel(nil)

	done := make(chan int, 1)
	cmd := runCommand
	go func() { done <- exitCode(cmd(ctx, args, stdout, stderr), stderr) }()

	var sig os.Signal
	select {
	case code := <-done:
		return code
	case sig = <-sigs:
	}
	cancel(&interruptError{sig})
	fmt.Fprintf(stderr, "retrylab: %s: stopping (press Ctrl-C again to exit at once)\n", signalName(sig))
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case code := <-done:
		if hooks.signalEnds.Load() && code != exitInterrupted {
			return code
		}
		return signalExit(sig)
	case s := <-sigs:
		fmt.Fprintf(stderr, "retrylab: second %s: exiting now\n", signalName(s))
	case <-grace.C:
		what := "what was not written is lost"
		if hooks.len() > 0 {
			what = "writing what finished, the rest marked interrupted"
		}
		fmt.Fprintf(stderr, "retrylab: not stopped %s after %s: exiting now; %s\n", stopGrace, signalName(sig), what)
	}
	hooks.run(flushBound)
	return signalExit(sig)
}

// exitHooks are what commands ask mainExit to do before it exits without
// waiting for them (see atForcedExit).
type exitHooks struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(time.Duration)
	// signalEnds is set by a command that a signal ends normally.
	signalEnds atomic.Bool
}

type exitHooksKey struct{}

// atForcedExit registers f, to be run if mainExit exits before the command
// returns (the grace period after a signal ended, or a second signal came):
// f writes what is known and deletes what would outlive the process, within
// the duration it is given. The command calls the returned function once
// it no longer needs f. Without mainExit (a test calling run) it does
// nothing.
func atForcedExit(ctx context.Context, f func(d time.Duration)) (remove func()) {
	h, ok := ctx.Value(exitHooksKey{}).(*exitHooks)
	if !ok {
		return func() {}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.next
	h.next++
	h.fns[id] = f
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.fns, id)
	}
}

// signalEnds tells mainExit that a signal is how the command of ctx ends,
// not an interruption: chaos serve runs until Ctrl-C (or SIGTERM from a
// script), then prints its verdict, so once it says so, its exit code is
// the verdict's (0 or 1), not 130 or 143. A forced exit (a second signal,
// or no return within stopGrace) and a command that returns the
// interruption itself (a cancelled context: exit code 130) still exit 130
// or 143. Without mainExit it does nothing.
func signalEnds(ctx context.Context) {
	if h, ok := ctx.Value(exitHooksKey{}).(*exitHooks); ok {
		h.signalEnds.Store(true)
	}
}

func (h *exitHooks) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.fns)
}

// run runs every hook at once, each given d, and returns when all have
// returned or d has passed.
func (h *exitHooks) run(d time.Duration) {
	h.mu.Lock()
	fns := make([]func(time.Duration), 0, len(h.fns))
	for _, f := range h.fns {
		fns = append(fns, f)
	}
	h.mu.Unlock()
	if len(fns) == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, f := range fns {
		wg.Go(func() { f(d) })
	}
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-all:
	case <-t.C:
	}
}

// isInterrupt reports whether err comes from a cancelled context.
func isInterrupt(err error) bool {
	return errors.Is(err, context.Canceled)
}
