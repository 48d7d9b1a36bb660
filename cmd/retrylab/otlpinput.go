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
	"os"
	"path/filepath"
	"strings"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/internal/regfile"
	"github.com/retrylab/retrylab/otlp"
	"github.com/retrylab/retrylab/trace"
)

// otlpInputs replaces each of files that holds OTLP/JSON (the exports a
// chaos run kept in otlp/, or what an OpenTelemetry Collector's file
// exporter writes: one export a line) with a trace v1 file made of the
// client's account in it (package otlp's mappings), in a temporary folder,
// so that analyze counts its requests and retries like any trace. The
// caller calls cleanup when done. A file is told by its content: its first
// line is an object whose first key is resourceSpans, resourceLogs or
// resourceMetrics.
func otlpInputs(ctx context.Context, files []string, stderr io.Writer) (out []string, cleanup func(), err error) {
	cleanup = func() {}
	tmp := ""
	for _, f := range files {
		if f == trace.StdinName || !isOTLPFile(f) {
			out = append(out, f)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, cleanup, err
		}
		if tmp == "" {
			if tmp, err = os.MkdirTemp("", "retrylab-otlp-*"); err != nil {
				return nil, cleanup, err
			}
			dir := tmp
			cleanup = func() { os.RemoveAll(dir) }
		}
		conv := filepath.Join(tmp, fmt.Sprintf("%04d-%s.jsonl", len(out), strings.TrimSuffix(filepath.Base(f), ".gz")))
		if err := convertOTLP(f, conv, stderr); err != nil {
			cleanup()
			return nil, func() {}, err
		}
		out = append(out, conv)
	}
	return out, cleanup, nil
}

// isOTLPFile sniffs the start of path for OTLP/JSON. Only a regular file
// is sniffed: a FIFO or bash's <(...) named on the command line is read
// once, as a trace (the bytes sniffed were lost to it, and an open of a
// FIFO nothing writes to blocked here, past Ctrl-C), and a device may
// never end.
func isOTLPFile(path string) bool {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return false
	}
	defer closeFn()
	head := make([]byte, 512)
	n, _ := io.ReadFull(r, head)
	b := bytes.TrimLeft(head[:n], " \t\r\n")
	for _, k := range []string{`{"resourceSpans"`, `{"resourceLogs"`, `{"resourceMetrics"`} {
		if bytes.HasPrefix(b, []byte(k)) {
			return true
		}
	}
	return false
}

func openMaybeGzip(path string) (io.Reader, func(), error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return f, func() { f.Close() }, nil
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return zr, func() { zr.Close(); f.Close() }, nil
}

// maxOTLPLine bounds one export line of an OTLP/JSON file.
const maxOTLPLine = 64 << 20

// convertOTLP reads the OTLP/JSON exports of src, one a line (a line that
// does not decode is noted on stderr and skipped), and writes the account
// they give as trace v1 to dst, each request's runId its resource's
// service.instance.id (none: the file is the run).
func convertOTLP(src, dst string, stderr io.Writer) error {
	r, closeFn, err := openMaybeGzip(src)
	if err != nil {
		return trace.ReadError(src, err)
	}
	defer closeFn()
	var ps []otlp.Payload
	br := bufio.NewReaderSize(r, 64<<10)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(b) > maxOTLPLine {
			return fmt.Errorf("%s:%d: an OTLP/JSON export over %d bytes", src, line, maxOTLPLine)
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			p, perr := otlp.ParseJSON(t)
			if perr != nil {
				fmt.Fprintf(stderr, "note: %s\n", printable(fmt.Sprintf("%s:%d: %v (line skipped)", src, line, perr)))
			} else {
				ps = append(ps, p)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return trace.ReadError(src, err)
		}
	}
	acc := otlp.Read(otlp.Collect(ps))
	var buf bytes.Buffer
	for _, ev := range acc.Events("", chaos.ClassifyReported) {
		line, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		buf.Write(append(line, '\n'))
	}
	return os.WriteFile(dst, buf.Bytes(), 0o600)
}
