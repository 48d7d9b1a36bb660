package otlp

import (
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
// since an agent's spans may carry gen_ai.* attributes too: the AI SDK's
// chat span is a CLIENT span with http.response.status_code, which semconv
// would take for one more HTTP attempt, and the HTTP spans of its retried
// attempts hang under chat spans it never exports, which semconv would
// take for one request each. ai-sdk reads those HTTP spans itself when
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

// Read returns the account in t: for each resource (service.name and
// service.instance.id: one client, in a fleet's telemetry) that of the
// first mapping that recognises a request there, all requests in the order
// of their first attempt. Mapping names the mappings used, in registry
// order, comma-separated.
func Read(t Telemetry) Account {
	acc := Account{Items: t.items(), Requests: []Request{}}
	used := 0
	names := map[string]bool{}
	parts, runs := t.byResource()
	for i, part := range parts {
		for _, m := range mappings {
			reqs, n := m.Map(part)
			if len(reqs) == 0 {
				continue
			}
			for j := range reqs {
				reqs[j].Run = runs[i]
			}
			acc.Requests = append(acc.Requests, reqs...)
			used += n
			names[m.Name()] = true
			break
		}
	}
	var list []string
	for _, m := range mappings {
		if names[m.Name()] {
			list = append(list, m.Name())
		}
	}
	slices.SortStableFunc(acc.Requests, func(x, y Request) int { return x.Attempts[0].Start.Compare(y.Attempts[0].Start) })
	acc.Mapping, acc.Unknown = strings.Join(list, ","), max(acc.Items-used, 0)
	return acc
}

// byResource splits t by the resource that sent it (service.name and
// service.instance.id), in order of first appearance, and returns each
// part's service.instance.id.
func (t Telemetry) byResource() (parts []Telemetry, runs []string) {
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
	for _, tr := range t.Traces {
		for i := 0; i < tr.ResourceSpans().Len(); i++ {
			rs := tr.ResourceSpans().At(i)
			rs.CopyTo(part(rs.Resource().Attributes()).Traces[0].ResourceSpans().AppendEmpty())
		}
	}
	for _, l := range t.Logs {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			rl := l.ResourceLogs().At(i)
			rl.CopyTo(part(rl.Resource().Attributes()).Logs[0].ResourceLogs().AppendEmpty())
		}
	}
	return parts, runs
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
