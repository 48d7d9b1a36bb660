package otlp

import (
	"slices"
	"strings"
)

// claudeCode reads Claude Code's telemetry (code.claude.com/docs monitoring-usage).
// With tracing on, each model call is a claude_code.llm_request span (model,
// attempt: the attempts it took) with a gen_ai.request.attempt span event
// per attempt; these are read first. Otherwise its log events: an
// api_request per successful call (model, duration_ms) and an api_error per
// failed attempt (model, error, status_code: a number as a string, or
// "undefined" without a response, duration_ms, attempt).
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
			ev := evs.At(i)
			if ev.Name() != "gen_ai.request.attempt" {
				continue
			}
			a := ev.Attributes()
			end := ev.Timestamp().AsTime()
			d, _ := num(a, "duration_ms")
			r.Attempts = append(r.Attempts, Attempt{N: nth(a, "attempt", "gen_ai.request.attempt"),
				Start: end.Add(-ms(d)), End: end,
				Status:    status(a, "status_code", "http.response.status_code"),
				ErrorType: str(a, "error.type"), Error: str(a, "error", "error.message")})
		}
		if len(r.Attempts) == 0 {
			continue
		}
		slices.SortStableFunc(r.Attempts, func(x, y Attempt) int { return x.End.Compare(y.End) })
		// The span's own outcome speaks for its last attempt when the
		// event said nothing of it.
		last := &r.Attempts[len(r.Attempts)-1]
		if last.Status == 0 && !last.Failed() {
			last.Status = status(sa, "status_code", "http.response.status_code")
		}
		used++
		reqs = append(reqs, r)
	}
	return reqs, used
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
			at.Error = str(a, "error")
			if at.Error == "" {
				at.Error = "api_error"
			}
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
	return splitByNumber("anthropic", "", sorted, sortedModels), len(ats)
}
