package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/retrylab/retrylab/trace"
)

// ServeVerdict is what `chaos serve` saw, from the server's side only.
type ServeVerdict struct {
	Attempts []ServerAttempt
	// Gaps[i] is the wait between the end of attempt i+1 and the arrival of
	// attempt i+2, as the server saw it.
	Gaps []time.Duration
}

// NewServeVerdict computes the verdict of a list of attempts.
func NewServeVerdict(attempts []ServerAttempt) ServeVerdict {
	v := ServeVerdict{Attempts: attempts}
	for i := 1; i < len(attempts); i++ {
		prev := attempts[i-1]
		if prev.Ended.IsZero() {
			v.Gaps = append(v.Gaps, 0)
			continue
		}
		v.Gaps = append(v.Gaps, attempts[i].Arrived.Sub(prev.Ended))
	}
	return v
}

// Write prints the verdict for people: one line per attempt with the fault it
// met, its status and who closed it, and the gap before the next attempt.
func (v ServeVerdict) Write(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "server saw %d attempt(s)\n", len(v.Attempts)); err != nil {
		return err
	}
	for i, a := range v.Attempts {
		status := "-"
		if a.Status != 0 {
			status = fmt.Sprint(a.Status)
		}
		line := fmt.Sprintf("  attempt %d: %-8s status %-3s %6d bytes  %8s  closed by %s",
			a.N, a.Fault, status, a.Bytes, a.Ended.Sub(a.Arrived).Round(time.Millisecond), a.ClosedBy)
		if a.Ended.IsZero() {
			line = fmt.Sprintf("  attempt %d: %-8s (still open)", a.N, a.Fault)
		}
		if a.Model != "" || a.Path != "" {
			line += fmt.Sprintf("  %s %s", a.Path, a.Model)
		}
		if i < len(v.Gaps) {
			line += fmt.Sprintf("\n    wait before attempt %d: %s", a.N+1, v.Gaps[i].Round(time.Millisecond))
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// Serve starts an Env for sc behind toxi, prints ANTHROPIC_BASE_URL=... and
// OPENAI_BASE_URL=... on stdout, journals to journalPath (if not ""), runs
// until ctx ends, then prints the server-side verdict on stdout and returns
// it. Progress lines go to stderr.
func Serve(ctx context.Context, sc *Scenario, toxi *Toxiproxy, journalPath string, stdout, stderr io.Writer) (ServeVerdict, error) {
	runID := "serve-" + time.Now().UTC().Format("20060102T150405Z")
	var journal *trace.Writer
	if journalPath != "" {
		var err error
		journal, err = trace.Create(journalPath, runID)
		if err != nil {
			return ServeVerdict{}, fmt.Errorf("chaos serve: journal: %w", err)
		}
		defer journal.Close()
	}
	env, err := StartEnv(ctx, EnvConfig{Scenario: sc, Toxi: toxi, Journal: journal, RunID: runID, Log: stderr})
	if err != nil {
		return ServeVerdict{}, err
	}
	for _, kv := range env.ClientEnv() {
		fmt.Fprintln(stdout, kv)
	}
	fmt.Fprintf(stderr, "serving scenario %q (%d fault(s), then ok); press Ctrl-C to stop\n", sc.Name, len(sc.Attempts))
	<-ctx.Done()
	closeErr := env.Close()
	v := NewServeVerdict(env.Attempts())
	werr := v.Write(stdout)
	return v, errors.Join(closeErr, werr)
}
