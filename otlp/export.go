package otlp

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retrylab/retrylab/trace"
)

// ExportScope is the instrumentation scope of FromTrace's spans. What is
// in it is read back by TraceLines, event for event, and never through a
// Mapping.
const ExportScope = "github.com/retrylab/retrylab/otlp"

// The attributes by which an export carries trace v1 (see FromTrace).
const (
	// AttrEvent holds the trace v1 line a span or span event was made
	// from, verbatim.
	AttrEvent = "retrylab.event"
	// AttrSeq is that line's position among its run's lines.
	AttrSeq = "retrylab.seq"
)

// Line is one event of a trace with the JSON line it was read from (Raw;
// nil: the event marshalled) and its position among what is exported
// (Seq: lines of one run given back in its order, across exports and
// files).
type Line struct {
	trace.Event
	Raw []byte
	Seq int64
}

// RawLine is the JSON line of ev as read: its ts, type, runId and payload
// as they were (so that reading it again gives the same figures),
// runID in place of a missing runId when not nil.
func RawLine(ev *trace.RawEvent, runID []byte) []byte {
	b := []byte(`{"v":1`)
	if ev.TS != nil {
		b = append(append(append(b, `,"ts":"`...), ev.TS...), '"')
	}
	typ, _ := json.Marshal(ev.Type) // a string always marshals
	b = append(append(b, `,"type":`...), typ...)
	if ev.RunID != nil {
		runID = ev.RunID
	}
	if runID != nil {
		b = append(append(append(b, `,"runId":"`...), runID...), '"')
	}
	if ev.Payload != nil {
		b = append(append(b, `,"payload":`...), ev.Payload...)
	}
	return append(b, '}')
}

// FromLines turns one run's trace v1 into OTLP, one trace a run, spans in
// the shape the semconv mapping reads (and any OpenTelemetry backend
// shows): under a "retrylab run" span, for each ProviderRequestFinished a
// gen_ai "chat" CLIENT span (gen_ai.operation.name, gen_ai.provider.name,
// gen_ai.request.model; status error with its error when it failed) and
// under it one HTTP CLIENT span per attempt, numbered by
// http.request.resend_count, with http.response.status_code, error.type
// (the failure type, in retrylab's taxonomy) and the errorMessage as the
// span's status message. A request's failed attempts are RetryAttempt
// events before it not yet given to another: those of its requestId, else
// of its provider and model, else of its provider (an escalated request
// names the model it ended on), else any, the latest first; a retry no
// event describes is a span with error.type unknown and
// retrylab.undescribed; a RetryAttempt no request takes is an HTTP span
// under the run's. Attempts are laid out on the request's clock, in order,
// never overlapping: it ends at its ts and began durationMs earlier; a
// failed attempt ends at its RetryAttempt's ts (not before it began) and
// the next begins delayMs later, the request's span stretched over its
// attempts where the waits outlast it (a run on a fake clock), so that
// the mappings read each wait as its delayMs. A failed request whose
// RetryAttempts include the one it gave up on ends with that attempt.
// Every other event is
// a log record (an OpenTelemetry event: its event name the type, its body
// the payload) in the run's trace.
//
// Each span and log record made from an event carries its line (AttrEvent)
// and position (AttrSeq), so that TraceLines gives the trace back exactly:
// analyze of an export gives the figures of the trace, whatever the
// layout could not show. The run is the resource's service.instance.id.
// The trace and span ids are derived from runID and the lines with their
// Seq (see ids): the same input, the same ids; another file or trace of
// the same runId, other ids.
// The spans, then the log records, come in exports of at most maxItems
// each (0: one of each).
func FromLines(runID string, lines []Line, maxItems int) []Payload {
	td, ld := ptrace.NewTraces(), plog.NewLogs()
	rs, rl := td.ResourceSpans().AppendEmpty(), ld.ResourceLogs().AppendEmpty()
	for _, res := range []pcommon.Map{rs.Resource().Attributes(), rl.Resource().Attributes()} {
		res.PutStr("service.name", "retrylab")
		res.PutStr("service.instance.id", runID)
	}
	ss, sl := rs.ScopeSpans().AppendEmpty(), rl.ScopeLogs().AppendEmpty()
	for _, sc := range []pcommon.InstrumentationScope{ss.Scope(), sl.Scope()} {
		sc.SetName(ExportScope)
		sc.SetVersion(exportVersion)
	}
	lines = withRaw(lines)
	x := &exporter{spans: ss.Spans(), logs: sl.LogRecords(), id: ids(runID, lines), cursor: time.Unix(0, 0).UTC()}
	x.run = x.newSpan(pcommon.SpanID{}, "retrylab run")
	x.run.SetKind(ptrace.SpanKindInternal)
	for _, l := range lines {
		x.line(l)
	}
	for _, r := range x.pending { // attempts no request took
		s := x.attemptSpan(x.run.SpanID(), 0, r.ts)
		x.carry(s.Attributes(), r.seq, r.raw)
		failedSpan(s, r.Status, r.FailureType, r.ErrorMessage)
		x.seen(r.ts)
	}
	x.run.SetStartTimestamp(pcommon.NewTimestampFromTime(x.first))
	x.run.SetEndTimestamp(pcommon.NewTimestampFromTime(x.last))
	out := splitTraces(td, maxItems)
	if x.logs.Len() > 0 {
		out = append(out, splitLogs(ld, maxItems)...)
	}
	return out
}

// splitTraces cuts td, one resource and scope, into exports of at most
// max spans (0: no limit).
func splitTraces(td ptrace.Traces, max int) []Payload {
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	if max <= 0 || spans.Len() <= max {
		return []Payload{{Signal: Traces, Traces: td}}
	}
	var out []Payload
	for i := 0; i < spans.Len(); i += max {
		part := ptrace.NewTraces()
		rs := part.ResourceSpans().AppendEmpty()
		td.ResourceSpans().At(0).Resource().CopyTo(rs.Resource())
		ss := rs.ScopeSpans().AppendEmpty()
		td.ResourceSpans().At(0).ScopeSpans().At(0).Scope().CopyTo(ss.Scope())
		for j := i; j < min(i+max, spans.Len()); j++ {
			spans.At(j).CopyTo(ss.Spans().AppendEmpty())
		}
		out = append(out, Payload{Signal: Traces, Traces: part})
	}
	return out
}

// splitLogs is splitTraces for log records.
func splitLogs(ld plog.Logs, max int) []Payload {
	recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	if max <= 0 || recs.Len() <= max {
		return []Payload{{Signal: Logs, Logs: ld}}
	}
	var out []Payload
	for i := 0; i < recs.Len(); i += max {
		part := plog.NewLogs()
		rl := part.ResourceLogs().AppendEmpty()
		ld.ResourceLogs().At(0).Resource().CopyTo(rl.Resource())
		sl := rl.ScopeLogs().AppendEmpty()
		ld.ResourceLogs().At(0).ScopeLogs().At(0).Scope().CopyTo(sl.Scope())
		for j := i; j < min(i+max, recs.Len()); j++ {
			recs.At(j).CopyTo(sl.LogRecords().AppendEmpty())
		}
		out = append(out, Payload{Signal: Logs, Logs: part})
	}
	return out
}

// exporter lays out one run's spans.
type exporter struct {
	spans       ptrace.SpanSlice
	logs        plog.LogRecordSlice
	id          spanIDs
	n           int // spans made
	run         ptrace.Span
	pending     []tsRetry
	cursor      time.Time // where events without ts are laid out
	first, last time.Time
}

// tsRetry is a RetryAttempt with its event's time, position and line.
type tsRetry struct {
	trace.RetryAttempt
	ts  time.Time
	seq int64
	raw []byte
}

func (x *exporter) line(l Line) {
	seq, raw := l.Seq, l.Raw
	switch l.Type {
	case trace.TypeRetryAttempt:
		var p trace.RetryAttempt
		if l.Decode(&p) == nil {
			x.pending = append(x.pending, tsRetry{p, x.at(l.TS, 0), seq, raw})
			return
		}
	case trace.TypeProviderRequestFinished:
		var p trace.ProviderRequestFinished
		if l.Decode(&p) == nil {
			end := x.at(l.TS, p.DurationMs)
			x.request(seq, raw, p, x.claim(p), end)
			return
		}
	}
	rec := x.logs.AppendEmpty()
	rec.SetEventName(l.Type)
	ts := x.at(l.TS, 0)
	rec.SetTimestamp(pcommon.NewTimestampFromTime(ts))
	rec.SetTraceID(x.id.trace)
	rec.SetSpanID(x.run.SpanID())
	if bytes.HasPrefix(bytes.TrimSpace(l.Payload), []byte("{")) {
		body := pcommon.NewValueEmpty()
		if d := json.NewDecoder(bytes.NewReader(l.Payload)); setJSON(body, d) == nil {
			body.CopyTo(rec.Body()) // in the payload's order, so that one input is one export
		}
	}
	x.carry(rec.Attributes(), seq, raw)
	x.seen(ts)
}

// setJSON sets v to the next JSON value of d, objects' keys in their
// order (FromRaw of a map would take them in Go's random map order).
func setJSON(v pcommon.Value, d *json.Decoder) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			sl := v.SetEmptySlice()
			for d.More() {
				if err := setJSON(sl.AppendEmpty(), d); err != nil {
					return err
				}
			}
		} else {
			m := v.SetEmptyMap()
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string) // an object's key is a string
				if err := setJSON(m.PutEmpty(key), d); err != nil {
					return err
				}
			}
		}
		_, err = d.Token() // the closing delimiter
		return err
	case string:
		v.SetStr(t)
	case float64:
		v.SetDouble(t)
	case bool:
		v.SetBool(t)
	}
	return nil // null: an empty value
}

// at is ts, or for an event without one, a time after the last laid out
// (dur further on).
func (x *exporter) at(ts time.Time, dur int64) time.Time {
	if !ts.IsZero() {
		return ts
	}
	x.cursor = x.cursor.Add(ms(max(dur, 0)) + time.Millisecond)
	return x.cursor
}

func (x *exporter) seen(t time.Time) {
	if x.first.IsZero() || t.Before(x.first) {
		x.first = t
	}
	if t.After(x.last) {
		x.last = t
	}
}

func (x *exporter) carry(a pcommon.Map, seq int64, raw []byte) {
	a.PutStr(AttrEvent, string(raw))
	a.PutInt(AttrSeq, seq)
}

// claim takes from the pending attempts those of request p (see
// FromLines), at most p.Retries (one more when it failed), in the order
// they were made.
func (x *exporter) claim(p trace.ProviderRequestFinished) []tsRetry {
	n := max(p.Retries, 0)
	if !p.Success {
		n++ // the attempt it gave up on has its RetryAttempt too (willRetry false)
	}
	var took []int
	for _, match := range []func(r tsRetry) bool{
		func(r tsRetry) bool { return p.RequestID != "" && r.RequestID == p.RequestID },
		func(r tsRetry) bool { return r.Provider == p.Provider && r.Model == p.Model },
		func(r tsRetry) bool { return r.Provider == p.Provider },
		func(tsRetry) bool { return true },
	} {
		for i := len(x.pending) - 1; i >= 0 && len(took) < n; i-- {
			if !containsInt(took, i) && match(x.pending[i]) {
				took = append(took, i)
			}
		}
	}
	var out, rest []tsRetry
	for i, r := range x.pending {
		if containsInt(took, i) {
			out = append(out, r)
		} else {
			rest = append(rest, r)
		}
	}
	x.pending = rest
	return out
}

func containsInt(s []int, v int) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// withRaw is lines, each with its Raw (nil: the event marshalled), the
// caller's slice left as it was.
func withRaw(lines []Line) []Line {
	out := slices.Clone(lines)
	for i := range out {
		if out[i].Raw == nil {
			out[i].Raw, _ = json.Marshal(out[i].Event) // an Event always marshals, but for a year past 9999
		}
	}
	return out
}

// spanIDs makes a run's trace id and its spans' ids.
type spanIDs struct {
	trace pcommon.TraceID
	seed  [32]byte
}

// ids derives the ids of one FromLines call from what it exports: the
// runId and every line with its position (Seq). The same input gives the
// same ids (an exporter's retry, or the same trace exported again, is
// received again as the same spans and counted once); a runId in two
// files, or two traces of one runId, are other lines or other positions,
// so other traces, whose spans never collide.
func ids(runID string, lines []Line) spanIDs {
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	field([]byte(exportVersion))
	field([]byte(runID))
	for _, l := range lines {
		binary.BigEndian.PutUint64(n[:], uint64(l.Seq))
		h.Write(n[:])
		field(l.Raw)
	}
	var s spanIDs
	h.Sum(s.seed[:0])
	copy(s.trace[:], s.seed[:16])
	return s
}

func (s spanIDs) span(n int) pcommon.SpanID {
	var id pcommon.SpanID
	copy(id[:], s.seed[16:24])
	binary.BigEndian.PutUint32(id[4:], binary.BigEndian.Uint32(id[4:])+uint32(n)+1)
	return id
}

// newSpan appends a span of the run's trace under parent (none: zero).
func (x *exporter) newSpan(parent pcommon.SpanID, name string) ptrace.Span {
	s := x.spans.AppendEmpty()
	s.SetTraceID(x.id.trace)
	s.SetSpanID(x.id.span(x.n))
	x.n++
	if !parent.IsEmpty() {
		s.SetParentSpanID(parent)
	}
	s.SetName(name)
	return s
}

// attemptSpan appends an HTTP CLIENT span under parent, the k-th resend,
// beginning at start.
func (x *exporter) attemptSpan(parent pcommon.SpanID, k int, start time.Time) ptrace.Span {
	s := x.newSpan(parent, "POST")
	s.SetKind(ptrace.SpanKindClient)
	s.Attributes().PutStr("http.request.method", "POST")
	if k > 0 {
		s.Attributes().PutInt("http.request.resend_count", int64(k))
	}
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(start))
	return s
}

// request appends a request's gen_ai span and its attempts' spans.
func (x *exporter) request(seq int64, raw []byte, p trace.ProviderRequestFinished, ras []tsRetry, end time.Time) {
	start := end.Add(-ms(max(p.DurationMs, 0)))
	parent := x.newSpan(x.run.SpanID(), "chat "+p.Model)
	parent.SetKind(ptrace.SpanKindClient)
	parent.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	parent.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
	x.seen(start)
	x.seen(end)
	pa := parent.Attributes()
	pa.PutStr("gen_ai.operation.name", "chat")
	pa.PutStr("gen_ai.provider.name", p.Provider)
	pa.PutStr("gen_ai.request.model", p.Model)
	x.carry(pa, seq, raw)
	if !p.Success {
		parent.Status().SetCode(ptrace.StatusCodeError)
		parent.Status().SetMessage(p.Error)
		if p.FailureType != "" {
			pa.PutStr("error.type", p.FailureType)
		}
	}
	n := max(p.Retries+1, len(ras)+1)
	if !p.Success && len(ras) > p.Retries {
		n = len(ras) // the last RetryAttempt is the attempt it gave up on
	}
	at := start
	for k := range n {
		s := x.attemptSpan(parent.SpanID(), k, at)
		stop := maxTime(end, at) // attempts never overlap nor go back
		switch {
		case k < len(ras):
			r := ras[k]
			stop = maxTime(r.ts, at) // no ts: an attempt of no known length
			x.carry(s.Attributes(), r.seq, r.raw)
			failedSpan(s, r.Status, r.FailureType, r.ErrorMessage)
			at = stop.Add(ms(max(r.DelayMs, 0)))
		case k == n-1 && !p.Success:
			failedSpan(s, 0, p.FailureType, p.Error)
		case k == n-1:
			s.Attributes().PutInt("http.response.status_code", 200)
		default: // a retry the trace did not describe
			failedSpan(s, 0, "unknown", "")
			s.Attributes().PutBool("retrylab.undescribed", true)
			stop = at
		}
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(stop))
		end = maxTime(end, stop)
	}
	// The request spans its attempts: where the trace's times are shorter
	// than its waits (a run on a fake clock), the waits win.
	parent.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
	x.seen(end)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func failedSpan(s ptrace.Span, status int, errType, msg string) {
	if status != 0 {
		s.Attributes().PutInt("http.response.status_code", int64(status))
	}
	s.Attributes().PutStr("error.type", cmp.Or(errType, "unknown"))
	s.Status().SetCode(ptrace.StatusCodeError)
	s.Status().SetMessage(msg)
}

// exportVersion is the version of ExportScope in FromLines's exports.
const exportVersion = "trace/v1"
