package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
)

func h(status int, errType, code, msg string) *provider.Error {
	return &provider.Error{Kind: provider.KindHTTP, Provider: "openai", Status: status, ErrorType: errType, Code: code, Message: msg}
}

func k(kind provider.Kind, streamed bool) *provider.Error {
	return &provider.Error{Kind: kind, Provider: "anthropic", Streamed: streamed, Message: string(kind)}
}

// TestClassify has one row per row of the seeds' tables.
func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		err   error
		typ   FailureType
		class Class
	}{
		// Seed 001, retryable failures.
		{"001 rate_limit 429", h(429, "rate_limit_error", "", "Rate limit reached"), RateLimit, Retryable},
		{"001 overloaded 503", h(503, "", "", "Service Unavailable"), Overloaded, Retryable},
		{"001 overloaded 529", h(529, "overloaded_error", "", "Overloaded"), Overloaded, Retryable},
		{"001 server_error 5xx", h(500, "api_error", "", "Internal"), ServerError, Retryable},
		{"001 timeout 504", h(504, "", "", "Gateway Timeout"), Timeout, Retryable},
		{"001 connection_error", k(provider.KindRefused, false), ConnectionError, Retryable},
		{"001 stream_interrupted", k(provider.KindEOF, true), StreamInterrupted, Retryable},
		{"001 provider_unavailable 502", h(502, "", "", "Bad Gateway"), ProviderUnavailable, Retryable},
		// Seed 001, non-retryable failures.
		{"001 auth_invalid 401", h(401, "authentication_error", "", "invalid x-api-key"), AuthInvalid, NonRetryable},
		{"001 permission_denied 403", h(403, "permission_error", "", "not allowed"), PermissionDenied, NonRetryable},
		{"001 context_too_long 400", h(400, "invalid_request_error", "context_length_exceeded", "This model's maximum context length is 8192 tokens"), ContextTooLong, NonRetryable},
		{"001 context_too_long 413", h(413, "request_too_large", "", "Request exceeds the maximum size"), ContextTooLong, NonRetryable},
		{"001 invalid_request 400", h(400, "invalid_request_error", "", "messages: field required"), InvalidRequest, NonRetryable},
		{"001 content_policy 400", h(400, "invalid_request_error", "content_policy_violation", "rejected by our safety system"), ContentPolicy, NonRetryable},
		{"001 quota_exhausted 429", h(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan"), QuotaExhausted, NonRetryable},
		{"001 quota_exhausted 402", h(402, "", "", "Payment Required"), QuotaExhausted, NonRetryable},
		{"001 model_not_found 404", h(404, "not_found_error", "model_not_found", "model: gpt-5x"), ModelNotFound, NonRetryable},
		{"001 model_deprecated", h(404, "", "model_not_found", "The model gpt-3 has been deprecated"), ModelDeprecated, NonRetryable},
		{"001 unsupported_feature 501", h(501, "", "", "Not Implemented"), UnsupportedFeature, NonRetryable},
		{"001 account_suspended 403", h(403, "permission_error", "", "Your account has been suspended"), AccountSuspended, NonRetryable},
		// Seed 001, conditional failures (billing_error has no status of its own).
		{"001 conflict 409 (SDKs retry it)", h(409, "", "", "Conflict"), Conflict, Conditional},

		// Seed 000, HttpError by status.
		{"000 HttpError 429 transient", h(429, "", "", ""), RateLimit, Retryable},
		{"000 HttpError 503 transient", h(503, "", "", ""), Overloaded, Retryable},
		{"000 HttpError 529 transient", h(529, "", "", ""), Overloaded, Retryable},
		{"000 HttpError unknown >=500 transient", h(599, "", "", ""), ServerError, Retryable},
		{"000 HttpError 400 permanent", h(400, "", "", ""), InvalidRequest, NonRetryable},
		{"000 HttpError 401 permanent", h(401, "", "", ""), AuthInvalid, NonRetryable},
		{"000 HttpError 403 permanent", h(403, "", "", ""), PermissionDenied, NonRetryable},
		{"000 HttpError unknown 4xx permanent", h(418, "", "", ""), InvalidRequest, NonRetryable},
		// Seed 000, StreamTransient / StreamParse / Api / Json.
		{"000 SSE overloaded_error", sseErr("overloaded_error"), Overloaded, Retryable},
		{"000 SSE api_error", sseErr("api_error"), ServerError, Retryable},
		{"000 SSE rate_limit_error", sseErr("rate_limit_error"), RateLimit, Retryable},
		{"000 SSE unknown type defaults to transient", sseErr("mystery_error"), Unknown, Conditional},
		{"000 SSE absent type defaults to transient", sseErr(""), Unknown, Conditional},
		{"000 SSE invalid_request_error is StreamParse", sseErr("invalid_request_error"), StreamParse, NonRetryable},
		{"000 stream ended without stop_reason", k(provider.KindIncomplete, true), StreamInterrupted, Retryable},
		{"000 malformed JSON (Json/StreamParse)", k(provider.KindParse, true), StreamParse, NonRetryable},
		{"000 Api is_timeout", k(provider.KindTimeout, false), Timeout, Retryable},
		{"000 Api is_connect reset", k(provider.KindReset, false), ConnectionError, Retryable},
		{"000 Api is_connect refused", k(provider.KindRefused, false), ConnectionError, Retryable},
		{"000 Api other: DNS resolution failure for bad URL", &provider.Error{Kind: provider.KindNetwork,
			Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "api.example.invalid", IsNotFound: true}}}, NetworkError, Conditional},
		{"000 Api other: TLS certificate error", &provider.Error{Kind: provider.KindNetwork,
			Err: &url.Error{Op: "Post", Err: x509.UnknownAuthorityError{}}}, NetworkError, Conditional},
		{"000 Api other: TLS handshake", fmt.Errorf("post: %w", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), NetworkError, Conditional},
		{"000 Api other: HTTP server on an https URL", &provider.Error{Kind: provider.KindNetwork,
			Err: &url.Error{Op: "Post", URL: "https://127.0.0.1:1/v1/messages", Err: http.ErrSchemeMismatch}}, NetworkError, Conditional},
		{"000 Api other: unsupported URL scheme", &provider.Error{Kind: provider.KindNetwork,
			Err: &url.Error{Op: "Post", URL: "ftp://x/v1/messages", Err: errors.New(`unsupported protocol scheme "ftp"`)}}, NetworkError, Conditional},
		{"000 Api other: no host", &provider.Error{Kind: provider.KindNetwork,
			Err: &url.Error{Op: "Post", URL: "http:///v1/messages", Err: errors.New("http: no Host in request URL")}}, NetworkError, Conditional},
		{"000 Api other: unparseable URL", &provider.Error{Kind: provider.KindNetwork,
			Err: &url.Error{Op: "parse", URL: "http://a b", Err: errors.New("invalid character \" \" in host name")}}, NetworkError, Conditional},
		{"000 HttpError 304 (no 3xx is transient)", h(304, "", "", ""), Unknown, Conditional},
		{"DNS timeout is a timeout", &provider.Error{Kind: provider.KindNetwork,
			Err: &net.DNSError{Err: "i/o timeout", Name: "api.anthropic.com", IsTimeout: true}}, Timeout, Retryable},

		// Seed 003, retriable and non-retriable errors.
		{"003 RateLimitError 429", h(429, "", "", "Too Many Requests"), RateLimit, Retryable},
		{"003 TimeoutError", fmt.Errorf("request: %w", context.DeadlineExceeded), Timeout, Retryable},
		{"003 Server Error 500-599", h(502, "", "", ""), ProviderUnavailable, Retryable},
		{"003 ETIMEDOUT", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ETIMEDOUT)}, Timeout, Retryable},
		{"003 ECONNRESET", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, ConnectionError, Retryable},
		{"003 ECONNREFUSED", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, ConnectionError, Retryable},
		{"003 ConfigError 401", h(401, "", "", ""), AuthInvalid, NonRetryable},
		{"003 ConfigError 403", h(403, "", "", ""), PermissionDenied, NonRetryable},
		{"003 Client Error 400", h(400, "", "", ""), InvalidRequest, NonRetryable},
		{"003 Client Error 404", h(404, "", "", ""), ModelNotFound, NonRetryable},
		{"003 AbortError", context.Canceled, Canceled, NonRetryable},
		{"003 AbortError from the client", k(provider.KindCanceled, false), Canceled, NonRetryable},

		// Seed 004, ErrorClassifier.
		{"004 rate_limit 429", h(429, "", "", ""), RateLimit, Retryable},
		{"004 server_error 500", h(500, "", "", ""), ServerError, Retryable},
		{"004 server_error 502", h(502, "", "", ""), ProviderUnavailable, Retryable},
		{"004 server_error 503", h(503, "", "", ""), Overloaded, Retryable},
		{"004 server_error 504", h(504, "", "", ""), Timeout, Retryable},
		{"004 context_limit 400 context_length", h(400, "", "", "input exceeds context_length"), ContextTooLong, NonRetryable},
		{"004 invalid_request 400", h(400, "", "", "bad"), InvalidRequest, NonRetryable},
		{"004 auth_error 401", h(401, "", "", ""), AuthInvalid, NonRetryable},
		{"004 auth_error 403", h(403, "", "", ""), PermissionDenied, NonRetryable},
		{"004 timeout", k(provider.KindTimeout, false), Timeout, Retryable},
		{"004 unknown", errors.New("boom"), Unknown, Conditional},

		// Others.
		{"408 request timeout", h(408, "", "", ""), Timeout, Retryable},
		{"unexpected EOF before streaming", io.ErrUnexpectedEOF, ConnectionError, Retryable},
		{"wrapped provider error", fmt.Errorf("call: %w", h(429, "", "", "")), RateLimit, Retryable},
		{"nil", nil, Unknown, Conditional},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Classify(tt.err)
			if diff := cmp.Diff([]any{tt.typ, tt.class.String()}, []any{c.Type, c.Class.String()}); diff != "" {
				t.Errorf("Classify(%v) mismatch (-want +got):\n%s", tt.err, diff)
			}
		})
	}
}

func TestClassifyCarriesFields(t *testing.T) {
	t.Parallel()
	e := &provider.Error{Kind: provider.KindHTTP, Status: 429, Message: "slow down sk-abcdefgh1234", RequestID: "req_1",
		RetryAfterRaw: "2", RetryAfter: 2e9, HasRetryAfter: true, ShouldRetry: ptr(true)}
	c := Classify(e)
	want := Classification{Type: RateLimit, Class: Retryable, Status: 429, Message: "slow down sk-***", RequestID: "req_1",
		RetryAfter: 2e9, HasRetryAfter: true, RetryAfterRaw: "2", ShouldRetry: ptr(true)}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Classify mismatch (-want +got):\n%s", diff)
	}
}

func TestClassString(t *testing.T) {
	t.Parallel()
	got := []string{Retryable.String(), NonRetryable.String(), Conditional.String()}
	if diff := cmp.Diff([]string{"retryable", "non-retryable", "conditional"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
