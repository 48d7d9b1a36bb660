package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/internal/regfile"
	"github.com/retrylab/retrylab/otlp"
	"github.com/retrylab/retrylab/trace"
)

// traceInputs are the files trace analyze reads once OTLP/JSON is turned
// into trace v1 (otlpInputs).
type traceInputs struct {
	files []string
	// stdin and streams replace standard input and the pipes named (bash's
	// <(...)) whose first bytes were read to tell what they hold: they give
	// those bytes back in front of the rest.
	stdin   io.Reader
	streams map[string]io.Reader
	cleanup func()
}

// otlpInputs replaces each of files that holds OTLP/JSON (the exports a
// chaos run kept in otlp/, what an OpenTelemetry Collector's file exporter
// writes one export a line, a pretty-printed export, retrylab trace
// export's output) with a trace v1 file made of the client's account in it
// (package otlp's mappings; what trace export wrote, event for event), in
// a temporary folder, so that analyze counts its requests and retries like
// any trace. The caller calls cleanup when done. An input is told by its
// content, standard input and pipes as well as files: it starts with an
// object whose first key is resourceSpans, resourceLogs or
// resourceMetrics. With strict, a line or document that is not an export
// is a *trace.LineError.
func otlpInputs(ctx context.Context, files []string, strict bool, stderr io.Writer) (in traceInputs, err error) {
	in.cleanup = func() {}
	tmp := ""
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			in.cleanup()
			return traceInputs{cleanup: func() {}}, err
		}
		src, replay, err := sniffInput(ctx, f)
		if err != nil {
			in.cleanup()
			if ctx.Err() != nil { // an interrupt, not bad input
				return traceInputs{cleanup: func() {}}, fmt.Errorf("%s: %w", f, err)
			}
			return traceInputs{cleanup: func() {}}, trace.ReadError(f, err)
		}
		if src == nil { // trace v1
			in.files = append(in.files, f)
			switch {
			case replay == nil:
			case f == trace.StdinName:
				in.stdin = replay
			default:
				if in.streams == nil {
					in.streams = map[string]io.Reader{}
				}
				in.streams[f] = replay
			}
			continue
		}
		if tmp == "" {
			if tmp, err = os.MkdirTemp("", "retrylab-otlp-*"); err != nil {
				return traceInputs{cleanup: func() {}}, err
			}
			dir := tmp
			in.cleanup = func() { os.RemoveAll(dir) }
		}
		name := strings.TrimSuffix(filepath.Base(f), ".gz")
		if f == trace.StdinName {
			name = "stdin"
		}
		conv := filepath.Join(tmp, fmt.Sprintf("%04d-%s.jsonl", len(in.files), name))
		err = runCtx(ctx, func() error { defer src.Close(); return convertOTLP(f, src, conv, strict, stderr) })
		if err != nil {
			in.cleanup()
			if ctx.Err() != nil {
				err = fmt.Errorf("%s: %w", f, err)
			}
			return traceInputs{cleanup: func() {}}, err
		}
		in.files = append(in.files, conv)
	}
	return in, nil
}

// runCtx runs fn, returning early with ctx's cause when ctx is done (fn
// may be blocked reading a pipe; it is abandoned).
func runCtx(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("stopped reading: %w", context.Cause(ctx))
	}
}

// sniffInput reads the first bytes of path (standard input for "-"; a
// regular file, or a pipe that has a writer) to tell whether it holds
// OTLP/JSON. When it does, src reads it from its start, gunzipped; else
// src is nil, and replay, when not nil, reads what path gave from its
// first byte (standard input and pipes, whose bytes were taken). Other
// inputs (a device, a pipe without a writer) are left to trace analyze.
func sniffInput(ctx context.Context, path string) (src io.ReadCloser, replay io.Reader, err error) {
	var r io.ReadCloser
	if path == trace.StdinName {
		r = io.NopCloser(os.Stdin)
	} else {
		fi, err := os.Stat(path)
		if err != nil || fi.IsDir() {
			return nil, nil, nil // trace analyze says what is wrong
		}
		switch {
		case fi.Mode().IsRegular():
			r, err = regfile.Open(path)
		case fi.Mode()&fs.ModeNamedPipe != 0:
			r, err = regfile.OpenPipe(path)
		default:
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, nil
		}
	}
	var isOTLP bool
	err = runCtx(ctx, func() error {
		var err error
		isOTLP, replay, err = sniff(r)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if isOTLP {
		zr, err := maybeGunzip(replay)
		if err != nil {
			r.Close()
			return nil, nil, err
		}
		return readCloser{zr, r}, nil, nil
	}
	if f, ok := r.(*os.File); ok { // a regular file: trace analyze opens it again
		f.Close()
		return nil, nil, nil
	}
	return nil, readCloser{replay, r}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// maxSniff bounds the bytes read to tell OTLP/JSON from trace v1.
const maxSniff = 4 << 10

// sniff reads r (gunzipped when it starts as gzip does) until it can tell
// whether it holds OTLP/JSON, and returns a reader of r from its first
// byte.
func sniff(r io.Reader) (isOTLP bool, replay io.Reader, err error) {
	var rec bytes.Buffer
	tee := io.TeeReader(r, &rec)
	again := func() io.Reader { return io.MultiReader(bytes.NewReader(rec.Bytes()), r) }
	magic := make([]byte, 2)
	n, err := io.ReadFull(tee, magic)
	if err != nil { // empty, or one byte
		return false, again(), nil
	}
	var plain io.Reader = io.MultiReader(bytes.NewReader(magic[:n]), tee)
	if magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(io.MultiReader(bytes.NewReader(magic), tee))
		if err != nil {
			return false, again(), nil // trace analyze reports the gzip error
		}
		plain = zr
	}
	var head []byte
	buf := make([]byte, 512)
	for len(head) < maxSniff {
		n, err := plain.Read(buf)
		head = append(head, buf[:n]...)
		if yes, decided := looksOTLP(head); decided {
			return yes, again(), nil
		}
		if err != nil {
			break
		}
	}
	return false, again(), nil
}

// looksOTLP tells from the first bytes of an input whether it is
// OTLP/JSON: an object whose first key is resourceSpans, resourceLogs or
// resourceMetrics, whitespace anywhere between (pretty-printed); decided
// is false while b is too short to tell.
func looksOTLP(b []byte) (yes, decided bool) {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return false, false
	}
	if b[0] != '{' {
		return false, true
	}
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	if len(b) == 0 {
		return false, false
	}
	short := false
	for _, k := range []string{`"resourceSpans"`, `"resourceLogs"`, `"resourceMetrics"`} {
		if bytes.HasPrefix(b, []byte(k)) {
			return true, true
		}
		short = short || (len(b) < len(k) && strings.HasPrefix(k, string(b)))
	}
	return false, !short
}

// maybeGunzip gunzips r when it starts as gzip does.
func maybeGunzip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	if m, _ := br.Peek(2); len(m) == 2 && m[0] == 0x1f && m[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}

// maxOTLPLine bounds one export (a line, or a document spanning lines) of
// an OTLP/JSON input.
const maxOTLPLine = 64 << 20

// convertOTLP reads the OTLP/JSON exports of src (named name) and writes
// the account they give as trace v1 to dst, each request's runId its
// resource's service.instance.id (none: the file is the run), and the
// lines of a trace export as they were. A document that is not an export
// is noted on stderr and skipped, or with strict is a *trace.LineError; so
// are the mappings' notes (Account.Notes), and an input that gives no
// request says so.
func convertOTLP(name string, src io.Reader, dst string, strict bool, stderr io.Writer) error {
	var ps []otlp.Payload
	var at []otlp.Doc // where each of ps is in src
	docs, bad := 0, 0
	err := otlp.ReadJSON(src, maxOTLPLine, func(d otlp.Doc) error {
		docs++
		if d.Err == nil {
			ps = append(ps, d.Payload)
			at = append(at, otlp.Doc{Line: d.Line, EndLine: d.EndLine})
			return nil
		}
		bad++
		return docProblem(name, d, d.Err.Error(), "skipped", strict, stderr)
	})
	if err != nil {
		var le *trace.LineError
		if errors.As(err, &le) {
			return le
		}
		return trace.ReadError(name, err)
	}
	car := otlp.TraceLines(ps)
	for i, p := range car.Problems {
		if i == maxCarriedNotes && !strict {
			fmt.Fprintf(stderr, "note: %s\n", printable(fmt.Sprintf("%s: and %d more %s value(s) not read", name, len(car.Problems)-i, otlp.AttrEvent)))
			break
		}
		if err := docProblem(name, at[p.Payload], p.String(), "", strict, stderr); err != nil {
			return err
		}
	}
	if car.Mapped > 0 {
		fmt.Fprintf(stderr, "note: %s\n", printable(fmt.Sprintf("%s: %d span(s) and log record(s) of retrylab's export (scope %s, version trace/v1) read by the mappings, "+
			"not from their %s (none, one not read, or under a request span without one): requests, attempts, statuses, failure types and waits, "+
			"not the other events (docs/analyze.md)", name, car.Mapped, otlp.ExportScope, otlp.AttrEvent)))
	}
	if car.Dups > 0 {
		fmt.Fprintf(stderr, "note: %s\n", printable(fmt.Sprintf("%s: %d trace v1 line(s) received more than once (the same run, %s and line: an exporter's retry) counted once", name, car.Dups, otlp.AttrSeq)))
	}
	acc := otlp.Read(otlp.Collect(car.Rest))
	for _, n := range acc.Notes { // what the mappings received but did not read
		fmt.Fprintf(stderr, "note: %s\n", printable(name+": "+n))
	}
	var buf bytes.Buffer
	requests := len(acc.Requests)
	for _, l := range car.Lines {
		buf.Write(append(l, '\n'))
		if bytes.Contains(l, []byte(`"type":"ProviderRequestFinished"`)) {
			requests++
		}
	}
	for _, ev := range acc.Events("", verify.ClassifyReported) {
		line, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		buf.Write(append(line, '\n'))
	}
	if requests == 0 {
		fmt.Fprintf(stderr, "note: %s\n", printable(noRequestsNote(name, docs, bad, acc.Items+car.Items)))
	}
	return os.WriteFile(dst, buf.Bytes(), 0o600)
}

// maxCarriedNotes bounds the notes on carried lines not read, per input.
const maxCarriedNotes = 10

// docProblem reports what is wrong with document d of input name: with
// strict a *trace.LineError, else a note on stderr (what was done in
// parentheses when not empty).
func docProblem(name string, d otlp.Doc, reason, done string, strict bool, stderr io.Writer) error {
	at := fmt.Sprint(d.Line)
	if d.EndLine > d.Line {
		at = fmt.Sprintf("%d-%d", d.Line, d.EndLine)
	}
	if strict {
		if d.EndLine > d.Line {
			reason += " (lines " + at + ")"
		}
		return &trace.LineError{File: name, Line: d.Line, Reason: reason}
	}
	if done != "" {
		reason += " (" + done + ")"
	}
	fmt.Fprintf(stderr, "note: %s\n", printable(fmt.Sprintf("%s:%s: %s", name, at, reason)))
	return nil
}

// noRequestsNote says that an OTLP/JSON input gave no request, and why
// that may be.
func noRequestsNote(name string, docs, bad, items int) string {
	return fmt.Sprintf("%s: OTLP/JSON, %d document(s) (%d not an export), %d span(s) and log record(s): no provider request in them "+
		"(read by the mappings %s; unknown telemetry is counted as nothing)",
		name, docs, bad, items, strings.Join(otlp.MappingNames(), ", "))
}
