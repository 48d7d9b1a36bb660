package fault

import (
	"fmt"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/retry/provider"
)

// SSEError is a 200 event stream that stops after AfterEvents events with
// an SSE `error` event (the wire format renders it), then ends. A request
// that did not ask for a stream gets what the provider sends it for that
// error: the type's HTTP status and JSON error body (wire.NonStreamedError).
type SSEError struct {
	AfterEvents int    `yaml:"afterEvents"`
	Type        string `yaml:"type"`    // error.type, e.g. overloaded_error
	Message     string `yaml:"message"` // error.message
}

func init() { Register(Def{Kind: SSEError{}, Order: 20, Decode: decodeSSEError}) }

func decodeSSEError(m *Mapping) Kind {
	var s *SSEError
	m.Decode("sseError", &s)
	if s == nil {
		return nil
	}
	return *s
}

func (SSEError) Name() string { return "sseError" }

func (s SSEError) Describe() string {
	return fmt.Sprintf("sseError %s after %d events", s.errorType(), s.AfterEvents)
}

func (s SSEError) Wire(f *wire.Fault) {
	f.SSEError = &wire.SSEError{AfterEvents: s.AfterEvents, Type: s.Type, Message: s.Message}
}

// Failure is the in-stream error a client meets; a request that did not
// ask for a stream meets the HTTP error the provider sends instead
// (wire.NonStreamedError), which the mock's status says.
func (s SSEError) Failure(pe *provider.Error, m Met) {
	if m.Status >= 400 {
		pe.Kind, pe.Status, pe.ErrorType, pe.Message = provider.KindHTTP, m.Status, s.errorType(), s.Message
		return
	}
	pe.Kind, pe.ErrorType, pe.Message, pe.Streamed = provider.KindSSEError, s.errorType(), s.Message, true
}

// errorType is the error event's type, overloaded_error unless the
// scenario names another.
func (s SSEError) errorType() string {
	if s.Type == "" {
		return "overloaded_error"
	}
	return s.Type
}
