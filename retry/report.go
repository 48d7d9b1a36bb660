package retry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
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

// StepContext says where in the caller's work a request ran (seed 001's
// step context: plan, journal entry, phase). The caller passes it with
// WithStep; the retry core copies it into Reports.
type StepContext struct {
	Plan      string            `json:"plan,omitempty"`
	Entry     string            `json:"entry,omitempty"` // the journal entry, e.g. "12"
	Phase     string            `json:"phase,omitempty"` // e.g. streaming, processing
	Operation string            `json:"operation,omitempty"`
	Fields    map[string]string `json:"fields,omitempty"` // anything else worth knowing
}

type stepKey struct{}

// WithStep returns ctx carrying s, for the Reports of the requests run with it.
func WithStep(ctx context.Context, s StepContext) context.Context {
	return context.WithValue(ctx, stepKey{}, s)
}

// StepFrom returns the StepContext ctx carries (the zero value if none).
func StepFrom(ctx context.Context) StepContext {
	s, _ := ctx.Value(stepKey{}).(StepContext)
	return s
}

// fields flattens s for a trace event.
func (s StepContext) fields() map[string]string {
	m := maps.Clone(s.Fields)
	for k, v := range map[string]string{"plan": s.Plan, "entry": s.Entry, "phase": s.Phase, "operation": s.Operation} {
		if v != "" {
			if m == nil {
				m = map[string]string{}
			}
			m[k] = v
		}
	}
	return m
}

// RootCause is what went wrong in the last attempt.
type RootCause struct {
	// Category is seed 001's failure category: retryable, non-retryable or
	// conditional (ClassOf).
	Category  string      `json:"category"`
	Type      FailureType `json:"type"`
	Status    int         `json:"status,omitempty"`
	Provider  string      `json:"provider,omitempty"`
	Model     string      `json:"model,omitempty"`
	Message   string      `json:"message"`
	RequestID string      `json:"requestId,omitempty"`
}

// Report is seed 001's ErrorReport: a request the retry core gave up on. It
// is what ExhaustedError carries, the ErrorReport trace event, and an entry
// of the ErrorRegistry.
type Report struct {
	ID        string        `json:"id"`
	Time      time.Time     `json:"time"`
	RootCause RootCause     `json:"rootCause"`
	Step      StepContext   `json:"step,omitzero"`
	Reason    string        `json:"reason"` // why retrying stopped (ExhaustedError.Reason)
	Attempts  int           `json:"attempts"`
	Recovery  []Action      `json:"recovery"`
	History   []HistoryItem `json:"history"`
	// Tags: "unrecoverable" for a failure no retry can cure (a
	// non-retryable category), "exhausted" otherwise.
	Tags       []string  `json:"tags,omitempty"`
	Resolved   bool      `json:"resolved"`
	ResolvedAt time.Time `json:"resolvedAt,omitzero"`
}

// Report tags.
const (
	TagUnrecoverable = "unrecoverable"
	TagExhausted     = "exhausted"
)

// HistoryItem is an AttemptRecord as a Report stores it.
type HistoryItem struct {
	Attempt      int         `json:"attempt"`
	Time         time.Time   `json:"time"`
	Provider     string      `json:"provider,omitempty"`
	Model        string      `json:"model,omitempty"`
	Type         FailureType `json:"type"`
	Status       int         `json:"status,omitempty"`
	Message      string      `json:"message,omitempty"`
	DelayMs      int64       `json:"delayMs"`
	DelaySource  string      `json:"delaySource,omitempty"`
	SwitchedTo   string      `json:"switchedTo,omitempty"`
	ErrorContext bool        `json:"errorContext,omitempty"`
}

// Unrecoverable reports a failure that no retry can cure.
func (r *Report) Unrecoverable() bool { return slices.Contains(r.Tags, TagUnrecoverable) }

// NewReport builds the Report of err, the last error of a request given up
// on after attempts attempts for reason, with the failures rc recorded.
// Retrier.Do builds it itself; NewReport is for callers with their own loop.
func NewReport(err error, reason string, attempts int, rc *RetryContext, step StepContext, now time.Time) *Report {
	var prov string
	if pe := (*provider.Error)(nil); errors.As(err, &pe) {
		prov = pe.Provider
	}
	return newReport(Classify(err), reason, attempts, rc, step, now, prov, "")
}

func newReport(c Classification, reason string, attempts int, rc *RetryContext, step StepContext, now time.Time, prov, model string) *Report {
	r := &Report{ID: newReportID(now), Time: now, Step: step, Reason: reason, Attempts: attempts,
		RootCause: RootCause{Category: c.Class.String(), Type: c.Type, Status: c.Status, Provider: prov, Model: model,
			Message: c.Message, RequestID: c.RequestID},
		Recovery: RecoveryFor(c.Type, reason)}
	if rc != nil {
		for _, a := range rc.Failures {
			r.History = append(r.History, HistoryItem{Attempt: a.Number, Time: a.Time, Provider: a.Provider, Model: a.Model,
				Type: a.Type, Status: a.Status, Message: a.Message, DelayMs: a.Delay.Milliseconds(), DelaySource: a.DelaySource,
				SwitchedTo: a.SwitchedTo, ErrorContext: a.ErrorContext})
		}
	}
	if c.Class == NonRetryable {
		r.Tags = []string{TagUnrecoverable}
	} else {
		r.Tags = []string{TagExhausted}
	}
	return r
}

// report builds the Report of the request l gave up on.
func (l *loop) report(ctx context.Context, ex *ExhaustedError) *Report {
	return newReport(ex.Classification, ex.Reason, ex.Attempts, l.rc, StepFrom(ctx), l.now(), l.cur.provider, l.cur.model)
}

// newReportID is "err-" + the time + 4 random bytes: sortable, unique.
func newReportID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return "err-" + now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:])
}

// Event is r as an ErrorReport trace event's payload.
func (r *Report) Event() trace.ErrorReport {
	ev := trace.ErrorReport{ID: r.ID, Category: r.RootCause.Category, FailureType: string(r.RootCause.Type),
		Status: r.RootCause.Status, Provider: r.RootCause.Provider, Model: r.RootCause.Model, Message: r.RootCause.Message,
		RequestID: r.RootCause.RequestID, Reason: r.Reason, Attempts: r.Attempts, Tags: slices.Clone(r.Tags),
		Step: r.Step.fields()}
	for _, a := range r.Recovery {
		ev.Actions = append(ev.Actions, trace.ReportAction(a))
	}
	for _, h := range r.History {
		ev.History = append(ev.History, trace.ReportAttempt{Attempt: h.Attempt, Time: h.Time, Provider: h.Provider,
			Model: h.Model, FailureType: string(h.Type), Status: h.Status, Message: h.Message, DelayMs: h.DelayMs,
			DelaySource: h.DelaySource, SwitchedTo: h.SwitchedTo, ErrorContext: h.ErrorContext})
	}
	return ev
}
