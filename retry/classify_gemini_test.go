package retry

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
)

// TestClassifyGemini covers a Gemini API failure through the classifier:
// the HTTP status with its google.rpc.Code name, quota messages, an error
// frame's status, and RetryInfo's retryDelay as the wait.
func TestClassifyGemini(t *testing.T) {
	t.Parallel()
	httpErr := func(status int, name, msg string) *provider.Error {
		return &provider.Error{Kind: provider.KindHTTP, Provider: provider.GeminiProvider, Status: status, ErrorType: name, Message: msg}
	}
	frame := func(code, name, msg string) *provider.Error {
		return &provider.Error{Kind: provider.KindSSEError, Provider: provider.GeminiProvider, Code: code, ErrorType: name, Message: msg, Streamed: true}
	}
	quota := "You exceeded your current quota, please check your plan and billing details."
	for _, tt := range []struct {
		name     string
		err      *provider.Error
		typ      FailureType
		class    Class
		streamed bool
	}{
		{"HTTP 429 RESOURCE_EXHAUSTED", httpErr(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted. Please try again later."), RateLimit, Retryable, false},
		{"HTTP 429 that says quota", httpErr(429, "RESOURCE_EXHAUSTED", quota), QuotaExhausted, NonRetryable, false},
		{"HTTP 503 UNAVAILABLE", httpErr(503, "UNAVAILABLE", "The model is overloaded."), Overloaded, Retryable, false},
		{"HTTP 500 INTERNAL", httpErr(500, "INTERNAL", "An internal error has occurred."), ServerError, Retryable, false},
		{"HTTP 504 DEADLINE_EXCEEDED", httpErr(504, "DEADLINE_EXCEEDED", "Deadline expired."), Timeout, Retryable, false},
		{"HTTP 400 INVALID_ARGUMENT", httpErr(400, "INVALID_ARGUMENT", "Request contains an invalid argument."), InvalidRequest, NonRetryable, false},
		{"HTTP 401 UNAUTHENTICATED", httpErr(401, "UNAUTHENTICATED", "API key not valid."), AuthInvalid, NonRetryable, false},
		{"HTTP 404 NOT_FOUND", httpErr(404, "NOT_FOUND", "models/x is not found"), ModelNotFound, NonRetryable, false},
		{"frame UNAVAILABLE", frame("503", "UNAVAILABLE", "The model is overloaded."), Overloaded, Retryable, true},
		{"frame RESOURCE_EXHAUSTED", frame("429", "RESOURCE_EXHAUSTED", "slow down"), RateLimit, Retryable, true},
		{"frame RESOURCE_EXHAUSTED that says quota", frame("429", "RESOURCE_EXHAUSTED", quota), QuotaExhausted, NonRetryable, true},
		{"frame INTERNAL", frame("500", "INTERNAL", "oops"), ServerError, Retryable, true},
		{"frame DEADLINE_EXCEEDED", frame("504", "DEADLINE_EXCEEDED", "late"), Timeout, Retryable, true},
		{"frame INVALID_ARGUMENT", frame("400", "INVALID_ARGUMENT", "bad"), StreamParse, NonRetryable, true},
		{"frame PERMISSION_DENIED", frame("403", "PERMISSION_DENIED", "no"), PermissionDenied, NonRetryable, true},
		{"frame unknown status", frame("418", "TEAPOT", "?"), Unknown, Conditional, true},
	} {
		c := Classify(tt.err)
		want := []any{tt.typ, tt.class.String(), tt.streamed}
		if diff := cmp.Diff(want, []any{c.Type, c.Class.String(), c.Streamed}); diff != "" {
			t.Errorf("%s: Classify mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
	// RetryInfo's retryDelay reaches the classification as the wait.
	e := httpErr(429, "RESOURCE_EXHAUSTED", "x")
	e.RetryAfter, e.HasRetryAfter = 1500*time.Millisecond, true
	if c := Classify(e); !c.HasRetryAfter || c.RetryAfter != 1500*time.Millisecond {
		t.Errorf("retryDelay 1.5s: classification has %v %v", c.RetryAfter, c.HasRetryAfter)
	}
}
