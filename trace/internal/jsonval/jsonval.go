// Package jsonval decodes and writes the JSON values of a trace line the
// way every retrylab reader of traces agrees on: the Reader (event types,
// long lines' labels), the analyzer (payload members) and the metrics
// collector read a string, an integer or a bool from the same raw token
// with the same leniency. The functions take raw tokens (a string's quotes
// included, unless the name says raw contents) and never allocate on the
// common path.
package jsonval

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// String returns the Go string of a JSON string token (quotes included).
func String(val []byte) string {
	if len(val) < 2 || val[0] != '"' {
		return ""
	}
	return Unescape(val[1 : len(val)-1])
}

// Unescape decodes the escapes of the raw contents of a JSON string,
// leniently: every well-formed escape is decoded (a surrogate pair to its
// rune, a lone surrogate to U+FFFD, as encoding/json does), whatever else
// the string holds. Raw control characters and invalid UTF-8, which
// encoding/json refuses, are kept as they are (the printers make them
// visible), and a malformed escape ("\x", "\u12") is kept as written.
// Decoding all the escapes matters: a key written "\u0073k-ant-..." next
// to a raw control character must reach the redactor as "sk-ant-...".
func Unescape(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return ValidString(raw)
	}
	return ValidString(AppendUnescaped(make([]byte, 0, len(raw)), raw))
}

// AppendUnescaped appends to out the bytes raw stands for, escapes decoded
// as Unescape says (without its UTF-8 repair).
func AppendUnescaped(out, raw []byte) []byte {
	for i := bytes.IndexByte(raw, '\\'); i >= 0; i = bytes.IndexByte(raw, '\\') {
		out = append(out, raw[:i]...)
		raw = raw[i:]
		r, n := EscapeUnit(raw)
		if n == 0 {
			break
		}
		if r < 0 { // not an escape JSON knows: keep it as written
			out = append(out, raw[:n]...)
		} else {
			out = utf8.AppendRune(out, r)
		}
		raw = raw[n:]
	}
	return append(out, raw...)
}

// EscapeUnit decodes the escape that raw starts with (raw[0] == '\\'): the
// rune it stands for (-1: none, keep its n bytes as written) and its length
// n, 0 for a lone backslash at the end. A \uXXXX that is a surrogate takes
// the \uXXXX after it when the two make a pair (n == 12); alone it is
// U+FFFD.
func EscapeUnit(raw []byte) (rune, int) {
	if len(raw) < 2 {
		return -1, 0
	}
	if c, ok := simpleEscapes[raw[1]]; ok {
		return rune(c), 2
	}
	r, ok := rune(0), false
	if raw[1] == 'u' {
		r, ok = hex4(raw[2:])
	}
	if !ok {
		return -1, 2
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if len(raw) >= 12 && raw[6] == '\\' && raw[7] == 'u' {
		if r2, ok2 := hex4(raw[8:]); ok2 {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12
			}
		}
	}
	return utf8.RuneError, 6
}

// ValidString is b as a string with each byte of invalid UTF-8 replaced by
// U+FFFD, as encoding/json decodes it.
func ValidString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out)
}

// simpleEscapes are JSON's one-character escapes and what they stand for.
var simpleEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 returns the value of the 4 hex digits that b starts with.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Int returns the value of a JSON number token, or of a numeric
// string, rounded to an int64.
func Int(val []byte) (int64, bool) {
	if len(val) >= 2 && val[0] == '"' {
		val = val[1 : len(val)-1]
	}
	if n, ok := smallInt(val); ok {
		return n, true
	}
	if n, err := strconv.ParseInt(string(val), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(val), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(f) {
		return 0, false
	}
	// Converting a float64 outside int64's range is implementation-defined
	// (1e20 became math.MinInt64 on amd64), so clamp first.
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64, true
	case f <= math.MinInt64:
		return math.MinInt64, true
	}
	if f < 0 {
		return int64(f - 0.5), true
	}
	return int64(f + 0.5), true
}

// smallInt parses an optional '-' and 1 to 18 decimal digits (no overflow
// possible), the form of nearly every number in a trace; anything else is
// left to strconv.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// Bool reports whether the token is the literal true.
func Bool(val []byte) bool { return len(val) == 4 && string(val) == "true" }

// AppendString appends s as a JSON string, escaping what JSON requires
// and nothing more (no HTML escapes, as the Writer's encoder is set up).
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(s) // a string always encodes
			return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
