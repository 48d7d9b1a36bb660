package chaos

import (
	"fmt"
	"net/http"
	"time"

	"github.com/retrylab/retrylab/retry/provider"
)

// statusFault is an HTTP error response: the status, the provider's error
// body, Retry-After and any headers the scenario gives.
type statusFault struct{ baseFault }

func (statusFault) describe(f Fault) string {
	s := fmt.Sprint(f.Status)
	if f.RetryAfter != nil {
		s += " retry-after=" + *f.RetryAfter
	}
	if f.RetryAfterDate > 0 && f.RetryAfter == nil {
		s += " retry-after=date+" + f.RetryAfterDate.D().String()
	}
	if f.ErrorType != "" {
		s += " " + f.ErrorType
	}
	return s
}

func (statusFault) serve(s *serving) { s.answer(errorResponse(s.p), nil) }

// failure reads the headers the mock sent the way the SDKs read them:
// retry-after as written, then the scenario's own headers (retry-after-ms
// among them), and x-should-retry.
func (statusFault) failure(f Fault, pe *provider.Error, ended time.Time) {
	pe.Kind, pe.Status, pe.ErrorType, pe.Message = provider.KindHTTP, f.Status, f.ErrorType, f.Message
	h := retryAfterHeaders(f)
	if d, raw, ok := provider.ParseRetryAfter(h, ended); ok || raw != "" {
		pe.RetryAfterRaw = raw
		pe.RetryAfter, pe.HasRetryAfter = d, ok
	}
	if v := h.Get("X-Should-Retry"); v != "" {
		b := v == "true"
		pe.ShouldRetry = &b
	}
}

// retryAfterDate is the Retry-After of a retryAfterDate fault for an
// attempt that arrived at arrived: the HTTP date d later, rounded up to
// the whole second (the format has no finer unit), so the date is never
// less than d ahead of the arrival.
func retryAfterDate(arrived time.Time, d time.Duration) string {
	t := arrived.Add(d)
	if r := t.Truncate(time.Second); !r.Equal(t) {
		t = r.Add(time.Second)
	}
	return t.UTC().Format(http.TimeFormat)
}

// retryAfterHeaders are the headers of a status fault's response that carry
// Retry-After: retry-after as written, then the scenario's own headers
// (retry-after-ms among them).
func retryAfterHeaders(f Fault) http.Header {
	h := http.Header{}
	if f.RetryAfter != nil {
		h.Set("Retry-After", *f.RetryAfter)
	}
	for k, v := range f.Headers {
		h.Set(k, v)
	}
	return h
}
