package otlp

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// aiSDK reads the Vercel AI SDK's telemetry (npm ai 7 with @ai-sdk/otel),
// as it really exports it (captured against the mock:
// otlp/testdata/mappings/aisdk-real-*.json).
//
// A model call is either a "chat" span (gen_ai.operation.name chat, kind
// CLIENT) under an AI SDK step span (gen_ai.operation.name agent_step),
// from the OpenTelemetry integration, or an ai.streamText.doStream /
// ai.generateText.doGenerate span (ai.operationId), from
// LegacyOpenTelemetry. Neither is a span per attempt: the chat span is
// started for every attempt but only the last is ended, so exported (its
// bounds, its http.response.status_code and its error are that attempt's);
// the legacy span covers all the attempts of its call. How many there were
// is said only by a failure: the SDK's RetryError, "Failed after N
// attempts. Last error: …", in the span's status and exception event, so
// the N-1 before the last are Retried and Untimed. A call that succeeded
// does not count its attempts (Request.Uncounted).
//
// Where Node's fetch is traced as well (an HTTP CLIENT span per request
// sent, the semantic conventions), those spans are the call's attempts,
// each with its own status and bounds: they hang under the chat span of
// their attempt, exported or not, so a call takes the HTTP spans under its
// own spans and those whose parent was never exported that began within
// its step. The semconv mapping would read them too, but as one request
// per attempt (each under its own parent, with no resend_count), which is
// why this mapping comes before it.
type aiSDK struct{}

var _ Mapping = aiSDK{}

func (aiSDK) Name() string { return "ai-sdk" }

// legacyCallOps are the ai.operationId values of LegacyOpenTelemetry's
// model-call spans.
var legacyCallOps = []string{"ai.streamText.doStream", "ai.generateText.doGenerate",
	"ai.streamObject.doStream", "ai.generateObject.doGenerate"}

// modelCall is one call of the model by the SDK: the span that bounds it
// (the step, or the legacy call span itself) and its own spans.
type modelCall struct {
	bound span
	spans []span // chat spans by start, or the one legacy span
	http  []span // the HTTP client spans of its attempts
	// shared is set when an HTTP span under no exported parent began
	// within this call and another: its attempts are then read from the
	// SDK's spans alone.
	shared bool
}

func (aiSDK) Map(t Telemetry) ([]Request, int) {
	all := t.spans()
	calls := aiSDKCalls(all)
	if len(calls) == 0 {
		return nil, 0
	}
	attachHTTP(calls, all)
	var reqs []Request
	used := 0
	for _, c := range calls {
		r := c.request()
		if len(r.Attempts) == 0 {
			continue
		}
		used += len(c.spans)
		if !c.shared {
			used += len(c.http)
		}
		reqs = append(reqs, r)
	}
	return reqs, used
}

// aiSDKCalls finds the model calls among spans, in order of first start.
func aiSDKCalls(all []span) []*modelCall {
	type key struct {
		trace pcommon.TraceID
		span  pcommon.SpanID
	}
	byID := map[key]span{}
	for _, s := range all {
		byID[key{s.TraceID(), s.SpanID()}] = s
	}
	steps := map[key]*modelCall{}
	var calls []*modelCall
	for _, s := range all {
		a := s.Attributes()
		if slices.Contains(legacyCallOps, str(a, "ai.operationId")) {
			calls = append(calls, &modelCall{bound: s, spans: []span{s}})
			continue
		}
		if str(a, "gen_ai.operation.name") != "chat" || s.ParentSpanID().IsEmpty() {
			continue
		}
		k := key{s.TraceID(), s.ParentSpanID()}
		step, ok := byID[k]
		if !ok || str(step.Attributes(), "gen_ai.operation.name") != "agent_step" {
			continue
		}
		if c := steps[k]; c != nil {
			c.spans = append(c.spans, s)
			continue
		}
		steps[k] = &modelCall{bound: step, spans: []span{s}}
		calls = append(calls, steps[k])
	}
	for _, c := range calls {
		slices.SortStableFunc(c.spans, func(x, y span) int { return x.StartTimestamp().AsTime().Compare(y.StartTimestamp().AsTime()) })
	}
	slices.SortStableFunc(calls, func(x, y *modelCall) int {
		return x.spans[0].StartTimestamp().AsTime().Compare(y.spans[0].StartTimestamp().AsTime())
	})
	return calls
}

// attachHTTP gives each call the HTTP client spans of its attempts: those
// whose parent is one of its spans, and those whose parent was not
// exported (the chat span of an attempt it retried) that began within its
// bound, in its trace. An orphan within two calls' bounds makes both shared.
func attachHTTP(calls []*modelCall, all []span) {
	exported := map[pcommon.SpanID]bool{}
	owner := map[pcommon.SpanID]*modelCall{}
	for _, s := range all {
		exported[s.SpanID()] = true
	}
	for _, c := range calls {
		for _, s := range c.spans {
			owner[s.SpanID()] = c
		}
	}
	for _, s := range all {
		if !isHTTPClient(s) {
			continue
		}
		if c := owner[s.ParentSpanID()]; c != nil && c.bound.TraceID() == s.TraceID() {
			c.http = append(c.http, s)
			continue
		}
		if exported[s.ParentSpanID()] {
			continue
		}
		var in []*modelCall
		for _, c := range calls {
			if c.bound.TraceID() == s.TraceID() && within(s, c.bound) {
				in = append(in, c)
			}
		}
		for _, c := range in {
			c.http = append(c.http, s)
			c.shared = c.shared || len(in) > 1
		}
	}
}

// isHTTPClient reports whether s is an HTTP client span (the semantic
// conventions), not a gen_ai span that carries an HTTP status.
func isHTTPClient(s span) bool {
	a := s.Attributes()
	_, method := a.Get("http.request.method")
	_, genai := a.Get("gen_ai.operation.name")
	return s.Kind() == ptrace.SpanKindClient && method && !genai
}

// within reports whether s began within b's bounds.
func within(s, b span) bool {
	t := s.StartTimestamp()
	return t >= b.StartTimestamp() && (b.EndTimestamp() == 0 || t <= b.EndTimestamp())
}

// request reads the call's attempts: its HTTP spans when it has them, else
// its own spans and the count in its RetryError.
func (c *modelCall) request() Request {
	last := c.spans[len(c.spans)-1]
	a := last.Attributes()
	r := Request{Provider: aiSDKProvider(a), Model: str(a, "gen_ai.request.model", "ai.model.id", "gen_ai.response.model")}
	failed, msg := spanError(last)
	if n, _ := retryCount(msg); n > 0 {
		r.Error = msg
	}
	if len(c.http) > 0 && !c.shared {
		for _, s := range c.http {
			r.Attempts = append(r.Attempts, httpAttempt(s))
		}
		slices.SortStableFunc(r.Attempts, func(x, y Attempt) int { return x.Start.Compare(y.Start) })
		if l := &r.Attempts[len(r.Attempts)-1]; failed && !l.Failed() {
			// The answer began well and the stream failed after it.
			l.Error = cmp.Or(lastError(msg), "failed")
		}
	} else {
		c.fromSpans(&r, failed, msg)
	}
	for k := range r.Attempts {
		r.Attempts[k].N = k + 1
	}
	return r
}

// fromSpans reads the attempts of a call traced without HTTP spans.
func (c *modelCall) fromSpans(r *Request, failed bool, msg string) {
	for _, s := range c.spans {
		at := Attempt{Start: s.StartTimestamp().AsTime(), End: s.EndTimestamp().AsTime(),
			Status: status(s.Attributes(), "http.response.status_code")}
		if f, m := spanError(s); f {
			at.Error, at.ErrorType = lastError(m), errorClass(s, m)
		}
		r.Attempts = append(r.Attempts, at)
	}
	for k := range r.Attempts[:len(r.Attempts)-1] {
		if a := &r.Attempts[k]; !a.Failed() {
			a.Retried = true
		}
	}
	last := &r.Attempts[len(r.Attempts)-1]
	if failed && !last.Failed() {
		last.Error = "failed"
	}
	n, counted := retryCount(msg)
	switch {
	case !failed:
		r.Uncounted = "the AI SDK's span of a model call that succeeded does not count its attempts (an attempt it retried leaves no span); trace Node's fetch too (an HTTP client span per attempt) to have them counted"
	case !counted && aborted(c.spans[len(c.spans)-1], msg):
		r.Uncounted = "the AI SDK reports an aborted model call without counting the attempts before it"
	case n > len(r.Attempts)+maxUntimed:
		r.Uncounted = "the AI SDK's RetryError counts " + itoa(n) + " attempts, more than retrylab fills in without their own spans"
	case n > len(r.Attempts):
		missing := make([]Attempt, n-len(r.Attempts))
		for k := range missing {
			missing[k] = Attempt{Start: r.Attempts[0].Start, End: r.Attempts[0].Start, Retried: true, Untimed: true}
		}
		r.Attempts = slices.Insert(r.Attempts, 0, missing...)
	}
}

// spanError reports whether s ended in error, and its error: the status
// message, else the message of its first exception event.
func spanError(s span) (bool, string) {
	msg := s.Status().Message()
	evs := s.Events()
	for i := 0; i < evs.Len() && msg == ""; i++ {
		if ev := evs.At(i); ev.Name() == "exception" {
			msg = str(ev.Attributes(), "exception.message")
		}
	}
	return s.Status().Code() == ptrace.StatusCodeError, msg
}

// retryCountRe is the SDK's RetryError message (provider-utils
// retryWithExponentialBackoff).
var retryCountRe = regexp.MustCompile(`^Failed after (\d{1,9}) attempts(?:\. Last error: | with non-retryable error: ')`)

// retryCount returns the attempts a RetryError message counts; ok is false
// when msg is no RetryError (an error thrown at the first attempt, or an
// abort).
func retryCount(msg string) (n int, ok bool) {
	m := retryCountRe.FindStringSubmatch(msg)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// lastError is the last attempt's own error in a RetryError message (the
// message itself when it is none).
func lastError(msg string) string {
	m := retryCountRe.FindStringSubmatchIndex(msg)
	if m == nil {
		return msg
	}
	rest := msg[m[1]:]
	if strings.HasSuffix(msg[:m[1]], "'") {
		rest = strings.TrimSuffix(rest, "'")
	}
	return rest
}

// errorClassRe is the class name that starts the SDK's text of an error
// ("AI_APICallError: Overloaded").
var errorClassRe = regexp.MustCompile(`^([A-Za-z_$][A-Za-z0-9_$]{0,99}Error): `)

// errorClass is the class of the error the call's last attempt met, the
// error.type of the semantic conventions: the one a RetryError names as
// its last error, else the exception event's exception.type. The SDK
// exports no other failure type; an APICallError without a status is any
// of several, so it classifies as unknown, not as a network error.
func errorClass(s span, msg string) string {
	if _, ok := retryCount(msg); ok {
		if m := errorClassRe.FindStringSubmatch(lastError(msg)); m != nil {
			return m[1]
		}
		return ""
	}
	evs := s.Events()
	for i := 0; i < evs.Len(); i++ {
		if ev := evs.At(i); ev.Name() == "exception" {
			return str(ev.Attributes(), "exception.type")
		}
	}
	return ""
}

// aborted reports whether the call's error is an abort (a timeout or the
// caller's signal), which the SDK throws as it is, whatever the attempt.
func aborted(s span, msg string) bool {
	evs := s.Events()
	for i := 0; i < evs.Len(); i++ {
		switch str(evs.At(i).Attributes(), "exception.type") {
		case "AbortError", "TimeoutError":
			return true
		}
	}
	low := strings.ToLower(msg)
	return strings.Contains(low, "aborted") || strings.Contains(low, "timed out") || strings.Contains(low, "timeout")
}

// aiSDKProvider names the provider: gen_ai.provider.name, or
// LegacyOpenTelemetry's gen_ai.system or ai.model.provider, the SDK's own
// provider id ("anthropic.messages", "openai.responses"), to its first dot.
func aiSDKProvider(a pcommon.Map) string {
	p, _, _ := strings.Cut(str(a, "gen_ai.provider.name", "gen_ai.system", "ai.model.provider"), ".")
	return p
}
