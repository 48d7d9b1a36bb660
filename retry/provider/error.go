package provider

import (
	"fmt"
	"net/http"
	"time"
)

// Error kinds. Kind says where an attempt failed; the retry package's
// classifier turns a Kind plus the other fields into a failure type.
type Kind string

const (
	KindHTTP       Kind = "http"       // non-2xx response; Status, body fields and headers are set
	KindSSEError   Kind = "sse_error"  // an error in the stream: SSE `error` event, error chunk, response.failed
	KindIncomplete Kind = "incomplete" // the stream ended early, without stop_reason / finish_reason / response.completed
	KindParse      Kind = "parse"      // malformed JSON or a protocol violation in the stream
	KindTimeout    Kind = "timeout"    // the per-attempt timeout or a network timeout fired
	KindRefused    Kind = "refused"    // connection refused
	KindReset      Kind = "reset"      // connection reset by peer
	KindEOF        Kind = "eof"        // unexpected EOF while reading
	KindNetwork    Kind = "network"    // any other transport error (DNS, TLS, ...)
	KindCanceled   Kind = "canceled"   // the caller's context was canceled
)

// Error is the typed error every provider client returns for a failed attempt.
// It carries everything classification needs and never contains an API key.
type Error struct {
	Kind     Kind
	Provider string // "anthropic", "openai", "openai-responses" or "gemini"
	Status   int    // HTTP status of a KindHTTP failure; 0 otherwise (even after a 2xx)

	// From the response body: Anthropic error.type / OpenAI error.type,
	// OpenAI error.code (in a Responses stream: response.error.code of
	// response.failed, or the code of an error event), and the message.
	ErrorType string
	Code      string
	Message   string

	RequestID string
	// RetryAfter is the parsed retry-after-ms / retry-after header;
	// HasRetryAfter is false when absent or unparseable.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// RetryAfterRaw is the retry-after header as sent ("" if absent).
	RetryAfterRaw string
	// ShouldRetry is the x-should-retry header: nil if absent.
	ShouldRetry *bool
	// Streamed reports whether any content had streamed before the failure.
	Streamed bool
	// Text is the text that streamed before the failure (the failed
	// output a retry with error context shows the model), "" if none.
	Text string
	// AttemptTimeout reports a KindTimeout failure caused by Config.Timeout,
	// the attempt's own deadline, rather than by the network (a dial or
	// response-header timeout of the transport). Some clients retry one and
	// not the other.
	AttemptTimeout bool
	// Bytes of response body read before the failure.
	Bytes int64
	// Header holds the response headers (API keys are never in responses).
	Header http.Header
	// Err is the underlying transport error, if any.
	Err error
}

func (e *Error) Error() string {
	switch e.Kind {
	case KindHTTP:
		msg := e.Message
		if msg == "" {
			msg = http.StatusText(e.Status)
		}
		if e.ErrorType != "" {
			return fmt.Sprintf("%s: HTTP %d %s: %s", e.Provider, e.Status, e.ErrorType, msg)
		}
		return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.Status, msg)
	case KindSSEError:
		what := e.ErrorType
		if what == "" {
			what = e.Code // a Responses stream's response.failed has a code only
		}
		return fmt.Sprintf("%s: stream error: %s: %s", e.Provider, what, e.Message)
	default:
		if e.Err != nil {
			return fmt.Sprintf("%s: %s: %s", e.Provider, e.Kind, Redact(e.Err.Error()))
		}
		return fmt.Sprintf("%s: %s: %s", e.Provider, e.Kind, e.Message)
	}
}

func (e *Error) Unwrap() error { return e.Err }
