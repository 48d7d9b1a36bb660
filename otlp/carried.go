package otlp

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retrylab/retrylab/trace"
)

// Carried is what TraceLines reads back from the spans and log records of
// FromLines's scope.
type Carried struct {
	// Lines are the trace v1 lines carried, each run's in its order
	// (AttrSeq) whatever exports they came in, runs in the order they
	// first come; a line without runId gets its resource's
	// service.instance.id (the file it came from), so that runs kept
	// apart by their files stay apart.
	Lines [][]byte
	// Rest is what is left of ps for the mappings: other scopes, and what
	// of FromLines's scope lost its line (see TraceLines).
	Rest []Payload
	// Items counts the spans and log records of the scope taken out of ps
	// (their lines read, or FromLines's layout).
	Items int
	// Dups counts the lines received more than once (the same run,
	// AttrSeq and line: an exporter's retry), kept once.
	Dups int
	// Mapped counts the spans and log records of the scope left in Rest
	// for the mappings: they lost their line.
	Mapped int
	// Problems are the spans and log records whose line is not read.
	Problems []Problem
}

// Problem is a span or log record of FromLines's scope whose carried line
// is not read: not one trace v1 line, or another line for a position
// already read.
type Problem struct {
	Payload int    // its export: an index into TraceLines's ps
	Item    string // the span (id and name) or log record (its place and event name)
	Reason  string
}

func (p Problem) String() string { return p.Item + ": " + p.Reason }

// TraceLines takes out of ps the spans and log records of FromLines (its
// ExportScope at version trace/v1) and returns the trace v1 lines they
// carry (AttrEvent), each exactly one line: a value holding a newline, or
// not one JSON object, or not an event, is a Problem, never read as
// lines. A line received again at the same run and AttrSeq counts once
// (Dups); another line there is a Problem, the first kept.
//
// What lost its line (an attribute filter, a collector's value length
// limit) goes to the mappings, whose semconv reads FromLines's layout: a
// gen_ai span without its line, or with one that is not read, with every
// span under it (their lines not read: the mappings count those
// attempts), and a log record without a line. Any other span without a
// line is FromLines's layout (the run's span, a request's last attempt,
// an undescribed retry) or an attempt no request took that lost its line:
// taken out, not counted.
func TraceLines(ps []Payload) Carried {
	c := &carrier{idx: map[string]int{}, seen: map[seqKey]string{}, bad: map[carriedSpan]bool{}, parent: map[carriedSpan]carriedSpan{}, fallback: map[carriedSpan]bool{}}
	for _, p := range ps {
		c.survey(p, false)
	}
	if len(c.bad) > 0 { // the tree is needed only to find what hangs under them
		for _, p := range ps {
			c.survey(p, true)
		}
	}
	var out Carried
	for i, p := range ps {
		c.payload, c.recN = i, 0
		if !c.take(p) {
			out.Rest = append(out.Rest, p)
		}
	}
	for _, r := range c.runs {
		slices.SortStableFunc(r.lines, func(a, b seqLine) int { return cmp.Compare(a.seq, b.seq) })
		for _, l := range r.lines {
			out.Lines = append(out.Lines, l.line)
		}
	}
	out.Items, out.Mapped, out.Dups, out.Problems = c.items, c.mapped, c.dups, c.problems
	return out
}

// isExport tells FromLines's scope. An export of an older retrylab (no
// version, no AttrEvent) is left to the mappings.
func isExport(sc pcommon.InstrumentationScope) bool {
	return sc.Name() == ExportScope && sc.Version() == exportVersion
}

// carrier gathers the lines of an export by run.
type carrier struct {
	idx  map[string]int
	runs []carriedRun
	// what survey learnt of the scope's spans
	parent   map[carriedSpan]carriedSpan
	bad      map[carriedSpan]bool // gen_ai spans whose line is missing or does not read
	fallback map[carriedSpan]bool // memo of underBad
	seen     map[seqKey]string
	payload  int // the export being taken
	recN     int // the log records of it seen
	items    int
	mapped   int
	dups     int
	problems []Problem
}

type carriedRun struct {
	id    []byte
	lines []seqLine
}

type seqLine struct {
	seq  int64
	line []byte
}

type carriedSpan struct {
	run   int
	trace pcommon.TraceID
	span  pcommon.SpanID
}

// seqKey is a line's place: its run and AttrSeq (a line without one: the
// line itself).
type seqKey struct {
	run    int
	seq    int64
	hasSeq bool
	line   string
}

// run returns the index of the run of a resource.
func (c *carrier) run(res pcommon.Map) int {
	k := str(res, "service.name") + "\x00" + str(res, "service.instance.id")
	i, ok := c.idx[k]
	if !ok {
		i = len(c.runs)
		c.idx[k] = i
		c.runs = append(c.runs, carriedRun{id: []byte(str(res, "service.instance.id"))})
	}
	return i
}

// survey learns which gen_ai spans of the scope in p carry no line that
// reads, or with tree, the tree of the scope's spans.
func (c *carrier) survey(p Payload, tree bool) {
	if p.Signal == Logs && !tree { // runs in the order they first come
		for i := 0; i < p.Logs.ResourceLogs().Len(); i++ {
			c.run(p.Logs.ResourceLogs().At(i).Resource().Attributes())
		}
	}
	if p.Signal != Traces {
		return
	}
	rss := p.Traces.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		run := c.run(rs.Resource().Attributes())
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			if !isExport(ss.Scope()) {
				continue
			}
			for k := 0; k < ss.Spans().Len(); k++ {
				s := ss.Spans().At(k)
				key := carriedSpan{run, s.TraceID(), s.SpanID()}
				if tree {
					if !s.ParentSpanID().IsEmpty() {
						c.parent[key] = carriedSpan{run, s.TraceID(), s.ParentSpanID()}
					}
					continue
				}
				if _, ok := s.Attributes().Get("gen_ai.operation.name"); !ok {
					continue
				}
				if v, ok := s.Attributes().Get(AttrEvent); !ok || !readable(v, c.runs[run].id) {
					c.bad[key] = true
				}
			}
		}
	}
}

// underBad tells a span that is, or hangs under, a gen_ai span whose
// line is missing or not read.
func (c *carrier) underBad(k carriedSpan) bool {
	if len(c.bad) == 0 {
		return false
	}
	if v, ok := c.fallback[k]; ok {
		return v
	}
	c.fallback[k] = false // a cycle of parents ends here
	v := c.bad[k]
	if p, ok := c.parent[k]; ok && !v {
		v = c.underBad(p)
	}
	c.fallback[k] = v
	return v
}

// toMappings tells a span of the scope that goes to the mappings (see
// TraceLines).
func (c *carrier) toMappings(run int, s ptrace.Span) bool {
	return c.underBad(carriedSpan{run, s.TraceID(), s.SpanID()})
}

// take takes the scope's spans and log records out of p, reading their
// lines; true: nothing is left of p.
func (c *carrier) take(p Payload) bool {
	switch p.Signal {
	case Traces:
		rss := p.Traces.ResourceSpans()
		rss.RemoveIf(func(rs ptrace.ResourceSpans) bool {
			run := c.run(rs.Resource().Attributes())
			rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
				if !isExport(ss.Scope()) {
					return false
				}
				ss.Spans().RemoveIf(func(s ptrace.Span) bool {
					if c.toMappings(run, s) {
						c.mapped++
						c.unread(run, s)
						return false
					}
					c.add(run, s.Attributes(), func() string { return fmt.Sprintf("span %s %s", s.SpanID(), quoted(s.Name())) })
					return true
				})
				return ss.Spans().Len() == 0
			})
			return rs.ScopeSpans().Len() == 0
		})
		return rss.Len() == 0
	case Logs:
		rls := p.Logs.ResourceLogs()
		rls.RemoveIf(func(rl plog.ResourceLogs) bool {
			run := c.run(rl.Resource().Attributes())
			rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
				if !isExport(sl.Scope()) {
					c.recN += sl.LogRecords().Len()
					return false
				}
				sl.LogRecords().RemoveIf(func(r plog.LogRecord) bool {
					c.recN++
					if _, ok := r.Attributes().Get(AttrEvent); !ok {
						c.mapped++
						return false
					}
					n := c.recN
					c.add(run, r.Attributes(), func() string { return fmt.Sprintf("log record %d %s", n, quoted(r.EventName())) })
					return true
				})
				return sl.LogRecords().Len() == 0
			})
			return rl.ScopeLogs().Len() == 0
		})
		return rls.Len() == 0
	}
	return false
}

// unread reports the line a span that goes to the mappings carries when
// it is not one that reads.
func (c *carrier) unread(run int, s ptrace.Span) {
	v, ok := s.Attributes().Get(AttrEvent)
	if !ok {
		return
	}
	if _, err := readLine(v, c.runs[run].id); err != nil {
		c.problems = append(c.problems, Problem{c.payload, fmt.Sprintf("span %s %s", s.SpanID(), quoted(s.Name())),
			err.Error() + " (not read; the span read by the mappings)"})
	}
}

// quoted is s quoted, cut to 80 bytes.
func quoted(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// add reads the line a, a span's or log record's attributes, carries
// (none: FromLines's layout), item naming it in a Problem.
func (c *carrier) add(run int, a pcommon.Map, item func() string) {
	c.items++
	v, ok := a.Get(AttrEvent)
	if !ok {
		return
	}
	line, err := readLine(v, c.runs[run].id)
	if err != nil {
		c.problems = append(c.problems, Problem{c.payload, item(), err.Error() + " (not read)"})
		return
	}
	seq, hasSeq := num(a, AttrSeq)
	k := seqKey{run: run, seq: seq, hasSeq: hasSeq}
	if !hasSeq {
		k.line = v.Str()
	}
	if prev, ok := c.seen[k]; ok {
		if prev == v.Str() {
			c.dups++
			return
		}
		c.problems = append(c.problems, Problem{c.payload, item(),
			fmt.Sprintf("%s %d of run %s carried again with another line (the first kept, this one not read)", AttrSeq, seq, quoted(string(c.runs[run].id)))})
		return
	}
	c.seen[k] = v.Str()
	c.runs[run].lines = append(c.runs[run].lines, seqLine{seq, line})
}

// readable tells a value that readLine reads.
func readable(v pcommon.Value, run []byte) bool {
	_, err := readLine(v, run)
	return err == nil
}

// readLine reads v, an AttrEvent, as exactly one trace v1 line (held to
// what trace analyze holds a line of a file to: one JSON object, no line
// break), and returns it with run as its runId when it has none.
func readLine(v pcommon.Value, run []byte) ([]byte, error) {
	if v.Type() != pcommon.ValueTypeStr {
		return nil, fmt.Errorf("%s is %s, not a string", AttrEvent, strings.ToLower(v.Type().String()))
	}
	s := v.Str()
	if n := strings.Count(s, "\n") + strings.Count(s, "\r"); n > 0 {
		return nil, fmt.Errorf("%s holds more than one line (%d line breaks): a trace v1 line is one", AttrEvent, n)
	}
	r, err := trace.NewReader(strings.NewReader(s+"\n"), "")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	ev, err := r.Next()
	if err != nil {
		var le *trace.LineError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("%s is not a trace v1 line: %s", AttrEvent, le.Reason)
		}
		return nil, fmt.Errorf("%s: %w", AttrEvent, err)
	}
	if ev.RunID != nil || len(run) == 0 {
		return []byte(s), nil
	}
	esc, _ := json.Marshal(string(run))
	return RawLine(ev, esc[1:len(esc)-1]), nil
}
