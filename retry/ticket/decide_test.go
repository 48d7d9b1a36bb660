package ticket

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/trace"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		category string
		retries  int
		want     Decision
	}{
		{"transient first retry", "transient", 0, Decision{Category: "transient", ShouldRetry: true, MaxRetries: 3, NextDelay: time.Second, AttemptsRemaining: 2}},
		{"transient exponential", "transient", 2, Decision{Category: "transient", ShouldRetry: true, MaxRetries: 3, NextDelay: 4 * time.Second}},
		{"transient exhausted after 3", "transient", 3, Decision{Category: "transient", MaxRetries: 3}},
		{"api_error linear", "api_error", 1, Decision{Category: "api_error", ShouldRetry: true, MaxRetries: 2, NextDelay: 2 * time.Second}},
		{"api_error exhausted", "api_error", 2, Decision{Category: "api_error", MaxRetries: 2}},
		{"code_error single retry, no delay", "code_error", 0, Decision{Category: "code_error", ShouldRetry: true, MaxRetries: 1}},
		{"code_error then on_hold", "code_error", 1, Decision{Category: "code_error", MaxRetries: 1}},
		{"system_error exponential", "system_error", 1, Decision{Category: "system_error", ShouldRetry: true, MaxRetries: 2, NextDelay: 2 * time.Second}},
		{"unknown linear once", "unknown", 0, Decision{Category: "unknown", ShouldRetry: true, MaxRetries: 1, NextDelay: time.Second}},
		{"unrecognised category is unknown", "weird", 0, Decision{Category: "unknown", ShouldRetry: true, MaxRetries: 1, NextDelay: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Decide(tt.category, tt.retries)); diff != "" {
				t.Errorf("Decide mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassifyTicketError(t *testing.T) {
	t.Parallel()
	tests := []struct{ msg, want string }{
		{"429 Too Many Requests: rate limit exceeded", "transient"},
		{"503 Service Unavailable", "transient"},
		{"request timed out after 60s", "transient"},
		{"connect ECONNRESET 10.0.0.1:443", "transient"},
		{"API error: invalid api key", "api_error"},
		{"401 Unauthorized", "api_error"},
		{"SyntaxError: Unexpected token '}'", "code_error"},
		{"TypeError: x is not a function", "code_error"},
		{"ENOENT: no such file or directory, open 'a.js'", "system_error"},
		{"EACCES: permission denied", "system_error"},
		{"fatal: not a git repository", "system_error"},
		{"something odd happened", "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			if got := ClassifyError(tt.msg); got != tt.want {
				t.Errorf("ClassifyTicketError(%q) = %q, want %q", tt.msg, got, tt.want)
			}
		})
	}
}

func TestDecideTicketEmitsRetryDecision(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := trace.NewWriter(&buf, "run")
	DecideError(w, "T-1", "503 Service Unavailable", 1)
	DecideError(w, "T-2", "SyntaxError: bad", 1)
	got := eventsOf[trace.RetryDecision](t, decodeEvents(t, buf.Bytes()), trace.TypeRetryDecision)
	want := []trace.RetryDecision{
		{TicketID: "T-1", Category: "transient", CurrentAttempt: 2, MaxRetries: 3, ShouldRetry: true, NextDelayMs: 2000},
		{TicketID: "T-2", Category: "code_error", CurrentAttempt: 2, MaxRetries: 1, ShouldRetry: false, NextDelayMs: 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RetryDecision mismatch (-want +got):\n%s", diff)
	}
}
