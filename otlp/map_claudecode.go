package otlp

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// claudeCode reads Claude Code's telemetry (code.claude.com/docs
// monitoring-usage), as Claude Code 2.1 really sends it (captured against
// the mock: otlp/testdata/mappings/claudecode-real-*.json).
//
// With tracing on (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1,
// OTEL_TRACES_EXPORTER=otlp) each model call is a claude_code.llm_request
// span whose gen_ai.request.attempt events mark when each HTTP attempt
// began, one event per request sent: the non-streaming re-send after a
// streaming failure and the re-send of a cut stream each have one, though
// the span's own "attempt" attribute counts only its retry loop's. The
// events say nothing of how an attempt failed, so every attempt but the
// last is Retried; the span says how the last one ended (success,
// status_code, error, its status). These are read first.
//
// Otherwise its log events: one per model call, api_request when it
// succeeded (no attempt count) or api_error when it failed (error,
// status_code: a number as a string, or "undefined" without a response,
// duration_ms, attempt: the attempts it took). Older versions are
// documented to log an api_error per failed attempt; both shapes are read.
type claudeCode struct{}

var _ Mapping = claudeCode{}

func (claudeCode) Name() string { return "claude-code" }

func (c claudeCode) Map(t Telemetry) ([]Request, int) {
	if reqs, used := c.fromSpans(t); len(reqs) > 0 {
		return reqs, used
	}
	return c.fromLogs(t)
}

// fromSpans reads the attempt events of claude_code.llm_request spans.
func (claudeCode) fromSpans(t Telemetry) ([]Request, int) {
	var reqs []Request
	used := 0
	for _, s := range t.spans() {
		if s.Name() != "claude_code.llm_request" {
			continue
		}
		sa := s.Attributes()
		r := Request{Provider: "anthropic", Model: str(sa, "gen_ai.request.model", "model")}
		evs := s.Events()
		for i := 0; i < evs.Len(); i++ {
			if ev := evs.At(i); ev.Name() == "gen_ai.request.attempt" {
				r.Attempts = append(r.Attempts, eventAttempt(ev.Attributes(), ev.Timestamp().AsTime()))
			}
		}
		if len(r.Attempts) == 0 {
			continue
		}
		slices.SortStableFunc(r.Attempts, func(x, y Attempt) int { return x.Start.Compare(y.Start) })
		for k := range r.Attempts[:len(r.Attempts)-1] {
			if a := &r.Attempts[k]; !a.Failed() {
				a.Retried = true
			}
		}
		last := &r.Attempts[len(r.Attempts)-1]
		if end := s.EndTimestamp().AsTime(); last.End.Equal(last.Start) && end.After(last.End) {
			last.End = end
		}
		if last.Status == 0 && !last.Failed() {
			spanOutcome(last, s)
		}
		used++
		reqs = append(reqs, r)
	}
	return reqs, used
}

// eventAttempt reads one gen_ai.request.attempt event: the moment it
// began, or (a shape documented for older versions) the moment it ended
// with its duration, status and error.
func eventAttempt(a pcommon.Map, ts time.Time) Attempt {
	at := Attempt{N: nth(a, "attempt", "gen_ai.request.attempt"), Start: ts, End: ts,
		Status:    status(a, "status_code", "http.response.status_code"),
		ErrorType: str(a, "error.type"), Error: str(a, "error", "error.message")}
	if d, ok := num(a, "duration_ms"); ok && d > 0 {
		at.Start = ts.Add(-ms(d))
	}
	return at
}

// spanOutcome sets how the last attempt of an llm_request span ended, from
// the span: its status_code and error, its success flag, its status.
func spanOutcome(last *Attempt, s span) {
	sa := s.Attributes()
	last.Status = status(sa, "status_code", "http.response.status_code")
	ok := true
	if v, set := sa.Get("success"); set {
		ok = v.AsString() == "true"
	}
	if s.Status().Code() == ptrace.StatusCodeError {
		ok = false
	}
	if ok {
		return
	}
	last.Error = cmp.Or(str(sa, "error", "error.message"), s.Status().Message(), "failed")
	last.ErrorType = str(sa, "error.type")
}

// fromLogs reads api_request and api_error log events.
func (claudeCode) fromLogs(t Telemetry) ([]Request, int) {
	var ats []Attempt
	var models []string
	for _, r := range t.records() {
		name := strings.TrimPrefix(r.eventName(), "claude_code.")
		if name != "api_request" && name != "api_error" {
			continue
		}
		a := r.Attributes()
		end := r.when()
		d, _ := num(a, "duration_ms")
		at := Attempt{N: nth(a, "attempt"), Start: end.Add(-ms(d)), End: end, Status: status(a, "status_code")}
		if name == "api_error" {
			at.Error = cmp.Or(str(a, "error"), "api_error")
		}
		ats = append(ats, at)
		models = append(models, str(a, "model"))
	}
	idx := make([]int, len(ats))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return ats[i].End.Compare(ats[j].End) })
	sorted, sortedModels := make([]Attempt, len(ats)), make([]string, len(ats))
	for k, i := range idx {
		sorted[k], sortedModels[k] = ats[i], models[i]
	}
	reqs := splitByNumber("anthropic", "", sorted, sortedModels)
	for i := range reqs {
		countLogged(&reqs[i])
	}
	return reqs, len(ats)
}

// countLogged completes a request read from log events: the attempts its
// last event counts but no event of their own reported come before it,
// Retried and Untimed; a request that succeeded without an attempt count
// is Uncounted.
func countLogged(r *Request) {
	n := len(r.Attempts)
	last := r.Attempts[n-1]
	switch {
	case last.N > n+maxUntimed:
		r.Uncounted = "the client's log event counts " + itoa(last.N) + " attempts, more than retrylab fills in without their own events"
	case last.N > n:
		missing := make([]Attempt, last.N-n)
		for k := range missing {
			missing[k] = Attempt{Start: last.Start, End: last.Start, Retried: true, Untimed: true}
		}
		r.Attempts = slices.Insert(r.Attempts, 0, missing...)
		for k := range r.Attempts {
			r.Attempts[k].N = k + 1
		}
	case last.N == 0 && !last.Failed() && n == 1:
		r.Uncounted = "Claude Code's api_request log event gives no attempt count; its traces do (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1, OTEL_TRACES_EXPORTER=otlp)"
	}
}

// maxUntimed bounds the attempts countLogged fills in for one request: a
// count is the client's word, and hostile.
const maxUntimed = 64
