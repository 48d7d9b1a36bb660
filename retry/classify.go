package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/retrylab/retrylab/retry/provider"
)

// FailureType names what went wrong in one attempt. The names are Plandex's
// taxonomy (seed 001) plus conflict (HTTP 409), stream_parse (forgeflare's
// permanent StreamParse/Json errors), logical_failure (a response the caller
// rejected, seed 004 US-002), canceled and unknown.
type FailureType string

// Failure types.
const (
	RateLimit       FailureType = "rate_limit"
	Overloaded      FailureType = "overloaded"
	ServerError     FailureType = "server_error"
	Timeout         FailureType = "timeout"
	ConnectionError FailureType = "connection_error"
	// NetworkError is a transport failure that waiting does not cure: a DNS
	// name that does not resolve, a TLS handshake or certificate error, an
	// HTTP server behind an https URL, a URL with an unsupported scheme or
	// no host.
	NetworkError        FailureType = "network_error"
	StreamInterrupted   FailureType = "stream_interrupted"
	CacheError          FailureType = "cache_error"
	ProviderUnavailable FailureType = "provider_unavailable"
	AuthInvalid         FailureType = "auth_invalid"
	PermissionDenied    FailureType = "permission_denied"
	ContextTooLong      FailureType = "context_too_long"
	InvalidRequest      FailureType = "invalid_request"
	ContentPolicy       FailureType = "content_policy"
	QuotaExhausted      FailureType = "quota_exhausted"
	ModelNotFound       FailureType = "model_not_found"
	ModelDeprecated     FailureType = "model_deprecated"
	UnsupportedFeature  FailureType = "unsupported_feature"
	AccountSuspended    FailureType = "account_suspended"
	BillingError        FailureType = "billing_error"
	Conflict            FailureType = "conflict"
	StreamParse         FailureType = "stream_parse"
	// LogicalFailure is a response that arrived whole but that the caller
	// rejected (Retrier.Validate): seed 004's "logical failure".
	LogicalFailure FailureType = "logical_failure"
	Canceled       FailureType = "canceled"
	Unknown        FailureType = "unknown"
)

// FailureTypes lists every failure type, in the order above.
var FailureTypes = []FailureType{
	RateLimit, Overloaded, ServerError, Timeout, ConnectionError, NetworkError, StreamInterrupted, CacheError,
	ProviderUnavailable, AuthInvalid, PermissionDenied, ContextTooLong, InvalidRequest, ContentPolicy,
	QuotaExhausted, ModelNotFound, ModelDeprecated, UnsupportedFeature, AccountSuspended, BillingError,
	Conflict, StreamParse, LogicalFailure, Canceled, Unknown,
}

// Class is the category of a failure type (seed 001): whether the same
// request may succeed when repeated.
type Class int

// Classes.
const (
	Retryable Class = iota
	NonRetryable
	Conditional
)

func (c Class) String() string {
	switch c {
	case Retryable:
		return "retryable"
	case NonRetryable:
		return "non-retryable"
	case Conditional:
		return "conditional"
	}
	return "unknown"
}

// ClassOf returns the class seed 001 gives ft. provider_unavailable is listed
// both as retryable and as conditional there; it is retryable here (a
// configured provider fallback is tried by the Retrier anyway). conflict and
// unknown are conditional: the SDKs retry 409, Plandex does not; forgeflare
// retries unknown stream errors, the epic does not.
func ClassOf(ft FailureType) Class {
	switch ft {
	case RateLimit, Overloaded, ServerError, Timeout, ConnectionError, StreamInterrupted, CacheError, ProviderUnavailable,
		LogicalFailure:
		return Retryable
	case BillingError, Conflict, Unknown, NetworkError:
		return Conditional
	}
	return NonRetryable
}

// Classification is what Classify learned from one failed attempt.
type Classification struct {
	Type          FailureType
	Class         Class
	Status        int // HTTP status, 0 if none
	Message       string
	RequestID     string
	RetryAfter    time.Duration
	HasRetryAfter bool
	// RetryAfterRaw is the retry-after header as sent ("" if absent).
	RetryAfterRaw string
	// RetryAfterMsRaw is the retry-after-ms header as sent ("" if absent or
	// unknown), so that a policy can apply its own header rules.
	RetryAfterMsRaw string
	// MessageRetryAfter is the wait the error message asks for in words
	// ("Please try again in 1.5s", provider.ParseTryAgain), from an HTTP
	// error body or an in-stream error; HasMessageRetryAfter says whether
	// it had one. A policy uses it only with RetryAfter.Message, and only
	// when no header gave a Retry-After.
	MessageRetryAfter    time.Duration
	HasMessageRetryAfter bool
	// ShouldRetry is the x-should-retry header; nil if absent.
	ShouldRetry *bool
	// ClientTimeout reports a timeout caused by the provider client's own
	// per-attempt deadline (provider.Config.Timeout: a scenario's
	// client.timeout, an SDK's request timeout), not by the network.
	ClientTimeout bool
	// Streamed reports a stream-level failure: the response had started
	// (an SSE error event, a stream without stop_reason, malformed stream
	// data, or a transport error after content had streamed).
	Streamed bool
}

// Classify maps an error of one attempt to a failure type and class. It reads
// a *provider.Error (via errors.As), context errors, net errors and syscall
// errors; anything else is unknown. A nil error classifies as unknown.
//
// A body error type or code billing_error (Anthropic's 402) or
// billing_not_active (OpenAI's, sent with a 429) is billing_error, whatever
// the status. A 400 (or another unlisted 4xx) whose message names the
// prompt cache (cache_control, prompt_cache_*) is cache_error; see
// isCacheError for the bodies.
//
// HTTP statuses: 400 invalid_request (context_too_long when the message or
// code says the context/prompt is too long, content_policy when it names a
// content policy or filter), 401 auth_invalid, 402 quota_exhausted, 403
// permission_denied (account_suspended when the message says suspended or
// disabled), 404 model_not_found (model_deprecated when the message says
// deprecated), 408 timeout, 409 conflict, 410 model_deprecated, 413
// context_too_long, 429 rate_limit (quota_exhausted when the message or code
// says quota or billing), 500 server_error, 501 unsupported_feature, 502
// provider_unavailable, 503 and 529 overloaded, 504 timeout, other 5xx
// server_error, other 4xx invalid_request, any other status (1xx, 3xx such
// as 304) unknown.
//
// SSE error events are classified by error.type (seed 000): overloaded_error
// → overloaded, rate_limit_error → rate_limit, api_error → server_error,
// invalid_request_error → stream_parse (permanent), authentication_error →
// auth_invalid, permission_error → permission_denied, not_found_error →
// model_not_found, request_too_large → context_too_long, billing_error →
// billing_error; any other or absent
// type → unknown (which forgeflare retries). An in-stream error's code
// (OpenAI: a Responses stream's response.failed, an error event, a chat
// completions error chunk) comes first when it is known: rate_limit_exceeded
// → rate_limit (quota_exhausted when the message says quota),
// server_error → server_error, server_is_overloaded and slow_down →
// overloaded, insufficient_quota → quota_exhausted, billing_not_active →
// billing_error, context_length_exceeded → context_too_long,
// invalid_api_key → auth_invalid, model_not_found → model_not_found,
// vector_store_timeout → timeout, invalid_prompt and the image codes →
// stream_parse; a code that is an Anthropic type (the mock writes a fault's
// type there) is read as one. A Gemini stream's error.status is read by
// googleStatuses (RESOURCE_EXHAUSTED → rate_limit, UNAVAILABLE →
// overloaded, INTERNAL → server_error, DEADLINE_EXCEEDED → timeout, ...).
//
// The wait a message asks for in words ("Please try again in 1.5s") is
// MessageRetryAfter, read from HTTP error bodies and in-stream errors; a
// policy uses it only with RetryAfter.Message.
func Classify(err error) Classification {
	if err == nil {
		return Classification{Type: Unknown, Class: ClassOf(Unknown)}
	}
	var le *LogicalError
	if errors.As(err, &le) {
		return Classification{Type: LogicalFailure, Class: ClassOf(LogicalFailure), Message: provider.Redact(le.Err.Error())}
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		c := classifyProvider(pe)
		c.Class = ClassOf(c.Type)
		return c
	}
	c := Classification{Message: provider.Redact(err.Error())}
	c.Type = classifyPlain(err)
	c.Class = ClassOf(c.Type)
	return c
}

// permanentNetwork reports whether err is a DNS resolution failure (not a
// DNS timeout), a TLS handshake or certificate error, an HTTP server behind
// an https URL, or a URL the client cannot send to (unsupported scheme, no
// host, unparseable): seed 000 calls these permanent ("DNS resolution failure
// for bad URL, TLS certificate error, etc.": errors that are neither a
// timeout nor a failure to connect).
func permanentNetwork(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return !dns.IsTimeout && !dns.IsTemporary
	}
	if errors.Is(err, http.ErrSchemeMismatch) {
		return true
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Op == "parse" {
		return true
	}
	// net/http returns these as plain errors, without a type to match.
	if msg := err.Error(); strings.Contains(msg, "unsupported protocol scheme") || strings.Contains(msg, "no Host in request URL") {
		return true
	}
	var (
		rh   tls.RecordHeaderError
		cv   *tls.CertificateVerificationError
		ua   x509.UnknownAuthorityError
		hn   x509.HostnameError
		ci   x509.CertificateInvalidError
		alrt tls.AlertError
	)
	return errors.As(err, &rh) || errors.As(err, &cv) || errors.As(err, &ua) ||
		errors.As(err, &hn) || errors.As(err, &ci) || errors.As(err, &alrt)
}

func classifyPlain(err error) FailureType {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return ConnectionError
	case errors.Is(err, syscall.ETIMEDOUT):
		return Timeout
	case errors.As(err, &ne) && ne.Timeout():
		return Timeout
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ConnectionError
	case permanentNetwork(err):
		return NetworkError
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return ConnectionError
	}
	return Unknown
}

func classifyProvider(pe *provider.Error) Classification {
	c := Classification{
		Status:        pe.Status,
		Message:       pe.Message,
		RequestID:     pe.RequestID,
		RetryAfter:    pe.RetryAfter,
		HasRetryAfter: pe.HasRetryAfter,
		RetryAfterRaw: pe.RetryAfterRaw,
		ShouldRetry:   pe.ShouldRetry,
	}
	if pe.Header != nil {
		c.RetryAfterMsRaw = pe.Header.Get("Retry-After-Ms")
	}
	if c.Message == "" {
		c.Message = pe.Error()
	}
	c.Message = provider.Redact(c.Message)
	if pe.Kind == provider.KindHTTP || pe.Kind == provider.KindSSEError {
		c.MessageRetryAfter, c.HasMessageRetryAfter = provider.ParseTryAgain(pe.Message)
	}
	switch pe.Kind {
	case provider.KindHTTP:
		c.Type = classifyHTTP(pe.Status, pe.ErrorType, pe.Code, pe.Message)
	case provider.KindSSEError:
		c.Streamed = true
		c.Type = classifySSE(pe.ErrorType, pe.Code, pe.Message)
	case provider.KindIncomplete:
		c.Streamed = true
		c.Type = StreamInterrupted
	case provider.KindParse:
		c.Streamed = true
		c.Type = StreamParse
	case provider.KindTimeout:
		c.Streamed = pe.Streamed
		c.Type = Timeout
		c.ClientTimeout = pe.AttemptTimeout
	case provider.KindRefused:
		c.Type = ConnectionError
	case provider.KindReset, provider.KindEOF:
		c.Streamed = pe.Streamed
		if pe.Streamed {
			c.Type = StreamInterrupted
		} else {
			c.Type = ConnectionError
		}
	case provider.KindNetwork:
		c.Streamed = pe.Streamed
		c.Type = ConnectionError
		if pe.Err != nil {
			if ft := classifyPlain(pe.Err); ft == Timeout || ft == NetworkError {
				c.Type = ft
			}
		}
	case provider.KindCanceled:
		c.Type = Canceled
	default:
		c.Type = Unknown
		if pe.Err != nil {
			c.Type = classifyPlain(pe.Err)
		}
	}
	return c
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func isContextTooLong(text string) bool {
	return containsAny(text, "context_length", "context length", "context window", "maximum context",
		"prompt is too long", "too many tokens", "tokens exceed", "request_too_large", "input is too long",
		// Anthropic: "input length and `max_tokens` exceed context limit: X + Y > Z";
		// Gemini: "The input token count (N) exceeds the maximum number of tokens allowed (M)."
		"exceed context limit", "maximum number of tokens allowed")
}

// isCacheError reports a provider's prompt-cache error. The bodies it was
// written from, all 400 invalid_request_error:
//
//	Anthropic "A maximum of 4 blocks with cache_control may be provided. Found 5."
//	Anthropic "messages.38.content.4.text: cache_control cannot be set for empty text blocks"
//	Anthropic "messages.0.content.4.cache_control.ttl: a ttl='1h' cache_control block must
//	          not come after a ttl='5m' cache_control block. ..."
//	OpenAI    "prompt_cache_retention is not supported on this model"
//	          (param prompt_cache_retention, code invalid_parameter)
//
// Seed 001's remedy is to retry without the cache parameters; the retry's
// Attempt.Previous says so to the caller.
func isCacheError(text string) bool {
	return containsAny(text, "cache_control", "prompt_cache")
}

// isBilling reports a billing error by the body's error type or code,
// whatever the status: Anthropic's billing_error (402 in its list of error
// types; reported with a 403 too: "an issue with your billing or payment
// information") and OpenAI's billing_not_active (sent with a 429: "Your
// account is not active, please check your billing details on our
// website."). A payment may go through, so seed 001 calls it conditional.
func isBilling(errType, code string) bool {
	return errType == "billing_error" || errType == "billing_not_active" || code == "billing_not_active"
}

func isQuota(text string) bool {
	return containsAny(text, "quota", "insufficient_quota", "billing", "credit balance", "out of credits")
}

// classifyHTTP maps a non-2xx response to a failure type.
func classifyHTTP(status int, errType, code, msg string) FailureType {
	text := strings.ToLower(errType + " " + code + " " + msg)
	if status >= 400 && isBilling(errType, code) {
		return BillingError
	}
	switch status {
	case 400:
		return classify400(text)
	case 401:
		return AuthInvalid
	case 402:
		return QuotaExhausted
	case 403:
		if containsAny(text, "suspended", "disabled", "deactivated", "banned") {
			return AccountSuspended
		}
		return PermissionDenied
	case 404:
		if containsAny(text, "deprecated", "decommissioned", "retired") {
			return ModelDeprecated
		}
		return ModelNotFound
	case 408:
		return Timeout
	case 409:
		return Conflict
	case 410:
		return ModelDeprecated
	case 413:
		return ContextTooLong
	case 429:
		if isQuota(text) {
			return QuotaExhausted
		}
		return RateLimit
	case 500:
		return ServerError
	case 501:
		return UnsupportedFeature
	case 502:
		return ProviderUnavailable
	case 503, 529:
		return Overloaded
	case 504:
		return Timeout
	}
	switch {
	case status >= 500:
		if strings.Contains(text, "overloaded") {
			return Overloaded
		}
		return ServerError
	case status >= 400:
		if isContextTooLong(text) {
			return ContextTooLong
		}
		if isCacheError(text) {
			return CacheError
		}
		return InvalidRequest
	}
	return Unknown
}

// classify400 maps a 400 by its body's text (error type, code, message).
func classify400(text string) FailureType {
	switch {
	case isCacheError(text):
		return CacheError
	case isContextTooLong(text):
		return ContextTooLong
	case containsAny(text, "content policy", "content_policy", "content_filter", "content filter", "safety system"):
		return ContentPolicy
	case isQuota(text):
		return QuotaExhausted
	}
	return InvalidRequest
}

// classifySSE maps an in-stream error: its error code, else an SSE error
// event's error.type (never the top-level type), each read as an
// Anthropic error type or an OpenAI error code (a Responses stream's
// response.failed carries only a code). A rate limit whose message says
// quota or billing is quota_exhausted, as a 429's is.
func classifySSE(errType, code, msg string) FailureType {
	ft := Unknown
	for _, name := range []string{code, errType} { // the code is the more specific
		if ft = streamErrorType(name); ft != Unknown {
			break
		}
	}
	if ft == RateLimit && isQuota(strings.ToLower(msg)) {
		return QuotaExhausted
	}
	return ft
}

// openaiCodes maps the OpenAI error codes an in-stream error carries
// (response.failed's response.error.code, an error event's code, a chat
// completions error chunk's code) to failure types; Codex CLI reads
// server_is_overloaded and slow_down as overloads.
var openaiCodes = map[string]FailureType{
	"rate_limit_exceeded":            RateLimit,
	"server_error":                   ServerError,
	"server_is_overloaded":           Overloaded,
	"slow_down":                      Overloaded,
	"insufficient_quota":             QuotaExhausted,
	"billing_not_active":             BillingError,
	"context_length_exceeded":        ContextTooLong,
	"invalid_prompt":                 StreamParse,
	"invalid_api_key":                AuthInvalid,
	"model_not_found":                ModelNotFound,
	"vector_store_timeout":           Timeout,
	"image_content_policy_violation": StreamParse,
}

// googleStatuses maps the google.rpc.Code names a Gemini stream's error
// frame carries as error.status to failure types: RESOURCE_EXHAUSTED is a
// rate limit (quota_exhausted when the message says quota), UNAVAILABLE an
// overload, a request the server refuses (INVALID_ARGUMENT,
// FAILED_PRECONDITION, OUT_OF_RANGE) stream_parse, as an Anthropic
// invalid_request_error event is.
var googleStatuses = map[string]FailureType{
	"RESOURCE_EXHAUSTED":  RateLimit,
	"UNAVAILABLE":         Overloaded,
	"INTERNAL":            ServerError,
	"UNKNOWN":             ServerError,
	"DATA_LOSS":           ServerError,
	"DEADLINE_EXCEEDED":   Timeout,
	"INVALID_ARGUMENT":    StreamParse,
	"FAILED_PRECONDITION": StreamParse,
	"OUT_OF_RANGE":        StreamParse,
	"UNAUTHENTICATED":     AuthInvalid,
	"PERMISSION_DENIED":   PermissionDenied,
	"NOT_FOUND":           ModelNotFound,
}

// streamErrorType maps one name of an in-stream error: an Anthropic error
// type, an OpenAI error code, or an image error code of response.failed
// (invalid_image, image_too_large, ...). A request the server refuses in
// the stream (invalid_prompt, an image error) is stream_parse, the
// permanent stream failure, as Anthropic's invalid_request_error event is.
func streamErrorType(name string) FailureType {
	if ft, ok := openaiCodes[name]; ok {
		return ft
	}
	if ft, ok := googleStatuses[name]; ok {
		return ft
	}
	if strings.Contains(name, "image") {
		return StreamParse
	}
	switch name {
	case "overloaded_error":
		return Overloaded
	case "rate_limit_error":
		return RateLimit
	case "api_error":
		return ServerError
	case "invalid_request_error":
		return StreamParse
	case "authentication_error":
		return AuthInvalid
	case "permission_error":
		return PermissionDenied
	case "not_found_error":
		return ModelNotFound
	case "request_too_large":
		return ContextTooLong
	case "billing_error":
		return BillingError
	}
	return Unknown
}

// streamTypes lists the failure types a stream-level failure can classify
// as (classifyProvider with Streamed set).
var streamTypes = []FailureType{Overloaded, RateLimit, ServerError, StreamParse, AuthInvalid, PermissionDenied,
	ModelNotFound, ContextTooLong, BillingError, Unknown, StreamInterrupted, Timeout, QuotaExhausted}

// statusTypes lists the failure types an HTTP status can classify as.
func statusTypes(status int) []FailureType {
	out := []FailureType{classifyHTTP(status, "", "", "")}
	switch status {
	case 400:
		out = append(out, CacheError, ContextTooLong, ContentPolicy, QuotaExhausted)
	case 403:
		out = append(out, AccountSuspended)
	case 404:
		out = append(out, ModelDeprecated)
	case 429:
		out = append(out, QuotaExhausted)
	}
	if status >= 400 && status < 500 && status != 413 {
		out = append(out, ContextTooLong, CacheError)
	}
	if status >= 400 {
		out = append(out, BillingError)
	}
	if status >= 500 {
		out = append(out, Overloaded)
	}
	return out
}
