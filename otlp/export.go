package otlp

import (
	"crypto/sha256"
	"encoding/binary"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retrylab/retrylab/trace"
)

// FromTrace turns one run's trace v1 into OTLP spans in the shape the
// semconv mapping reads (and any OpenTelemetry backend shows): for each
// ProviderRequestFinished a gen_ai "chat" CLIENT span (gen_ai.operation.name,
// gen_ai.provider.name, gen_ai.request.model; status error with its error
// when it failed) and under it one HTTP CLIENT span per attempt, numbered by
// http.request.resend_count, with http.response.status_code, error.type
// (the attempt's failureType, in retrylab's taxonomy) and the errorMessage
// as the span's status message. The attempts of a request are the
// RetryAttempt events of its provider and model before it. They are laid
// out on the request's own clock: the request ends at its event's ts and
// began durationMs earlier; a failed attempt ends at its RetryAttempt's ts
// (kept within the request), and the next begins delayMs later; the last
// ends with the request. So reading the export back gives the same
// requests, retries, waits, statuses and failure types. The run is the
// resource's service.instance.id. Other events have no place in it and are
// left out.
func FromTrace(runID string, evs []trace.Event) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "retrylab")
	rs.Resource().Attributes().PutStr("service.instance.id", runID)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/retrylab/retrylab/otlp")
	pending := map[[2]string][]tsRetry{}
	base := time.Unix(0, 0).UTC() // requests without ts are laid out one after another
	for i, ev := range evs {
		switch ev.Type {
		case trace.TypeRetryAttempt:
			var p trace.RetryAttempt
			if ev.Decode(&p) == nil {
				k := [2]string{p.Provider, p.Model}
				pending[k] = append(pending[k], tsRetry{p, ev.TS})
			}
		case trace.TypeProviderRequestFinished:
			var p trace.ProviderRequestFinished
			if ev.Decode(&p) != nil {
				continue
			}
			k := [2]string{p.Provider, p.Model}
			end := ev.TS
			if end.IsZero() {
				base = base.Add(time.Duration(max(p.DurationMs, 0))*time.Millisecond + time.Second)
				end = base
			}
			exportRequest(ss.Spans(), ids(runID, i), p, pending[k], end)
			delete(pending, k)
		}
	}
	return td
}

// tsRetry is a RetryAttempt with its event's time.
type tsRetry struct {
	trace.RetryAttempt
	ts time.Time
}

// spanIDs makes a request's trace id and its spans' ids, stable for a run.
type spanIDs struct {
	trace pcommon.TraceID
	seed  [32]byte
}

func ids(runID string, i int) spanIDs {
	s := spanIDs{seed: sha256.Sum256(binary.AppendVarint([]byte(runID+"\x00"), int64(i)))}
	copy(s.trace[:], s.seed[:16])
	return s
}

func (s spanIDs) span(n int) pcommon.SpanID {
	var id pcommon.SpanID
	copy(id[:], s.seed[16:24])
	binary.BigEndian.PutUint32(id[4:], binary.BigEndian.Uint32(id[4:])+uint32(n)+1)
	return id
}

// exportRequest appends a request's gen_ai span and its attempts' spans.
func exportRequest(spans ptrace.SpanSlice, id spanIDs, p trace.ProviderRequestFinished, ras []tsRetry, end time.Time) {
	start := end.Add(-time.Duration(max(p.DurationMs, 0)) * time.Millisecond)
	parent := spans.AppendEmpty()
	parent.SetTraceID(id.trace)
	parent.SetSpanID(id.span(0))
	parent.SetName("chat " + p.Model)
	parent.SetKind(ptrace.SpanKindClient)
	parent.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	parent.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
	pa := parent.Attributes()
	pa.PutStr("gen_ai.operation.name", "chat")
	pa.PutStr("gen_ai.provider.name", p.Provider)
	pa.PutStr("gen_ai.request.model", p.Model)
	if !p.Success {
		parent.Status().SetCode(ptrace.StatusCodeError)
		parent.Status().SetMessage(p.Error)
		if p.FailureType != "" {
			pa.PutStr("error.type", p.FailureType)
		}
	}
	n := max(p.Retries+1, 1)
	if len(ras) > n {
		ras = ras[len(ras)-n:]
	}
	at := start
	for k := range n {
		s := spans.AppendEmpty()
		s.SetTraceID(id.trace)
		s.SetSpanID(id.span(k + 1))
		s.SetParentSpanID(id.span(0))
		s.SetName("POST")
		s.SetKind(ptrace.SpanKindClient)
		a := s.Attributes()
		a.PutStr("http.request.method", "POST")
		if k > 0 {
			a.PutInt("http.request.resend_count", int64(k))
		}
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(at))
		stop := end
		switch {
		case k < len(ras):
			r := ras[k]
			if k < n-1 && !r.ts.IsZero() {
				stop = r.ts
				if stop.Before(at) {
					stop = at
				}
				if stop.After(end) {
					stop = end
				}
			}
			failedSpan(s, r.Status, r.FailureType, r.ErrorMessage)
			at = stop.Add(time.Duration(max(r.DelayMs, 0)) * time.Millisecond)
		case k == n-1 && !p.Success:
			failedSpan(s, 0, p.FailureType, p.Error)
		case k == n-1:
			a.PutInt("http.response.status_code", 200)
		default: // a retry the trace did not describe
			failedSpan(s, 0, "unknown", "")
			stop = at
		}
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(stop))
	}
}

func failedSpan(s ptrace.Span, status int, errType, msg string) {
	if status != 0 {
		s.Attributes().PutInt("http.response.status_code", int64(status))
	}
	if errType == "" {
		errType = "unknown"
	}
	s.Attributes().PutStr("error.type", errType)
	s.Status().SetCode(ptrace.StatusCodeError)
	s.Status().SetMessage(msg)
}
