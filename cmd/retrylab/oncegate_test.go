package main

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestOnceGate: one print of two, and the caller that comes second while
// the first prints returns only once that print has ended (the forced exit
// must not end the process in the middle of the command's own report: a
// report cut short was a rare failure of TestInterruptWritesSummary).
func TestOnceGate(t *testing.T) {
	t.Parallel()
	var g onceGate
	var prints, ended atomic.Int32
	started := make(chan struct{})
	release := make(chan struct{})
	first := make(chan bool)
	go func() {
		first <- g.do(func() {
			prints.Add(1)
			close(started)
			<-release
			ended.Add(1)
		})
	}()
	<-started
	second := make(chan bool)
	go func() { second <- g.do(func() { prints.Add(1) }) }()
	select {
	case <-second:
		t.Fatal("the second caller returned while the first was printing")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	if !<-first || <-second {
		t.Error("want the first caller to print and the second not")
	}
	if prints.Load() != 1 || ended.Load() != 1 {
		t.Errorf("prints %d, ended %d; want 1, 1", prints.Load(), ended.Load())
	}
}
