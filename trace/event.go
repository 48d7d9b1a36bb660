package trace

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/retrylab/retrylab/trace/internal/jsonval"
)

// Version is the trace format version written in every event's "v" field.
const Version = 1

// Event types. The orchestrator types (IterationStarted and the rest) come from
// seed 003 and are read and counted by the analyzer.
const (
	TypeProviderRequestFinished = "ProviderRequestFinished"
	TypeRetryAttempt            = "RetryAttempt"
	TypeRunEscalated            = "RunEscalated"
	TypeRetryDecision           = "RetryDecision"
	TypeRunStarted              = "RunStarted"
	TypeRunFinished             = "RunFinished"
	TypeMockRequest             = "MockRequest"
	TypeMockResponse            = "MockResponse"
	// TypeErrorReport is an errreport.Report: a request the retry core gave up
	// on, with its root cause, recovery actions and retry history.
	TypeErrorReport = "ErrorReport"
	// TypeTicketTransition is a ticket's change of state (seed 002).
	TypeTicketTransition = "TicketTransition"
	// TypeEscalationDeclined is a switch of model or provider that did not
	// happen: refused by a hook, above the cost cap, or at the top of the
	// ladder.
	TypeEscalationDeclined = "EscalationDeclined"

	TypeIterationStarted     = "IterationStarted"
	TypeRepairAttempted      = "RepairAttempted"
	TypeVerificationFinished = "VerificationFinished"
	TypeRunStopped           = "RunStopped"
	TypeCandidateGenerated   = "CandidateGenerated"
	TypeJudgeInvoked         = "JudgeInvoked"
	TypeJudgeDecided         = "JudgeDecided"
	TypeDiagnosisStarted     = "DiagnosisStarted"
	TypeDiagnosisCompleted   = "DiagnosisCompleted"
	TypeStepFinished         = "StepFinished"
)

// KnownTypes lists every event type of trace format v1.
var KnownTypes = []string{
	TypeProviderRequestFinished, TypeRetryAttempt, TypeRunEscalated, TypeRetryDecision,
	TypeRunStarted, TypeRunFinished, TypeMockRequest, TypeMockResponse,
	TypeErrorReport, TypeTicketTransition, TypeEscalationDeclined,
	TypeIterationStarted, TypeRepairAttempted, TypeVerificationFinished, TypeRunStopped,
	TypeCandidateGenerated, TypeJudgeInvoked, TypeJudgeDecided, TypeDiagnosisStarted,
	TypeDiagnosisCompleted, TypeStepFinished,
}

// IsKnownType reports whether t is one of KnownTypes.
func IsKnownType(t string) bool {
	for _, k := range KnownTypes {
		if k == t {
			return true
		}
	}
	return false
}

// Event is one line of a trace. Payload holds the type's payload as raw JSON;
// use Decode to read it into one of the payload structs.
type Event struct {
	V       int             `json:"v"`
	TS      time.Time       `json:"ts,omitzero"`
	Type    string          `json:"type"`
	RunID   string          `json:"runId,omitempty"`
	Payload json.RawMessage `json:"payload"`
}

// TimeFormat is the layout of "ts": RFC 3339 in UTC with exactly three
// fractional digits, so that timestamps sort as text.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes the event with keys in the documented order and ts in
// TimeFormat (UTC), omitting ts when zero and runId when empty.
func (e Event) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 96+len(e.Payload))
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(e.V), 10)
	if !e.TS.IsZero() {
		ts := e.TS.UTC()
		if y := ts.Year(); y < 0 || y > 9999 {
			return nil, fmt.Errorf("trace: ts year %d outside RFC 3339's 0000-9999", y)
		}
		b = append(b, `,"ts":"`...)
		b = ts.AppendFormat(b, TimeFormat)
		b = append(b, '"')
	}
	b = append(b, `,"type":`...)
	b = jsonval.AppendString(b, e.Type)
	if e.RunID != "" {
		b = append(b, `,"runId":`...)
		b = jsonval.AppendString(b, e.RunID)
	}
	b = append(b, `,"payload":`...)
	if len(e.Payload) == 0 {
		b = append(b, "{}"...)
	} else {
		// encoding/json validates and compacts a Marshaler's output.
		b = append(b, e.Payload...)
	}
	return append(b, '}'), nil
}

// Decode unmarshals the event's payload into v.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Payload, v) }

// Delay sources of RetryAttempt.DelaySource.
const (
	DelayBackoff    = "backoff"
	DelayRetryAfter = "retry-after"
	DelayNone       = "none"
)

// Escalation reasons of RunEscalated.Reason.
const (
	ReasonAutoAfterRetries = "auto_after_retries"
	ReasonContextLimit     = "context_limit"
	ReasonErrorFallback    = "error_fallback"
	ReasonProviderFallback = "provider_fallback"
	ReasonManual           = "manual"
	ReasonNonImproving     = "non_improving"
	ReasonPatchFailures    = "patch_failures"
)

// ProviderRequestFinished is written once per logical request, after its last attempt.
type ProviderRequestFinished struct {
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	DurationMs  int64  `json:"durationMs"`
	Success     bool   `json:"success"`
	Retries     int    `json:"retries"`
	Error       string `json:"error,omitempty"`
	FailureType string `json:"failureType,omitempty"`
	RequestID   string `json:"requestId,omitempty"`
	// PromptPattern and Tags label the request when its caller set them
	// (retry.WithLabels): the kind of prompt, and free tags.
	PromptPattern string   `json:"promptPattern,omitempty"`
	Tags          []string `json:"tags,omitempty"`
}

// RetryAttempt is written once per failed attempt.
type RetryAttempt struct {
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Attempt      int    `json:"attempt"` // 1-based number of the attempt that failed
	MaxAttempts  int    `json:"maxAttempts"`
	FailureType  string `json:"failureType"`
	Status       int    `json:"status,omitempty"`
	ErrorMessage string `json:"errorMessage"`
	WillRetry    bool   `json:"willRetry"`
	DelayMs      int64  `json:"delayMs"` // wait before the next attempt, 0 if none
	DelaySource  string `json:"delaySource"`
	RetryAfterMs *int64 `json:"retryAfterMs,omitempty"`
	RequestID    string `json:"requestId,omitempty"`
	// ErrorContext marks a retry with error context (seed 004 US-002): the
	// next attempt's request is rebuilt from this failure.
	ErrorContext bool `json:"errorContext,omitempty"`
	// PromptPattern and Tags: as on ProviderRequestFinished.
	PromptPattern string   `json:"promptPattern,omitempty"`
	Tags          []string `json:"tags,omitempty"`
}

// RunEscalated is written on a switch of model or provider, or of level (L2 to L3).
type RunEscalated struct {
	From         string   `json:"from"`
	To           string   `json:"to"`
	Reason       string   `json:"reason"`
	AfterRetries *int     `json:"afterRetries,omitempty"`
	CostEstimate *float64 `json:"costEstimate,omitempty"`
}

// RetryDecision is a job- or ticket-level retry decision (seed 002).
type RetryDecision struct {
	TicketID       string `json:"ticketId"`
	Category       string `json:"category"`
	CurrentAttempt int    `json:"currentAttempt"`
	MaxRetries     int    `json:"maxRetries"`
	ShouldRetry    bool   `json:"shouldRetry"`
	NextDelayMs    int64  `json:"nextDelayMs"`
}

// ErrorReport is a request the retry core gave up on (seed 001's
// ErrorReport): root cause, where it happened, what to do, what was tried.
type ErrorReport struct {
	ID string `json:"id"`
	// Category is seed 001's failure category: retryable, non-retryable or
	// conditional.
	Category    string `json:"category"`
	FailureType string `json:"failureType"`
	Status      int    `json:"status,omitempty"`
	Provider    string `json:"provider,omitempty"`
	Model       string `json:"model,omitempty"`
	Message     string `json:"message"`
	RequestID   string `json:"requestId,omitempty"`
	// Reason says why retrying stopped ("non-retryable", "attempts
	// exhausted", ...).
	Reason   string            `json:"reason"`
	Attempts int               `json:"attempts"`
	Tags     []string          `json:"tags,omitempty"`
	Step     map[string]string `json:"step,omitempty"`
	Actions  []ReportAction    `json:"actions,omitempty"`
	History  []ReportAttempt   `json:"history,omitempty"`
}

// ReportAction is one thing a person (or the system) should do.
type ReportAction struct {
	Priority string `json:"priority"` // critical, high, medium, low
	Text     string `json:"text"`
	Command  string `json:"command,omitempty"`
	Setting  string `json:"setting,omitempty"`
}

// ReportAttempt is one failed attempt of an ErrorReport's history.
type ReportAttempt struct {
	Attempt      int       `json:"attempt"`
	Time         time.Time `json:"time,omitzero"`
	Provider     string    `json:"provider,omitempty"`
	Model        string    `json:"model,omitempty"`
	FailureType  string    `json:"failureType"`
	Status       int       `json:"status,omitempty"`
	Message      string    `json:"message,omitempty"`
	DelayMs      int64     `json:"delayMs"`
	DelaySource  string    `json:"delaySource,omitempty"`
	SwitchedTo   string    `json:"switchedTo,omitempty"` // the fallback or next model taken after it
	ErrorContext bool      `json:"errorContext,omitempty"`
}

// Ticket events of TicketTransition.Event (seed 002's state machine).
const (
	TicketClaim   = "claim"   // ready → in_progress
	TicketSucceed = "succeed" // in_progress → needs_review
	TicketRetry   = "retry"   // in_progress → ready, retry_after set
	TicketHold    = "hold"    // in_progress → on_hold
	TicketRelease = "release" // on_hold → ready, by a person
)

// TicketTransition is a ticket's change of state (seed 002), with the
// fields of the seed's activity log (errorCategory, currentAttempt,
// maxRetries, shouldRetry, nextDelayMs) on a failure.
type TicketTransition struct {
	TicketID          string    `json:"ticketId"`
	From              string    `json:"from"`
	To                string    `json:"to"`
	Event             string    `json:"event"`
	Actor             string    `json:"actor"` // "system", or the person who released the ticket
	ErrorCategory     string    `json:"errorCategory,omitempty"`
	CurrentAttempt    int       `json:"currentAttempt,omitempty"`
	MaxRetries        int       `json:"maxRetries,omitempty"`
	ShouldRetry       *bool     `json:"shouldRetry,omitempty"`
	NextDelayMs       int64     `json:"nextDelayMs,omitempty"`
	RetryCount        int       `json:"retryCount"`
	RetryAfter        time.Time `json:"retryAfter,omitzero"`
	AttemptsRemaining *int      `json:"attemptsRemaining,omitempty"`
	HoldReason        string    `json:"holdReason,omitempty"`
	Error             string    `json:"error,omitempty"`
}

// Why an escalation was declined, for EscalationDeclined.Why.
const (
	DeclinedRefused     = "refused"       // the confirmation hook said no
	DeclinedCostCap     = "cost_cap"      // it would take the run above its escalation cost cap
	DeclinedUnpriced    = "unpriced"      // a cost cap is set and the switch has no price
	DeclinedTopOfLadder = "top_of_ladder" // already at the most capable model
)

// EscalationDeclined is a switch of model or provider that did not happen.
type EscalationDeclined struct {
	From         string   `json:"from"`
	To           string   `json:"to,omitempty"` // empty at the top of the ladder
	Reason       string   `json:"reason"`       // the escalation's reason, as RunEscalated.Reason
	Why          string   `json:"why"`
	Detail       string   `json:"detail,omitempty"`
	CostEstimate *float64 `json:"costEstimate,omitempty"`
	Spent        *float64 `json:"spent,omitempty"` // escalation cost of the run so far
	Cap          *float64 `json:"cap,omitempty"`
}

// RunStarted opens a run. Its fields are free; these are the ones retrylab writes.
type RunStarted struct {
	Scenario string         `json:"scenario,omitempty"`
	Provider string         `json:"provider,omitempty"`
	Model    string         `json:"model,omitempty"`
	Policy   string         `json:"policy,omitempty"`
	Seed     int64          `json:"seed,omitempty"`
	Extra    map[string]any `json:"extra,omitempty"`
}

// RunFinished closes a run.
type RunFinished struct {
	Success    bool  `json:"success"`
	DurationMs int64 `json:"durationMs"`
}

// Who closed a connection, for MockResponse.ClosedBy.
const (
	ClosedByServer = "server"
	ClosedByClient = "client"
	ClosedByProxy  = "proxy"
)

// MockRequest is the mock server's journal entry for an arriving attempt.
type MockRequest struct {
	Attempt    int    `json:"attempt"`
	Fault      string `json:"fault"`
	Status     int    `json:"status"`
	Bytes      int64  `json:"bytes"`
	DurationMs int64  `json:"durationMs"`
	ClosedBy   string `json:"closedBy,omitempty"` // set once the attempt has ended
	Path       string `json:"path,omitempty"`
	Model      string `json:"model,omitempty"`
	// ArrivedAt is when the request's first byte reached the mock, with
	// nanosecond precision; the chaos runner measures the waits between
	// attempts from it. ConnectedAt is when the connection that carried it
	// was accepted, which is earlier when a client opens a connection
	// before it sends on it (a pooled or pre-opened connection).
	ArrivedAt   time.Time `json:"arrivedAt,omitzero"`
	ConnectedAt time.Time `json:"connectedAt,omitzero"`
	// BodySHA256 is the hex SHA-256 of the request body; Prompt is an
	// excerpt (at most 2 KB: head and tail) of the text of its last user
	// message, secrets redacted. Both empty when no request body arrived.
	BodySHA256 string `json:"bodySha256,omitempty"`
	Prompt     string `json:"prompt,omitempty"`
	// Outage is set when the attempt's fault came from the scenario's
	// outage: (after its attempts: list).
	Outage *OutageDraw `json:"outage,omitempty"`
	// Limited is set when the scenario's provider account (limits:)
	// refused the attempt: it met a 429 or an overloaded answer instead
	// of its planned fault.
	Limited *Limited `json:"limited,omitempty"`
	// Client is the fleet client (1-based) that sent the attempt, told
	// apart by its API key (never recorded); absent outside a fleet.
	Client int `json:"client,omitempty"`
	// Side is set for a request beside the answer (a token count, a model
	// list, a WebSocket upgrade, a health probe, an answer request the
	// scenario's attemptsMatch does not match, a path the mock does not
	// serve): answered without consuming a fault, with attempt 0 and its
	// method.
	Side   bool   `json:"side,omitempty"`
	Method string `json:"method,omitempty"`
}

// MockResponse is the mock server's journal entry for a finished attempt.
type MockResponse struct {
	Attempt    int       `json:"attempt"`
	Fault      string    `json:"fault"`
	Status     int       `json:"status"`
	Bytes      int64     `json:"bytes"`
	DurationMs int64     `json:"durationMs"`
	ClosedBy   string    `json:"closedBy"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// RetryAfter is the Retry-After header the mock stamped when it served
	// the attempt (a scenario's retryAfterDate); absent otherwise.
	RetryAfter string `json:"retryAfter,omitempty"`
}

// New builds an event of type typ with payload p marshalled to JSON. ts is
// the current UTC time truncated to milliseconds.
func New(typ, runID string, p any) (Event, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return Event{}, err
	}
	return Event{V: Version, TS: time.Now().UTC().Truncate(time.Millisecond), Type: typ, RunID: runID, Payload: raw}, nil
}

// Limited is why the mock's provider account refused an attempt: limit is
// the bucket that refused it (requests, input-tokens, output-tokens: a
// 429) or concurrency (an overloaded answer: 529 or 503); for a bucket,
// the retry-after sent (whole seconds, rounded up) and the wait it stands
// for, in policy milliseconds.
type Limited struct {
	Limit      string `json:"limit"`
	RetryAfter string `json:"retryAfter,omitempty"`
	WaitMs     int64  `json:"waitMs,omitempty"`
}

// OutageDraw is what an attempt drew from a scenario's outage: the phase
// of the moment it arrived (1-based; 0 past the last phase, where it is
// ok), the mix entry drawn (1-based; 0 past the last phase) and that moment,
// in policy milliseconds since the outage began (the first attempt's
// arrival).
type OutageDraw struct {
	Phase int   `json:"phase"`
	Entry int   `json:"entry"`
	AtMs  int64 `json:"atMs"`
}
