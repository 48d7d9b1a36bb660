package chaos

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/trace"
)

// board is the live view on a terminal: one line per scenario, redrawn in
// place as attempts arrive and waits begin. Off a terminal the runner prints
// plain progress lines instead, which is what CI logs want.
type board struct {
	mu     sync.Mutex
	w      io.Writer
	color  bool
	names  []string
	status map[string]string
	drawn  int
}

func newBoard(w io.Writer, color bool, scs []*Scenario) *board {
	b := &board{w: w, color: color, status: map[string]string{}}
	for _, sc := range scs {
		b.names = append(b.names, sc.Name)
		b.status[sc.Name] = "queued"
	}
	return b
}

func (b *board) set(name, s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.status[name] = s
	b.redraw()
}

func (b *board) redraw() {
	var sb strings.Builder
	if b.drawn > 0 {
		fmt.Fprintf(&sb, "\x1b[%dA", b.drawn)
	}
	width := 0
	for _, n := range b.names {
		width = max(width, len(n))
	}
	for _, n := range b.names {
		s := b.status[n]
		if b.color {
			switch {
			case strings.HasPrefix(s, "PASS"):
				s = "\x1b[32m" + s + "\x1b[0m"
			case strings.HasPrefix(s, "FAIL"):
				s = "\x1b[31m" + s + "\x1b[0m"
			}
		}
		fmt.Fprintf(&sb, "\x1b[2K%-*s  %s\n", width, n, s)
	}
	b.drawn = len(b.names)
	io.WriteString(b.w, sb.String())
}

// progress turns one scenario's raw progress (the retry core's log lines,
// the runner's attempt lines) into what people read. Every line of the retry
// core passes through verbatim, as seed 000 R4 words it ("[retry] Using
// retry-after: 4s", "[retry] Not switching …", "[retry] Not escalating …:
// already at the most capable model"); a wait line is labelled with where
// its wait came from, "(retry-after)" or "(backoff)". The built-in client's
// Retrier says so through OnAttempt (attempt), before it logs the line; for
// an external client that prints seed 000's lines, a "Using retry-after"
// line before the wait line says it.
type progress struct {
	mu         sync.Mutex
	structured bool // attempt has been called: the log text is not read
	retryAfter bool
	emit       func(string)
}

// attempt is the built-in client's Retrier.OnAttempt.
func (p *progress) attempt(o retry.AttemptOutcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.structured = true
	p.retryAfter = o.Next == retry.NextRetry && o.DelaySource == trace.DelayRetryAfter
}

func (p *progress) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case strings.HasPrefix(s, "[retry] Using retry-after"):
		if !p.structured {
			p.retryAfter = true
		}
	case strings.HasPrefix(s, "[retry] Attempt ") && strings.Contains(s, " — waiting "):
		if p.retryAfter {
			s += " (retry-after)"
		} else {
			s += " (backoff)"
		}
		p.retryAfter = false
	}
	p.emit(s)
}
