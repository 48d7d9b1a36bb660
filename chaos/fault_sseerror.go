package chaos

import (
	"fmt"
	"time"

	"github.com/retrylab/retrylab/retry/provider"
)

// sseErrorFault is a 200 event stream that stops after AfterEvents events
// with an SSE `error` event (streamResponse renders it).
type sseErrorFault struct{ baseFault }

func (sseErrorFault) describe(f Fault) string {
	return fmt.Sprintf("sseError %s after %d events", sseErrorType(f), f.SSEError.AfterEvents)
}

func (sseErrorFault) failure(f Fault, pe *provider.Error, _ time.Time) {
	pe.Kind, pe.ErrorType, pe.Message, pe.Streamed = provider.KindSSEError, sseErrorType(f), f.SSEError.Message, true
}

// sseErrorType is the error event's type, overloaded_error unless the
// scenario names another.
func sseErrorType(f Fault) string {
	if f.SSEError.Type == "" {
		return "overloaded_error"
	}
	return f.SSEError.Type
}
