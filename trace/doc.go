// Package trace defines retrylab's JSONL trace format (v1): its events, a
// Writer that writes them safely from many goroutines and processes, a
// Reader that reads them back as a stream, and Discover, which finds the
// trace files of run folders, globs and standard input. The analysis of
// traces is package trace/analyze.
//
// Every line of a trace is one JSON object:
//
//	{"v":1,"ts":"2026-11-21T10:00:00.123Z","type":"RetryAttempt","runId":"r-7f3a","payload":{...}}
//
// type and payload are required; ts (RFC 3339, UTC) and runId are written by
// retrylab and optional for readers. Unknown types are counted by readers,
// never fatal.
//
// # Layout
//
//   - event.go: the event types and their payloads; writer.go, observe.go:
//     the Writer and its observers (the metrics collector).
//   - reader.go: the Reader's lines (plain or gzip.go's gzip members, CRLF,
//     a last line without a newline), in constant memory; longline*.go read
//     a line longer than MaxLineBytes as a stream, to its bounded form.
//   - parse.go: one line's event (type, runId, ts, payload) picked out in
//     one scan without allocating; scan.go: the validating JSON scanner,
//     bounded in depth; internal/jsonval: the values (strings, integers,
//     bools) every reader of traces decodes the same way. ReadMembers hands
//     a payload's members to a reader of them during that one scan.
//   - label.go: how a string read from a trace is bounded (Label), the same
//     for a short line and a long one.
//   - discover.go, open.go: what to read, opened without ever blocking (a
//     FIFO nothing writes to is an error at once, standard input and pipes
//     are read in a goroutine a cancel abandons, internal/fileio).
//   - errors.go: a malformed line is a *LineError, reported by file:line and
//     skipped; a path that cannot be read is a *PathError whose Hint gives
//     the next step.
package trace
