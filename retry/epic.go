package retry

import "slices"

// epicNames are seed 004's ErrorType names. In a RetryableErrors list they
// keep seed 004's meaning, which its ErrorClassifier gives by HTTP status
// (see epicClass), even where retrylab has a failure type of the same name
// that means something else (retrylab's timeout includes 408 and 504; its
// server_error is neither 502, 503 nor 504).
var epicNames = []string{"rate_limit", "server_error", "timeout", "context_limit", "content_filter",
	"invalid_request", "auth_error", "unknown"}

// EpicNames returns seed 004's ErrorType names, which a policy's
// RetryableErrors takes with seed 004's meaning (see epicClass).
func EpicNames() []string { return slices.Clone(epicNames) }

// epicClass is the ErrorType seed 004's ErrorClassifier gives c: by status
// for an HTTP error (429 rate_limit; 500, 502, 503, 504 server_error; 400
// context_limit when the message says the context is too long, else
// invalid_request; 401, 403 auth_error; any other status unknown), timeout
// for a client-side timeout, unknown for everything else (connection
// errors, stream failures). The classifier never returns content_filter.
func epicClass(c Classification) string {
	if c.Status != 0 {
		switch c.Status {
		case 429:
			return "rate_limit"
		case 500, 502, 503, 504:
			return "server_error"
		case 400:
			if c.Type == ContextTooLong {
				return "context_limit"
			}
			return "invalid_request"
		case 401, 403:
			return "auth_error"
		}
		return "unknown"
	}
	if c.Type == Timeout {
		return "timeout"
	}
	return "unknown"
}

// listed reports whether p.RetryableErrors names c: its seed 004 ErrorType,
// content_filter for a content_policy failure (retrylab's reading: seed 004
// has the name but no rule that gives it), or, for a name seed 004 does not
// have, its failure type.
func (p *Policy) listed(c Classification) bool {
	if len(p.RetryableErrors) == 0 {
		return false
	}
	class := epicClass(c)
	for _, name := range p.RetryableErrors {
		switch {
		case name == "content_filter":
			if c.Type == ContentPolicy {
				return true
			}
		case slices.Contains(epicNames, name):
			if name == class {
				return true
			}
		case FailureType(name) == c.Type:
			return true
		}
	}
	return false
}

// listTypes lists the failure types a failure that the RetryableErrors name
// matches can have.
func listTypes(name string) []FailureType {
	switch name {
	case "rate_limit": // 429
		return []FailureType{RateLimit, QuotaExhausted}
	case "server_error": // 500, 502, 503, 504 (and 5xx messages saying overloaded)
		return []FailureType{ServerError, ProviderUnavailable, Overloaded, Timeout}
	case "timeout":
		return []FailureType{Timeout}
	case "context_limit":
		return []FailureType{ContextTooLong}
	case "content_filter":
		return []FailureType{ContentPolicy}
	case "invalid_request": // a 400 that is not context_limit
		return []FailureType{InvalidRequest, ContentPolicy, QuotaExhausted}
	case "auth_error": // 401, 403
		return []FailureType{AuthInvalid, PermissionDenied, AccountSuspended}
	case "unknown":
		// Any status seed 004 does not name, and any failure without one.
		var out []FailureType
		for _, ft := range FailureTypes {
			if ft != Canceled {
				out = append(out, ft)
			}
		}
		return out
	}
	return []FailureType{FailureType(name)}
}
