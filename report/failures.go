package report

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/trace"
)

// FailureRow is one failed attempt (one RetryAttempt event) as `retrylab
// trace failures` exports it. Strings went through RedactLabel and are
// valid UTF-8, at most MaxFailureField bytes.
type FailureRow struct {
	Run           string   `json:"run"`  // the event's runId, else the file it came from
	Time          string   `json:"time"` // RFC 3339 UTC with milliseconds; "" without a valid ts
	Provider      string   `json:"provider"`
	Model         string   `json:"model"`
	Attempt       int64    `json:"attempt"` // 1-based number of the attempt that failed
	FailureType   string   `json:"failureType"`
	Status        int64    `json:"status,omitempty"` // HTTP status; 0 (empty in CSV) when none
	Message       string   `json:"message"`
	WillRetry     bool     `json:"willRetry"`
	WaitMs        *int64   `json:"waitMs"` // the wait before the next attempt; null when none followed
	DelaySource   string   `json:"delaySource,omitempty"`
	RequestID     string   `json:"requestId,omitempty"`
	PromptPattern string   `json:"promptPattern,omitempty"`
	Tags          []string `json:"tags,omitempty"`
	File          string   `json:"file"`
	Line          int      `json:"line"`
}

// FailureColumns are the CSV header, in order (the JSONL keys are the same).
var FailureColumns = []string{"run", "time", "provider", "model", "attempt", "failureType", "status", "message",
	"willRetry", "waitMs", "delaySource", "requestId", "promptPattern", "tags", "file", "line"}

// MaxFailureField bounds each exported string, in bytes: a longer one is
// cut at a rune boundary and ends with "…".
const MaxFailureField = 4096

// FailureFormats are the formats ExportFailures writes.
var FailureFormats = []string{"csv", "jsonl"}

// ExportFailures reads the trace files (as trace.DiscoverContext returns
// them) one after the other, streaming, and writes one row per RetryAttempt
// event to w in format "csv" (RFC 4180 with a header; cells that a
// spreadsheet would run as a formula are prefixed with ') or "jsonl". A
// malformed line is passed to malformed (nil: skipped silently) unless
// strict, where it is the error. It returns the rows written; on an error
// the rows before it are written.
func ExportFailures(ctx context.Context, files []string, format string, w io.Writer, strict bool, malformed func(*trace.LineError)) (int64, error) {
	var emit func(FailureRow) error
	var flush func() error
	visible := newMemo(func(s string) string { return cell(Visible(s)) })
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(FailureColumns); err != nil {
			return 0, err
		}
		emit = func(r FailureRow) error { return cw.Write(r.csvRecord(visible.get)) }
		flush = func() error { cw.Flush(); return cw.Error() }
	case "jsonl":
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		emit = func(r FailureRow) error { return enc.Encode(r) }
		flush = func() error { return nil }
	default:
		return 0, fmt.Errorf("unknown format %q (want %s)", format, strings.Join(FailureFormats, " or "))
	}
	var rows int64
	cl := newMemo(clean)
	for _, path := range files {
		n, err := exportFile(ctx, path, emit, cl.get, strict, malformed)
		rows += n
		if err != nil {
			_ = flush()
			return rows, err
		}
	}
	return rows, flush()
}

func exportFile(ctx context.Context, path string, emit func(FailureRow) error, clean func(string) string, strict bool, malformed func(*trace.LineError)) (int64, error) {
	r, err := trace.OpenContext(ctx, path)
	if err != nil {
		var pe *trace.PathError
		if !errors.As(err, &pe) && ctx.Err() == nil {
			err = trace.ReadError(path, err) // a truncated gzip says so, as in trace analyze
		}
		return 0, err
	}
	defer r.Close()
	var rows int64
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			var le *trace.LineError
			isLine := errors.As(err, &le)
			if isLine && !strict && ctx.Err() == nil {
				if malformed != nil {
					malformed(le)
				}
				continue
			}
			if !isLine && ctx.Err() == nil {
				err = trace.ReadError(path, err) // a truncated gzip says so, as in trace analyze
			}
			return rows, err
		}
		if ev.Type != trace.TypeRetryAttempt {
			continue
		}
		if err := emit(failureRow(ev, path, clean)); err != nil {
			return rows, err
		}
		rows++
	}
}

// failureRow builds the row of a RetryAttempt. A member of the wrong type
// is left empty; the others are kept.
func failureRow(ev *trace.RawEvent, path string, clean func(string) string) FailureRow {
	var p struct {
		Provider      string   `json:"provider"`
		Model         string   `json:"model"`
		Attempt       int64    `json:"attempt"`
		FailureType   string   `json:"failureType"`
		Status        int64    `json:"status"`
		ErrorMessage  string   `json:"errorMessage"`
		WillRetry     bool     `json:"willRetry"`
		DelayMs       int64    `json:"delayMs"`
		DelaySource   string   `json:"delaySource"`
		RequestID     string   `json:"requestId"`
		PromptPattern string   `json:"promptPattern"`
		Tags          []string `json:"tags"`
	}
	_ = json.Unmarshal(ev.Payload, &p) // wrong types leave their field empty
	run := path
	if len(ev.RunID) > 0 {
		// RunID holds the string's raw JSON contents, escapes and all.
		if err := json.Unmarshal(append(append([]byte{'"'}, ev.RunID...), '"'), &run); err != nil {
			run = string(ev.RunID)
		}
	}
	row := FailureRow{
		Run: clean(run), Time: failureTime(ev.TS), Provider: clean(p.Provider), Model: clean(p.Model),
		Attempt: p.Attempt, FailureType: clean(p.FailureType), Status: p.Status, Message: clean(p.ErrorMessage),
		WillRetry: p.WillRetry, DelaySource: clean(p.DelaySource), RequestID: clean(p.RequestID),
		PromptPattern: clean(p.PromptPattern), File: clean(path), Line: ev.Line,
	}
	if p.WillRetry {
		w := p.DelayMs
		row.WaitMs = &w
	}
	for _, t := range p.Tags[:min(len(p.Tags), retry.MaxTags)] { // what the retry core writes at most
		row.Tags = append(row.Tags, clean(t))
	}
	return row
}

// clean redacts keys, makes s valid UTF-8 and cuts it to MaxFailureField.
func clean(s string) string {
	s = validUTF8(RedactLabel(s))
	if len(s) <= MaxFailureField {
		return s
	}
	cut := MaxFailureField - len("…")
	for cut > 0 && !utfStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utfStart(b byte) bool { return b&0xC0 != 0x80 }

// failureTime is ts as RFC 3339 UTC with milliseconds, or "".
func failureTime(ts []byte) string {
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// csvRecord is the row as CSV cells: text made visible (no control
// character can break a row in a spreadsheet) and guarded against formula
// injection.
func (r FailureRow) csvRecord(text func(string) string) []string {
	num := func(v int64) string { return strconv.FormatInt(v, 10) }
	status, wait := "", ""
	if r.Status != 0 {
		status = num(r.Status)
	}
	if r.WaitMs != nil {
		wait = num(*r.WaitMs)
	}
	return []string{text(r.Run), r.Time, text(r.Provider), text(r.Model), num(r.Attempt), text(r.FailureType), status,
		text(r.Message), strconv.FormatBool(r.WillRetry), wait, text(r.DelaySource), text(r.RequestID),
		text(r.PromptPattern), text(strings.Join(r.Tags, ";")), text(r.File), strconv.Itoa(r.Line)}
}

// cell guards a text cell against spreadsheet formula injection (OWASP's
// CSV injection advice): a cell that starts with = + - @, a tab or a
// carriage return is prefixed with a single quote, which spreadsheets show
// as text.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// memo remembers what f gave for the strings it saw: a trace repeats its
// providers, models, failure types and messages, and redaction is the
// costly part of a row. It forgets everything at maxMemo entries, so its
// memory stays bounded whatever the input.
type memo struct {
	f func(string) string
	m map[string]string
}

const maxMemo = 4096

func newMemo(f func(string) string) *memo { return &memo{f: f, m: map[string]string{}} }

func (m *memo) get(s string) string {
	if v, ok := m.m[s]; ok {
		return v
	}
	v := m.f(s)
	if len(s) <= 256 { // long strings are seldom repeated; don't keep them
		if len(m.m) >= maxMemo {
			clear(m.m)
		}
		m.m[s] = v
	}
	return v
}
