// Package trace defines retrylab's JSONL trace format (v1), writes it safely
// from many goroutines and processes, reads it back as a stream, and analyses
// run directories.
//
// Every line of a trace is one JSON object:
//
//	{"v":1,"ts":"2026-11-21T10:00:00.123Z","type":"RetryAttempt","runId":"r-7f3a","payload":{...}}
//
// type and payload are required; ts (RFC 3339, UTC) and runId are written by
// retrylab and optional for readers. Unknown types are counted by readers,
// never fatal. The package imports nothing else of retrylab.
package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
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
	b = appendJSONString(b, e.Type)
	if e.RunID != "" {
		b = append(b, `,"runId":`...)
		b = appendJSONString(b, e.RunID)
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

// appendJSONString appends s as a JSON string, escaping what JSON requires
// and nothing more (no HTML escapes, as the Writer's encoder is set up).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(s) // a string always encodes
			return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
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
