package otlp

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// semconv reads the OpenTelemetry semantic conventions.
//
// An attempt is an HTTP client span (kind CLIENT; http.request.method or
// http.response.status_code, or the older http.method / http.status_code)
// of an answer endpoint (AttemptEndpoint: a token count, a model list or a
// batch is a side request, not an attempt), with error.type naming its
// failure and http.request.resend_count numbering it. An HTTP span with
// HTTP spans under it (requests over urllib3) is the layer above its
// attempts, not one more.
//
// Attempts are grouped into logical requests by what the conventions say,
// never by an ordinary parent span (an app's "agent turn" span holds many
// separate calls):
//
//  1. Under a gen_ai model-call span (gen_ai.operation.name chat,
//     text_completion or generate_content; the nearest such ancestor):
//     every attempt under it is one request's, in order of start. The
//     gen_ai span gives the provider, the model and the request's error.
//     Spans without a URL count here, the gen_ai span says what they are.
//  2. Else by http.request.resend_count: 0 or absent begins a request; n >
//     0 is a resend of an earlier attempt, taken, in order of start, by
//     the request whose last attempt began before it with a lower number,
//     preferring one in the same trace under the same parent (else the
//     same trace; root spans, each in a trace of its own, across traces),
//     numbered n-1, failed, ended before it began, of the same URL, and the
//     one waiting longest. So concurrent calls interleaved in one trace
//     keep their own chains, and the totals (requests, retries, failed
//     attempts) never depend on the choice. A resend with no earlier
//     attempt exported is a request whose attempts before it are filled in
//     as retried, untimed (Notes says so).
//  3. A gen_ai model-call span with no attempt under it (OpenLLMetry's and
//     similar instrumentations of a provider SDK, which carry gen_ai.* and
//     maybe an HTTP status, no HTTP span; OpenInference's LLM span, with
//     llm.provider and llm.model_name) is one request of one attempt:
//     its bounds, http.response.status_code or http.status_code, error.type
//     and its error (status or exception event). The SDK's own retries
//     inside it leave no span, so the request is Uncounted. A gen_ai span
//     with a model-call span under it (a framework's span over the SDK's)
//     is not read.
//
// HTTP spans with no URL under no gen_ai span, and spans of side requests,
// are not read; Notes says how many.
type semconv struct{}

var (
	_ Mapping = semconv{}
	_ noter   = semconv{}
)

func (semconv) Name() string { return "semconv" }

func (s semconv) Map(t Telemetry) ([]Request, int) {
	reqs, used, _ := s.MapNotes(t)
	return reqs, used
}

// spanKey identifies a span.
type spanKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

func keyOf(s span) spanKey { return spanKey{s.TraceID(), s.SpanID()} }

// semconvScan is what semconv found in a resource's spans.
type semconvScan struct {
	byID    map[spanKey]span
	groups  map[spanKey][]span // attempts by the span that makes them one request
	loose   []span             // attempts to group by resend_count
	outer   map[spanKey]bool   // HTTP spans with attempts under them
	callsIn map[spanKey]bool   // gen_ai spans with a model-call span under them
	side    map[string]int     // side requests, by "METHOD path"
	noURL   int                // HTTP spans with no URL under no gen_ai call
}

func (semconv) MapNotes(t Telemetry) ([]Request, int, []string) {
	all := t.spans()
	sc := scanSemconv(all)
	var reqs []Request
	used, only := 0, 0
	for _, s := range all {
		k := keyOf(s)
		if hs := sc.groups[k]; len(hs) > 0 {
			reqs = append(reqs, groupRequest(s, hs, isGenAICall(s)))
			used += 1 + len(hs)
			continue
		}
		if isGenAICall(s) && !sc.callsIn[k] {
			reqs = append(reqs, genAIOnly(s))
			used++
			only++
		}
	}
	chained, filled := chainResends(sc.loose)
	reqs = append(reqs, chained...)
	used += len(sc.loose)
	slices.SortStableFunc(reqs, func(x, y Request) int { return x.Attempts[0].Start.Compare(y.Attempts[0].Start) })
	notes := sc.notes(only, filled)
	skipped := 0
	for _, r := range reqs {
		skipped += r.Skipped
	}
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d attempt(s) numbered (http.request.resend_count) between two the client exported, with no span of their own: filled in as retried, untimed; the client's telemetry leaves them out", skipped))
	}
	return reqs, used, notes
}

// scanSemconv sorts the attempts among spans into groups and loose ones.
func scanSemconv(all []span) *semconvScan {
	sc := &semconvScan{byID: make(map[spanKey]span, len(all)), groups: map[spanKey][]span{},
		outer: map[spanKey]bool{}, callsIn: map[spanKey]bool{}, side: map[string]int{}}
	for _, s := range all {
		sc.byID[keyOf(s)] = s
	}
	var attempts []span
	grouper := map[spanKey]span{}
	for _, s := range all {
		if isGenAICall(s) {
			sc.markCallAncestors(s)
		}
		if !isHTTPSpan(s) {
			continue
		}
		a := s.Attributes()
		u, method := httpURL(a), str(a, "http.request.method", "http.method")
		if u != "" && !AttemptEndpoint(method, u) {
			p, _ := urlPath(u)
			sc.side[strings.ToUpper(cmp.Or(method, "?"))+" "+p]++
			continue
		}
		g, ok, above := sc.grouper(s)
		switch {
		case u == "" && (!ok || !isGenAICall(g)):
			sc.noURL++
			continue
		case method != "" && !strings.EqualFold(method, "POST"):
			continue
		}
		attempts = append(attempts, s)
		if above != nil {
			sc.outer[keyOf(*above)] = true
		}
		if ok {
			grouper[keyOf(s)] = g
		}
	}
	for _, s := range attempts {
		if sc.outer[keyOf(s)] {
			continue
		}
		if g, ok := grouper[keyOf(s)]; ok {
			sc.groups[keyOf(g)] = append(sc.groups[keyOf(g)], s)
		} else {
			sc.loose = append(sc.loose, s)
		}
	}
	return sc
}

// grouper returns the span that makes s one attempt of a request: its
// nearest gen_ai model-call ancestor, else its nearest HTTP ancestor (the
// layer above it); ok false for none. above is its nearest HTTP ancestor
// below any gen_ai span, nil for none.
func (sc *semconvScan) grouper(s span) (g span, ok bool, above *span) {
	p := s.ParentSpanID()
	for depth := 0; depth < 64 && !p.IsEmpty(); depth++ {
		ps, found := sc.byID[spanKey{s.TraceID(), p}]
		if !found {
			break
		}
		if isGenAICall(ps) {
			return ps, true, above
		}
		if isGenAI(ps) {
			break
		}
		if isHTTPSpan(ps) && above == nil {
			above = &ps
		}
		p = ps.ParentSpanID()
	}
	if above != nil {
		return *above, true, above
	}
	return span{}, false, nil
}

// markCallAncestors marks the gen_ai model-call spans above a model-call
// span: they are a framework's spans over the SDK's, not calls of their own.
func (sc *semconvScan) markCallAncestors(s span) {
	p := s.ParentSpanID()
	for depth := 0; depth < 64 && !p.IsEmpty(); depth++ {
		ps, ok := sc.byID[spanKey{s.TraceID(), p}]
		if !ok {
			return
		}
		if isGenAICall(ps) {
			sc.callsIn[keyOf(ps)] = true
		}
		p = ps.ParentSpanID()
	}
}

// notes says what the scan saw and did not read, or read with less than
// the conventions give.
func (sc *semconvScan) notes(genAIOnly, filled int) []string {
	var out []string
	if n := sum(sc.side); n > 0 {
		out = append(out, fmt.Sprintf("%d HTTP client span(s) of other endpoints than the answer (side requests: token counts, model lists), not attempts: %s", n, topKeys(sc.side, 4)))
	}
	if sc.noURL > 0 {
		out = append(out, fmt.Sprintf("%d HTTP client span(s) with no URL (url.full, http.url) and no gen_ai span above them: which endpoint they called is unknown, not read", sc.noURL))
	}
	if genAIOnly > 0 {
		out = append(out, fmt.Sprintf("%d gen_ai span(s) with no HTTP client span under them, read as one attempt each: retries inside the client library leave no span and are not counted", genAIOnly))
	}
	if filled > 0 {
		out = append(out, fmt.Sprintf("%d HTTP client span(s) resend a request (http.request.resend_count > 0) whose earlier attempts were not exported: those are counted as retried, untimed", filled))
	}
	return out
}

// isHTTPSpan reports whether s is an HTTP client span, not a gen_ai span
// that carries an HTTP status.
func isHTTPSpan(s span) bool {
	if s.Kind() != ptrace.SpanKindClient || isGenAI(s) {
		return false
	}
	a := s.Attributes()
	for _, k := range []string{"http.request.method", "http.response.status_code", "http.method", "http.status_code"} {
		if _, ok := a.Get(k); ok {
			return true
		}
	}
	return false
}

// isGenAI reports whether s is a gen_ai span of any operation (or
// OpenInference's of any kind).
func isGenAI(s span) bool {
	a := s.Attributes()
	return str(a, "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.system", "openinference.span.kind") != ""
}

// isGenAICall reports whether s is a gen_ai span of a model call, not a
// server's: gen_ai.operation.name chat, text_completion or
// generate_content; without one OpenInference's openinference.span.kind
// LLM, OpenLLMetry's llm.request.type chat or completion, or a request
// model.
func isGenAICall(s span) bool {
	if !isGenAI(s) || s.Kind() == ptrace.SpanKindServer || s.Kind() == ptrace.SpanKindConsumer {
		return false
	}
	a := s.Attributes()
	if op := str(a, "gen_ai.operation.name"); op != "" {
		return op == "chat" || op == "text_completion" || op == "generate_content"
	}
	if k := str(a, "openinference.span.kind"); k != "" {
		return k == "LLM"
	}
	switch str(a, "llm.request.type") {
	case "chat", "completion":
		return true
	case "":
		return str(a, "gen_ai.request.model") != ""
	}
	return false
}

// httpURL is an HTTP span's URL, or its path (and query) when it gives no
// full URL.
func httpURL(a pcommon.Map) string {
	return str(a, "url.full", "http.url", "url.path", "http.target")
}

// groupRequest makes a request of the attempts hs under g, a gen_ai call
// (which gives the provider, model and the request's error) or an HTTP
// span. The attempts are numbered in order of start; a call that ended in
// error fails its last attempt, if that says nothing of it.
func groupRequest(g span, hs []span, call bool) Request {
	var r Request
	if call {
		r = genAIRequest(g)
		if g.Status().Code() == ptrace.StatusCodeError {
			r.Error = g.Status().Message()
		}
	}
	ats := make([]Attempt, 0, len(hs))
	for _, s := range hs {
		ats = append(ats, httpAttempt(s))
	}
	slices.SortStableFunc(ats, func(x, y Attempt) int { return x.Start.Compare(y.Start) })
	last := 0
	for _, at := range ats {
		// A resend numbered past the one before it: the client says it
		// made the attempts between, which it did not export.
		if at.N > 1 {
			fillGap(&r, last, at)
		}
		last = at.N
		r.Attempts = append(r.Attempts, at)
	}
	for k := range r.Attempts {
		r.Attempts[k].N = k + 1
	}
	if failed, msg := spanFailure(g); call && failed {
		if l := &r.Attempts[len(r.Attempts)-1]; !l.Failed() {
			// The answer began well and failed after its headers,
			// where an HTTP span may end.
			l.Error = cmp.Or(msg, "failed")
		}
	}
	if r.Provider == "" {
		r.Provider = endpointProvider(httpURL(hs[0].Attributes()))
	}
	return r
}

// genAIRequest is a request with the provider and model of a gen_ai span.
func genAIRequest(s span) Request {
	a := s.Attributes()
	return Request{Provider: str(a, "gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system"),
		Model: str(a, "gen_ai.request.model", "gen_ai.response.model", "llm.model_name")}
}

// genAIOnly reads a gen_ai model-call span with no HTTP span under it as a
// request of one attempt.
func genAIOnly(s span) Request {
	r := genAIRequest(s)
	at := httpAttempt(s)
	at.N = 1
	r.Attempts = []Attempt{at}
	r.Uncounted = "a gen_ai span with no HTTP client span under it is read as one attempt: the retries of the client library inside it leave no span; trace its HTTP client too (an HTTP span per attempt) to have them counted"
	return r
}

// httpAttempt reads one HTTP client span (or a gen_ai span carrying its
// call's outcome) as an attempt: its bounds, http.response.status_code
// (http.status_code, else an error.type that is a status code), error.type,
// its error when it ended in one (status
// message, else its exception event's message), and
// http.request.resend_count as its number (1 without).
func httpAttempt(s span) Attempt {
	a := s.Attributes()
	at := Attempt{Start: s.StartTimestamp().AsTime(), End: s.EndTimestamp().AsTime(),
		Status: status(a, "http.response.status_code", "http.status_code"), ErrorType: str(a, "error.type")}
	if at.Status == 0 && len(at.ErrorType) == 3 {
		// error.type is the status code when the response's status was
		// the error (the conventions' rule), the span's only one when the
		// instrumentation sets no status attribute (OpenLLMetry's).
		at.Status = status(a, "error.type")
	}
	if n, ok := num(a, "http.request.resend_count"); ok && n >= 0 && n < 1<<20 {
		at.N = int(n) + 1
	} else {
		at.N = 1
	}
	if failed, msg := spanFailure(s); failed {
		at.Error = msg
		if at.ErrorType == "" && at.Error == "" {
			at.ErrorType = "error"
		}
	}
	return at
}

// spanFailure reports whether s ended in error (its status, or an
// exception event), and the error: the status message, else the exception
// event's message, else its type.
func spanFailure(s span) (bool, string) {
	failed, msg := s.Status().Code() == ptrace.StatusCodeError, s.Status().Message()
	evs := s.Events()
	for i := 0; i < evs.Len(); i++ {
		if ev := evs.At(i); ev.Name() == "exception" {
			failed = true
			if msg == "" {
				msg = str(ev.Attributes(), "exception.message", "exception.type")
			}
			break
		}
	}
	return failed, msg
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// topKeys lists up to n keys of m, most frequent first, with their counts.
func topKeys(m map[string]int, n int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, n+1)
	for i, k := range keys {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
