package retry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/retrylab/retrylab/retry/errreport"
	"github.com/retrylab/retrylab/retry/provider"
)

// RetryContext is the record of one logical request (seed 001's
// RetryContext): how many attempts it took and what each failure was.
type RetryContext struct {
	Attempts  int             // attempts made, fallbacks and ladder included
	Failures  []AttemptRecord // every failed attempt, in order
	Succeeded bool
	Output    string        // the accepted output (Run)
	Duration  time.Duration // policy time, from the first attempt to the end
}

// Summary is seed 001's RetryContext.Summary(): "succeeded after 2
// attempt(s)", or "failed after 1 attempt(s)".
func (rc *RetryContext) Summary() string {
	if rc.Succeeded {
		return fmt.Sprintf("succeeded after %d attempt(s)", rc.Attempts)
	}
	return fmt.Sprintf("failed after %d attempt(s)", rc.Attempts)
}

// AttemptRecord is one failed attempt: when, where, what, and what came
// next (the wait, or the fallback taken).
type AttemptRecord struct {
	Number      int
	Time        time.Time // when the attempt failed (by Retrier.Now)
	Provider    string
	Model       string
	Type        FailureType
	Status      int
	Message     string
	Delay       time.Duration // wait before the next attempt, 0 if none
	DelaySource string        // backoff, retry-after or none
	SwitchedTo  string        // the fallback or next model taken after it
	// ErrorContext says the next attempt was rebuilt from this failure.
	ErrorContext bool
}

type stepKey struct{}

// WithStep returns ctx carrying s, for the Reports of the requests run with it.
func WithStep(ctx context.Context, s errreport.StepContext) context.Context {
	return context.WithValue(ctx, stepKey{}, s)
}

// StepFrom returns the StepContext ctx carries (the zero value if none).
func StepFrom(ctx context.Context) errreport.StepContext {
	s, _ := ctx.Value(stepKey{}).(errreport.StepContext)
	return s
}

// NewReport builds the Report of err, the last error of a request given up
// on after attempts attempts for reason, with the failures rc recorded.
// Retrier.Do builds it itself; NewReport is for callers with their own loop.
func NewReport(err error, reason string, attempts int, rc *RetryContext, step errreport.StepContext, now time.Time) *errreport.Report {
	var prov string
	if pe := (*provider.Error)(nil); errors.As(err, &pe) {
		prov = pe.Provider
	}
	return newReport(Classify(err), reason, attempts, rc, step, now, prov, "")
}

func newReport(c Classification, reason string, attempts int, rc *RetryContext, step errreport.StepContext, now time.Time, prov, model string) *errreport.Report {
	r := &errreport.Report{ID: newReportID(now), Time: now, Step: step, Reason: reason, Attempts: attempts,
		RootCause: errreport.RootCause{Category: c.Class.String(), Type: string(c.Type), Status: c.Status, Provider: prov, Model: model,
			Message: c.Message, RequestID: c.RequestID},
		Recovery: RecoveryFor(c.Type, reason)}
	if rc != nil {
		for _, a := range rc.Failures {
			r.History = append(r.History, errreport.HistoryItem{Attempt: a.Number, Time: a.Time, Provider: a.Provider, Model: a.Model,
				Type: string(a.Type), Status: a.Status, Message: a.Message, DelayMs: a.Delay.Milliseconds(), DelaySource: a.DelaySource,
				SwitchedTo: a.SwitchedTo, ErrorContext: a.ErrorContext})
		}
	}
	if c.Class == NonRetryable {
		r.Tags = []string{errreport.TagUnrecoverable}
	} else {
		r.Tags = []string{errreport.TagExhausted}
	}
	return r
}

// report builds the Report of the request l gave up on.
func (l *loop) report(ctx context.Context, ex *ExhaustedError) *errreport.Report {
	return newReport(ex.Classification, ex.Reason, ex.Attempts, l.rc, StepFrom(ctx), l.now(), l.cur.provider, l.cur.model)
}

// newReportID is "err-" + the time + 4 random bytes: sortable, unique.
func newReportID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return "err-" + now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:])
}
