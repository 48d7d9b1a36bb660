package otlp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Mapping reads a client's account of its requests from its telemetry in
// one vocabulary (an agent's own, or the semantic conventions). Each is one
// file, registered in mappings below.
type Mapping interface {
	// Name names the mapping in results ("claude-code").
	Name() string
	// Map returns the requests it recognises in t, and how many spans and
	// log records it used for them.
	Map(t Telemetry) (reqs []Request, used int)
}

// mappings are tried in this order; the first that recognises a request
// reads the account. Specific vocabularies come before the generic one,
// since an agent's spans may carry gen_ai.* attributes too: semconv would
// read the AI SDK's chat span alone as a request of one attempt, blind to
// the count in its RetryError, and the HTTP spans of its retried attempts,
// which hang under chat spans it never exports and carry no
// http.request.resend_count, as one request each. ai-sdk reads those HTTP spans itself when
// they are there, so a client that traces its fetch keeps semconv's
// precision (a status and bounds per attempt) under the SDK's grouping.
var mappings = []Mapping{claudeCode{}, codex{}, aiSDK{}, semconv{}}

// MappingNames lists the registered mappings' names, in registry order.
func MappingNames() []string {
	names := make([]string, len(mappings))
	for i, m := range mappings {
		names[i] = m.Name()
	}
	return names
}

// MappingNamed returns the registered mapping called name.
func MappingNamed(name string) (Mapping, error) {
	for _, m := range mappings {
		if m.Name() == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("unknown telemetry mapping %q (known: %s)", name, strings.Join(MappingNames(), ", "))
}

// Telemetry is what a client sent, by signal. Metrics are kept but read
// by no mapping.
type Telemetry struct {
	Traces []ptrace.Traces
	Logs   []plog.Logs
}

// Collect gathers payloads into Telemetry.
func Collect(ps []Payload) Telemetry {
	var t Telemetry
	for _, p := range ps {
		switch p.Signal {
		case Traces:
			t.Traces = append(t.Traces, p.Traces)
		case Logs:
			t.Logs = append(t.Logs, p.Logs)
		}
	}
	return t
}

// items counts the spans and log records of t.
func (t Telemetry) items() int {
	n := 0
	for _, tr := range t.Traces {
		n += tr.SpanCount()
	}
	for _, l := range t.Logs {
		n += l.LogRecordCount()
	}
	return n
}

// noter is a Mapping that says, beside the requests it read, what it saw
// and did not read (side requests, spans it cannot place), for Account.Notes.
type noter interface {
	MapNotes(t Telemetry) (reqs []Request, used int, notes []string)
}

// mapNotes runs m on t, with its notes when it gives any.
func mapNotes(m Mapping, t Telemetry) ([]Request, int, []string) {
	if n, ok := m.(noter); ok {
		return n.MapNotes(t)
	}
	reqs, used := m.Map(t)
	return reqs, used, nil
}

// Read returns the account in t: for each resource (service.name and
// service.instance.id: one client, in a fleet's telemetry) that of the
// first mapping that recognises a request there, all requests in the order
// of their first attempt. Mapping names the mappings used, in registry
// order, comma-separated. A span (trace and span id) or log record
// received more than once, an exporter's retry, counts once.
func Read(t Telemetry) Account {
	acc := Account{Requests: []Request{}}
	used := 0
	names := map[string]bool{}
	parts, runs, seen := t.byResource()
	dups := seen.n
	for i, part := range parts {
		items := part.items()
		acc.Items += items
		read := false
		var notes []string
		for _, m := range mappings {
			reqs, n, ns := mapNotes(m, part)
			notes = append(notes, ns...)
			if len(reqs) == 0 {
				continue
			}
			for j := range reqs {
				reqs[j].Run = runs[i]
			}
			acc.Requests = append(acc.Requests, reqs...)
			used += n
			names[m.Name()] = true
			notes, read = ns, true
			break
		}
		if !read && items > 0 {
			notes = append(notes, fmt.Sprintf("%d span(s) and log record(s) that no mapping reads as provider requests (known: %s): kept, not counted", items, strings.Join(MappingNames(), ", ")))
		}
		acc.Notes = append(acc.Notes, prefixed(part.service(), notes)...)
	}
	var list []string
	for _, m := range mappings {
		if names[m.Name()] {
			list = append(list, m.Name())
		}
	}
	slices.SortStableFunc(acc.Requests, func(x, y Request) int { return x.Attempts[0].Start.Compare(y.Attempts[0].Start) })
	acc.Mapping, acc.Unknown, acc.Duplicates = strings.Join(list, ","), max(acc.Items-used, 0), dups
	if dups > 0 {
		acc.Notes = append(acc.Notes, fmt.Sprintf("%d span(s) and log record(s) received more than once (an exporter's retry) counted once", dups))
	}
	if len(seen.conflicts) > 0 {
		acc.Conflicts = seen.conflicts
		acc.Notes = append(acc.Notes, fmt.Sprintf("%d span id(s) received again with other content (%s): the first copy is read, the client contradicts itself", len(seen.conflicts), strings.Join(seen.conflicts[:min(len(seen.conflicts), 4)], ", ")))
	}
	return acc
}

// prefixed puts the service's name before each note, when it has one.
func prefixed(service string, notes []string) []string {
	if service == "" {
		return notes
	}
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = fmt.Sprintf("service %q: %s", service, n)
	}
	return out
}

// service is the service.name of t's first resource.
func (t Telemetry) service() string {
	for _, tr := range t.Traces {
		if tr.ResourceSpans().Len() > 0 {
			return str(tr.ResourceSpans().At(0).Resource().Attributes(), "service.name")
		}
	}
	for _, l := range t.Logs {
		if l.ResourceLogs().Len() > 0 {
			return str(l.ResourceLogs().At(0).Resource().Attributes(), "service.name")
		}
	}
	return ""
}

// byResource splits t by the resource that sent it (service.name and
// service.instance.id), in order of first appearance, and returns each
// part's service.instance.id. A span whose trace and span id came before,
// or a log record the same in every field as one before, is left out and
// counted in the dedupe's n; a span that came before with other content,
// in its conflicts.
func (t Telemetry) byResource() (parts []Telemetry, runs []string, seen *dedupe) {
	idx := map[string]int{}
	part := func(res pcommon.Map) *Telemetry {
		k := str(res, "service.name") + "\x00" + str(res, "service.instance.id")
		i, ok := idx[k]
		if !ok {
			i = len(parts)
			idx[k] = i
			parts = append(parts, Telemetry{Traces: []ptrace.Traces{ptrace.NewTraces()}, Logs: []plog.Logs{plog.NewLogs()}})
			runs = append(runs, str(res, "service.instance.id"))
		}
		return &parts[i]
	}
	seen = &dedupe{}
	for _, tr := range t.Traces {
		for i := 0; i < tr.ResourceSpans().Len(); i++ {
			rs := tr.ResourceSpans().At(i)
			dst := part(rs.Resource().Attributes()).Traces[0].ResourceSpans().AppendEmpty()
			rs.CopyTo(dst)
			seen.spans(dst)
		}
	}
	for k, l := range t.Logs {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			rl := l.ResourceLogs().At(i)
			dst := part(rl.Resource().Attributes()).Logs[0].ResourceLogs().AppendEmpty()
			rl.CopyTo(dst)
			seen.logs(dst, k)
		}
	}
	return parts, runs, seen
}

// span is a span with its resource's attributes.
type span struct {
	ptrace.Span
	resource pcommon.Map
}

// spans lists every span of t.
func (t Telemetry) spans() []span {
	var out []span
	for _, tr := range t.Traces {
		for i := 0; i < tr.ResourceSpans().Len(); i++ {
			rs := tr.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					out = append(out, span{Span: ss.At(k), resource: rs.Resource().Attributes()})
				}
			}
		}
	}
	return out
}

// logRecord is a log record with its resource's attributes.
type logRecord struct {
	plog.LogRecord
	resource pcommon.Map
}

// records lists every log record of t.
func (t Telemetry) records() []logRecord {
	var out []logRecord
	for _, l := range t.Logs {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			rl := l.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				lr := rl.ScopeLogs().At(j).LogRecords()
				for k := 0; k < lr.Len(); k++ {
					out = append(out, logRecord{LogRecord: lr.At(k), resource: rl.Resource().Attributes()})
				}
			}
		}
	}
	return out
}

// eventName is a log record's event name: its EventName field, else its
// event.name attribute, else its body when that is a string.
func (r logRecord) eventName() string {
	if n := r.EventName(); n != "" {
		return n
	}
	if v, ok := r.Attributes().Get("event.name"); ok {
		return v.AsString()
	}
	if r.Body().Type() == pcommon.ValueTypeStr {
		return r.Body().Str()
	}
	return ""
}

// when is a log record's time: its timestamp, else when it was observed.
func (r logRecord) when() time.Time {
	if r.Timestamp() != 0 {
		return r.Timestamp().AsTime()
	}
	return r.ObservedTimestamp().AsTime()
}

// str returns the first of keys set in m, as a string.
func str(m pcommon.Map, keys ...string) string {
	for _, k := range keys {
		if v, ok := m.Get(k); ok {
			if s := v.AsString(); s != "" {
				return s
			}
		}
	}
	return ""
}

// num returns the first of keys set in m as an integer (an int, a double or
// a string of digits: agents send numbers as strings), ok false if none.
func num(m pcommon.Map, keys ...string) (int64, bool) {
	for _, k := range keys {
		v, ok := m.Get(k)
		if !ok {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeInt:
			return v.Int(), true
		case pcommon.ValueTypeDouble:
			return int64(v.Double()), true
		case pcommon.ValueTypeStr:
			if n, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64); err == nil {
				return int64(n), true
			}
		}
	}
	return 0, false
}

// status returns an HTTP status from the first of keys (0 for none, or a
// value such as "undefined" or "none").
func status(m pcommon.Map, keys ...string) int {
	if n, ok := num(m, keys...); ok && n >= 100 && n <= 999 {
		return int(n)
	}
	return 0
}

// nth returns the attempt number from keys, 0 when absent.
func nth(m pcommon.Map, keys ...string) int {
	if n, ok := num(m, keys...); ok && n > 0 && n < 1<<20 {
		return int(n)
	}
	return 0
}

func itoa(n int) string { return strconv.Itoa(n) }

// splitByNumber groups attempts made one after another into requests: a
// new request begins after a success, or where the client's attempt number
// does not grow.
func splitByNumber(provider, model string, ats []Attempt, models []string) []Request {
	var reqs []Request
	for i, a := range ats {
		newReq := len(reqs) == 0
		if !newReq {
			cur := reqs[len(reqs)-1].Attempts
			prev := cur[len(cur)-1]
			newReq = !prev.Failed() || (a.N != 0 && prev.N != 0 && a.N <= prev.N)
		}
		if newReq {
			m := model
			if i < len(models) && models[i] != "" {
				m = models[i]
			}
			reqs = append(reqs, Request{Provider: provider, Model: m})
		}
		r := &reqs[len(reqs)-1]
		r.Attempts = append(r.Attempts, a)
	}
	return reqs
}

// ms is a duration of n milliseconds.
func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// dedupe removes what an exporter sent twice: spans by trace and span id,
// log records by their whole content (they have no id) when an earlier
// export held the same one: within one export, records alike in every
// field are kept (Codex stamps its stream events to the millisecond). A
// span whose ids came before with other content is left out too, and its
// ids listed in conflicts ("traceid/spanid", each once): an exporter's
// retry sends the same span, a client that says two things of one attempt
// contradicts itself.
type dedupe struct {
	span      map[spanKey]string // the span's content, as first seen
	log       map[string]int     // the export a record was first seen in
	n         int
	conflicts []string
	conflict  map[spanKey]bool
}

// spans removes from rs the spans seen before.
func (d *dedupe) spans(rs ptrace.ResourceSpans) {
	if d.span == nil {
		d.span, d.conflict = map[spanKey]string{}, map[spanKey]bool{}
	}
	res := rs.Resource().Attributes().AsRaw()
	for j := 0; j < rs.ScopeSpans().Len(); j++ {
		rs.ScopeSpans().At(j).Spans().RemoveIf(func(s ptrace.Span) bool {
			if s.SpanID().IsEmpty() || s.TraceID().IsEmpty() {
				return false
			}
			k := spanKey{s.TraceID(), s.SpanID()}
			c := spanContent(res, s)
			first, seen := d.span[k]
			switch {
			case seen && first == c:
				d.n++
				return true
			case seen:
				if !d.conflict[k] {
					d.conflict[k] = true
					d.conflicts = append(d.conflicts, s.TraceID().String()+"/"+s.SpanID().String())
				}
				return true
			}
			d.span[k] = c
			return false
		})
	}
}

// logs removes from rl, of export k, the log records an earlier export
// held. A record with no time, or one whose content does not encode, is
// kept as it is.
func (d *dedupe) logs(rl plog.ResourceLogs, k int) {
	if d.log == nil {
		d.log = map[string]int{}
	}
	res := rl.Resource().Attributes().AsRaw()
	for j := 0; j < rl.ScopeLogs().Len(); j++ {
		sl := rl.ScopeLogs().At(j)
		sl.LogRecords().RemoveIf(func(r plog.LogRecord) bool {
			if r.Timestamp() == 0 && r.ObservedTimestamp() == 0 {
				return false
			}
			b, err := json.Marshal([]any{res, sl.Scope().Name(), sl.Scope().Version(), r.Timestamp(), r.ObservedTimestamp(),
				r.SeverityNumber(), r.SeverityText(), r.EventName(), r.Body().AsRaw(), r.Attributes().AsRaw(),
				r.TraceID(), r.SpanID(), r.Flags()})
			if err != nil {
				return false
			}
			first, seen := d.log[string(b)]
			if seen && first < k {
				d.n++
				return true
			}
			if !seen {
				d.log[string(b)] = k
			}
			return false
		})
	}
}

// spanContent encodes what s says (with its resource's attributes res),
// to tell an exporter's retry of a span from another span under its ids.
func spanContent(res map[string]any, s ptrace.Span) string {
	var evs []any
	for i := 0; i < s.Events().Len(); i++ {
		e := s.Events().At(i)
		evs = append(evs, []any{e.Name(), e.Timestamp(), e.Attributes().AsRaw()})
	}
	b, err := json.Marshal([]any{res, s.ParentSpanID().String(), s.Name(), s.Kind(), s.StartTimestamp(), s.EndTimestamp(),
		s.Status().Code(), s.Status().Message(), s.Attributes().AsRaw(), evs})
	if err != nil { // attribute values are JSON's: cannot fail
		return s.Name()
	}
	return string(b)
}
