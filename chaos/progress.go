package chaos

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

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

// logf writes one progress line: "[scenario] message".
func (r *Runner) logf(name, format string, args ...any) {
	if r.Progress == nil {
		return
	}
	if r.board != nil {
		r.board.set(name, fmt.Sprintf(format, args...))
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.Progress, "[%s] %s\n", name, fmt.Sprintf(format, args...))
}

// lineWriter returns a writer that turns whatever is written into progress
// lines prefixed with the scenario's name, with secrets redacted.
func (r *Runner) lineWriter(name string, sec *redact.Secrets) *prefixWriter {
	p := &progress{emit: func(line string) { r.logf(name, "%s", line) }}
	return &prefixWriter{emit: p.line, scrub: sec.Scrub, progress: p}
}

type prefixWriter struct {
	mu    sync.Mutex
	buf   []byte
	emit  func(string)
	scrub func(string) string // nil: redact
	// progress labels the lines; the built-in client's Retrier tells it
	// each attempt's outcome (progress.attempt).
	progress *progress
}

func (w *prefixWriter) clean(s string) string {
	if w.scrub != nil {
		return w.scrub(s)
	}
	return provider.Redact(s)
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.clean(string(w.buf[:i])))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// Flush emits a final partial line.
func (w *prefixWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(w.clean(string(w.buf)))
		w.buf = nil
	}
}
