package main

import "sync"

// onceGate lets the end of a command and its forced exit (atForcedExit)
// agree on who prints the report: the first to get it prints, and holds
// it while printing, so that the other, arriving meanwhile, waits for the
// print to end (the forced exit then ends the process with the report
// whole; mainExit still bounds how long the forced exit may wait).
type onceGate struct {
	mu   sync.Mutex
	done bool
}

// do runs print unless the gate printed already, holding the gate while
// it runs; it reports whether print ran.
func (g *onceGate) do(print func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return false
	}
	g.done = true
	print()
	return true
}
