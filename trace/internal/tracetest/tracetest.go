// Package tracetest makes the inputs of the tests of trace and its
// analyzer: traces given as pieces, some of them patterns repeated to
// megabytes that are generated as they are read, never stored, and gzip
// members.
package tracetest

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/trace/internal/jsonval"
)

// Lines is a trace given as pieces: text (a string), or a Rep.
type Lines []any

// Rep is a pattern repeated to n bytes (rounded down to whole patterns, so
// that escapes stay whole).
type Rep struct {
	pat string
	n   int64
}

// Repeat is pat repeated to n bytes.
func Repeat(pat string, n int64) Rep { return Rep{pat, n} }

// Reader reads the trace, generating the repeats as it goes.
func (g Lines) Reader() io.Reader {
	var rs []io.Reader
	for _, p := range g {
		switch p := p.(type) {
		case string:
			rs = append(rs, strings.NewReader(p))
		case Rep:
			rs = append(rs, &repeatReader{pat: []byte(p.pat), n: p.n / int64(len(p.pat)) * int64(len(p.pat))})
		}
	}
	return io.MultiReader(rs...)
}

// Text is the decoded contents of a Rep (for the label a test expects).
func (r Rep) Text() string {
	return jsonval.Unescape([]byte(strings.Repeat(r.pat, int(r.n/int64(len(r.pat))))))
}

// Concat is g followed by h.
func (g Lines) Concat(h Lines) Lines { return append(append(Lines{}, g...), h...) }

// TrimNewline drops the '\n' that ends g.
func (g Lines) TrimNewline() Lines {
	g = append(Lines{}, g...)
	g[len(g)-1] = strings.TrimSuffix(g[len(g)-1].(string), "\n")
	return g
}

// CRLF ends g in "\r\n" instead of '\n'.
func (g Lines) CRLF() Lines {
	g = append(Lines{}, g...)
	g[len(g)-1] = strings.TrimSuffix(g[len(g)-1].(string), "\n") + "\r\n"
	return g
}

// repeatReader yields pat over and over, n bytes in all, without holding
// them: the long lines of these tests are generated, never stored.
type repeatReader struct {
	pat []byte
	n   int64
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.n > 0 {
		c := copy(p[n:min(len(p), n+int(min(r.n, int64(len(r.pat)-r.off))))], r.pat[r.off:])
		n += c
		r.n -= int64(c)
		r.off = (r.off + c) % len(r.pat)
	}
	return n, nil
}

// Gzipped is s as one gzip member.
func Gzipped(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, s)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
