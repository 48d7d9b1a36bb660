package otlp

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// semconv reads the OpenTelemetry semantic conventions: an HTTP client
// span (kind CLIENT, http.request.method or http.response.status_code) per
// attempt, http.request.resend_count numbering the retries, error.type
// naming a failure, under a gen_ai span (gen_ai.operation.name,
// gen_ai.provider.name or the older gen_ai.system, gen_ai.request.model)
// for the logical request. HTTP spans under no gen_ai span count only
// when their URL is a model endpoint, so that a client's other calls are
// not taken for attempts.
type semconv struct{}

var _ Mapping = semconv{}

func (semconv) Name() string { return "semconv" }

// modelPaths are URL fragments of the wire formats' model endpoints.
var modelPaths = []string{"/messages", "/chat/completions", "/responses", ":generateContent", ":streamGenerateContent"}

func (semconv) Map(t Telemetry) ([]Request, int) {
	all := t.spans()
	genai := map[pcommon.SpanID]span{}
	for _, s := range all {
		if _, ok := s.Attributes().Get("gen_ai.operation.name"); ok {
			genai[s.SpanID()] = s
		}
	}
	type key struct {
		trace  pcommon.TraceID
		parent pcommon.SpanID
	}
	groups := map[key]*Request{}
	var order []key
	used := 0
	for _, s := range all {
		a := s.Attributes()
		_, method := a.Get("http.request.method")
		_, st := a.Get("http.response.status_code")
		if s.Kind() != ptrace.SpanKindClient || !(method || st) {
			continue
		}
		parent, underGenAI := genai[s.ParentSpanID()]
		url := str(a, "url.full", "url.path", "http.url", "http.target")
		if !underGenAI && !isModelURL(url) {
			continue
		}
		k := key{s.TraceID(), s.ParentSpanID()}
		r := groups[k]
		if r == nil {
			r = &Request{}
			if underGenAI {
				pa := parent.Attributes()
				r.Provider = str(pa, "gen_ai.provider.name", "gen_ai.system")
				r.Model = str(pa, "gen_ai.request.model", "gen_ai.response.model")
				if parent.Status().Code() == ptrace.StatusCodeError {
					r.Error = parent.Status().Message()
				}
			}
			groups[k] = r
			order = append(order, k)
		}
		r.Attempts = append(r.Attempts, httpAttempt(s))
		used++
	}
	var reqs []Request
	for _, k := range order {
		r := *groups[k]
		slices.SortStableFunc(r.Attempts, func(x, y Attempt) int { return x.Start.Compare(y.Start) })
		reqs = append(reqs, r)
	}
	return reqs, used
}

// httpAttempt reads one HTTP client span as an attempt: its bounds,
// http.response.status_code, error.type, its status message when it ended
// in error, and http.request.resend_count as its number (1 without).
func httpAttempt(s span) Attempt {
	a := s.Attributes()
	at := Attempt{Start: s.StartTimestamp().AsTime(), End: s.EndTimestamp().AsTime(),
		Status: status(a, "http.response.status_code"), ErrorType: str(a, "error.type")}
	if n, ok := num(a, "http.request.resend_count"); ok && n >= 0 && n < 1<<20 {
		at.N = int(n) + 1
	} else {
		at.N = 1
	}
	if s.Status().Code() == ptrace.StatusCodeError {
		at.Error = s.Status().Message()
		if at.ErrorType == "" && at.Error == "" {
			at.ErrorType = "error"
		}
	}
	return at
}

func isModelURL(u string) bool {
	for _, p := range modelPaths {
		if strings.Contains(u, p) {
			return true
		}
	}
	return false
}
