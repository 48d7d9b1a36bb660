package errreport

import (
	"maps"
	"slices"
	"time"

	"github.com/retrylab/retrylab/trace"
)

// StepContext says where in the caller's work a request ran (seed 001's
// step context: plan, journal entry, phase). The caller passes it with
// retry.WithStep; the retry core copies it into Reports.
type StepContext struct {
	Plan      string            `json:"plan,omitempty"`
	Entry     string            `json:"entry,omitempty"` // the journal entry, e.g. "12"
	Phase     string            `json:"phase,omitempty"` // e.g. streaming, processing
	Operation string            `json:"operation,omitempty"`
	Fields    map[string]string `json:"fields,omitempty"` // anything else worth knowing
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
	// conditional (retry.ClassOf).
	Category  string `json:"category"`
	Type      string `json:"type"` // the failure type (retry.FailureType)
	Status    int    `json:"status,omitempty"`
	Provider  string `json:"provider,omitempty"`
	Model     string `json:"model,omitempty"`
	Message   string `json:"message"`
	RequestID string `json:"requestId,omitempty"`
}

// Report is seed 001's ErrorReport: a request the retry core gave up on. It
// is what retry.ExhaustedError carries, the ErrorReport trace event, and an entry
// of the ErrorRegistry.
type Report struct {
	ID        string        `json:"id"`
	Time      time.Time     `json:"time"`
	RootCause RootCause     `json:"rootCause"`
	Step      StepContext   `json:"step,omitzero"`
	Reason    string        `json:"reason"` // why retrying stopped (retry.ExhaustedError.Reason)
	Attempts  int           `json:"attempts"`
	Recovery  []Action      `json:"recovery"`
	History   []HistoryItem `json:"history"`
	// Tags: "unrecoverable" for a failure no retry can cure (a
	// non-retryable category), "exhausted" otherwise.
	Tags       []string  `json:"tags,omitempty"`
	Resolved   bool      `json:"resolved"`
	ResolvedAt time.Time `json:"resolvedAt,omitzero"`
}

// categoryNonRetryable is the RootCause.Category of a failure no retry can
// cure (retry.NonRetryable's name).
const categoryNonRetryable = "non-retryable"

// Report tags.
const (
	TagUnrecoverable = "unrecoverable"
	TagExhausted     = "exhausted"
)

// HistoryItem is a retry.AttemptRecord as a Report stores it.
type HistoryItem struct {
	Attempt      int       `json:"attempt"`
	Time         time.Time `json:"time"`
	Provider     string    `json:"provider,omitempty"`
	Model        string    `json:"model,omitempty"`
	Type         string    `json:"type"`
	Status       int       `json:"status,omitempty"`
	Message      string    `json:"message,omitempty"`
	DelayMs      int64     `json:"delayMs"`
	DelaySource  string    `json:"delaySource,omitempty"`
	SwitchedTo   string    `json:"switchedTo,omitempty"`
	ErrorContext bool      `json:"errorContext,omitempty"`
}

// Unrecoverable reports a failure that no retry can cure.
func (r *Report) Unrecoverable() bool { return slices.Contains(r.Tags, TagUnrecoverable) }

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

// Action is one recovery action of a Report: what to do, how urgent, and
// the command to run or the setting to change, when there is one.
type Action struct {
	Priority string `json:"priority"` // critical, high, medium, low
	Text     string `json:"text"`
	Command  string `json:"command,omitempty"`
	Setting  string `json:"setting,omitempty"`
}

// Action priorities.
const (
	PriorityCritical = "critical"
	PriorityHigh     = "high"
	PriorityMedium   = "medium"
	PriorityLow      = "low"
)
