package otlp

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// codex reads Codex CLI's events (codex-rs/otel, SessionTelemetry), as
// Codex 0.171 really exports them with `otel.exporter` (logs) or
// `otel.trace_exporter` (spans) set (docs/agents.md):
//
//   - codex.api_request, one per HTTP try: attempt (Codex's own count,
//     from 0, restarting at every stream reconnect), duration_ms (until
//     the headers or the error), http.response.status_code (absent
//     without a response), error.message ("http 503", "error sending
//     request"), endpoint ("/responses"), model. In logs the record's
//     EventName is the tracing callsite ("event otel/src/...:837"), the
//     name is the event.name attribute, and the record has no timestamp
//     but its observed time; in traces it is a span event.
//   - codex.sse_event (logs only) after a 200: error.message when the
//     stream failed (a transport error, then "stream disconnected before
//     completion: ..."; a response.failed event's JSON, then Codex's
//     summary of it), event.kind response.completed without an error when
//     it completed.
//   - codex.retry (traces only), retry.layer "stream" when Codex re-sends
//     the request after a failed stream, "http" inside its HTTP loop.
//
// Each HTTP try is one attempt, whatever loop retried it; a new logical
// request begins after an attempt that succeeded. A 200 whose stream
// Codex re-sent without saying why (a codex.retry, or in logs no
// completion before the next try) is Retried: it failed, the telemetry
// does not say how. Tries of the model list are not attempts.
type codex struct{}

var _ Mapping = codex{}

func (codex) Name() string { return "codex" }

// codexEvent is one of Codex's events, from a log record or a span event.
type codexEvent struct {
	name  string
	at    time.Time
	attrs pcommon.Map
	item  string // the log record or span it came from, to count what was used
}

// codexTry is one HTTP try and what Codex said of its stream.
type codexTry struct {
	Attempt
	model     string
	completed bool // a response.completed without an error followed
	retried   bool // a stream-layer codex.retry followed
	items     []string
}

func (codex) Map(t Telemetry) ([]Request, int) {
	evs, fromLogs := codexLogEvents(t), true
	if !slices.ContainsFunc(evs, func(e codexEvent) bool { return e.name == "codex.api_request" }) {
		evs, fromLogs = codexSpanEvents(t), false
	}
	slices.SortStableFunc(evs, func(x, y codexEvent) int { return x.at.Compare(y.at) })
	var tries []*codexTry
	for _, e := range evs {
		a := e.attrs
		if e.name == "codex.api_request" {
			if strings.Contains(str(a, "endpoint"), "models") {
				continue
			}
			d, _ := num(a, "duration_ms")
			tries = append(tries, &codexTry{Attempt: Attempt{Start: e.at.Add(-ms(d)), End: e.at,
				Status: status(a, "http.response.status_code"), Error: str(a, "error.message")},
				model: str(a, "model", "slug"), items: []string{e.item}})
			continue
		}
		if len(tries) > 0 {
			tries[len(tries)-1].follow(e)
		}
	}
	return codexRequests(tries, fromLogs), codexUsed(tries)
}

// follow applies an event that came after the try's codex.api_request.
func (c *codexTry) follow(e codexEvent) {
	a := e.attrs
	switch {
	case e.name == "codex.retry":
		if str(a, "retry.layer") == "stream" {
			c.retried = true
			c.items = append(c.items, e.item)
		}
	case e.name != "codex.sse_event" || c.Status < 200 || c.Status > 299 || c.completed:
		// Stream events belong to a try that got its 200.
	case str(a, "error.message") != "":
		msg := str(a, "error.message")
		if code := responseErrorCode(msg); code != "" {
			c.ErrorType = code
		}
		c.Error, c.End = msg, e.at
		c.items = append(c.items, e.item)
	case str(a, "event.kind") == "response.completed" && c.Error == "":
		c.completed, c.End = true, e.at
		c.items = append(c.items, e.item)
	}
}

// codexRequests marks the tries Codex re-sent without saying why as
// Retried, groups them into requests (a new one after a success) and
// numbers the attempts of each from 1. In logs, where Codex logs every
// completion, a 200 without one that is followed by another try was
// retried; in traces only a codex.retry says so.
func codexRequests(tries []*codexTry, fromLogs bool) []Request {
	var reqs []Request
	for i, c := range tries {
		if !c.Failed() && !c.completed && i+1 < len(tries) && (c.retried || fromLogs) {
			c.Retried = true
		}
		if i == 0 || !tries[i-1].Failed() {
			reqs = append(reqs, Request{Provider: "openai-responses", Model: c.model})
		}
		r := &reqs[len(reqs)-1]
		c.N = len(r.Attempts) + 1
		r.Attempts = append(r.Attempts, c.Attempt)
	}
	return reqs
}

// codexUsed counts the log records and spans the tries were read from.
func codexUsed(tries []*codexTry) int {
	seen := map[string]bool{}
	for _, c := range tries {
		for _, it := range c.items {
			seen[it] = true
		}
	}
	return len(seen)
}

// codexName is the event's name: Codex's event.name attribute (the log
// record's EventName is the tracing callsite).
func codexName(a pcommon.Map, fallback string) string {
	if n := str(a, "event.name"); n != "" {
		return n
	}
	return fallback
}

// codexLogEvents lists t's log records as events.
func codexLogEvents(t Telemetry) []codexEvent {
	var evs []codexEvent
	for i, r := range t.records() {
		n := codexName(r.Attributes(), r.eventName())
		if strings.HasPrefix(n, "codex.") {
			evs = append(evs, codexEvent{name: n, at: r.when(), attrs: r.Attributes(), item: "log " + itoa(i)})
		}
	}
	return evs
}

// codexSpanEvents lists the events of t's spans.
func codexSpanEvents(t Telemetry) []codexEvent {
	var evs []codexEvent
	for _, s := range t.spans() {
		id := "span " + s.TraceID().String() + s.SpanID().String()
		for i := 0; i < s.Events().Len(); i++ {
			e := s.Events().At(i)
			n := codexName(e.Attributes(), e.Name())
			if strings.HasPrefix(n, "codex.") {
				evs = append(evs, codexEvent{name: n, at: e.Timestamp().AsTime(), attrs: e.Attributes(), item: id})
			}
		}
	}
	return evs
}

// responseErrorCode is the error code of a Responses API event Codex
// logged as JSON ({"type":"response.failed","response":{"error":{"code":
// "rate_limit_exceeded",...}}}, or an error event's error.code or type),
// "" for any other message.
func responseErrorCode(msg string) string {
	if !strings.HasPrefix(strings.TrimSpace(msg), "{") {
		return ""
	}
	type apiErr struct {
		Code string `json:"code"`
		Type string `json:"type"`
	}
	var ev struct {
		Response struct {
			Error *apiErr `json:"error"`
		} `json:"response"`
		Error *apiErr `json:"error"`
	}
	if json.Unmarshal([]byte(msg), &ev) != nil {
		return ""
	}
	for _, e := range []*apiErr{ev.Response.Error, ev.Error} {
		if e != nil {
			return cmp.Or(e.Code, e.Type)
		}
	}
	return ""
}
