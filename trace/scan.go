// JSON scanning: the validating scanner of one line's values, bounded in
// depth, with its word-at-a-time string scan.

package trace

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// maxDepth bounds how deep the arrays and objects of a line's members
// nest: deeper, the line is malformed (tooDeep), so that no line can
// exhaust the stack of its reader.
const maxDepth = 512

// tooDeep is the reason of a line nested deeper than maxDepth: valid JSON
// perhaps, but not read.
var tooDeep = fmt.Sprintf("nested deeper than %d levels (retrylab's bound on the arrays and objects of a line)", maxDepth)

// deepEnd is what scanValue and its kin return as the end of a value
// nested deeper than maxDepth (otherwise 0 when it is not JSON).
const deepEnd = -1

// failEnd is the end a scan gives back when a value inside it failed
// with end.
func failEnd(end int) (int, bool) {
	if end == deepEnd {
		return deepEnd, false
	}
	return 0, false
}

// badValue is the reason of a member whose value failed to scan with end.
func badValue(end int) string {
	if end == deepEnd {
		return tooDeep
	}
	return "invalid JSON"
}

func skipWS(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scanObject scans the object starting at b[i] == '{', calling fn (if not
// nil) with each member's raw key contents and raw value. It returns the
// index after the closing brace.
func scanObject(b []byte, i, depth int, fn func(key, val []byte)) (int, bool) {
	if depth > maxDepth {
		return deepEnd, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		kend, ok := scanString(b, i)
		if !ok {
			return 0, false
		}
		key := b[i+1 : kend-1]
		i = skipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipWS(b, i+1)
		vend, ok := scanValue(b, i, depth+1)
		if !ok {
			return failEnd(vend)
		}
		if fn != nil {
			fn(key, b[i:vend])
		}
		i = skipWS(b, vend)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

func scanArray(b []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return deepEnd, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		end, ok := scanValue(b, i, depth+1)
		if !ok {
			return failEnd(end)
		}
		i = skipWS(b, end)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// scanValue returns the index just after the JSON value starting at b[i].
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{':
		return scanObject(b, i, depth, nil)
	case c == '[':
		return scanArray(b, i, depth)
	case c == 't':
		return scanLit(b, i, "true")
	case c == 'f':
		return scanLit(b, i, "false")
	case c == 'n':
		return scanLit(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	}
	return 0, false
}

func scanLit(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return 0, false
}

func scanNumber(b []byte, i int) (int, bool) {
	start := i
	if b[i] == '-' {
		i++
	}
	digits := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
		digits++
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			d++
		}
		if d == 0 {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			d++
		}
		if d == 0 {
			return 0, false
		}
	}
	return i, i > start
}

// scanString returns the index after the closing quote of the string at b[i].
func scanString(b []byte, i int) (int, bool) {
	i++
	// Eight bytes at a time (SWAR): a word holds a quote or a backslash when
	// one of its bytes XORed with it is zero.
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		m := hasZero(x^quotes) | hasZero(x^backslashes)
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) / 8
		if b[i] == '"' {
			return i + 1, true
		}
		i += 2 // a backslash: skip the escaped character
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			i++
		}
	}
	return 0, false
}

const (
	quotes      = 0x2222222222222222 // '"' in every byte
	backslashes = 0x5C5C5C5C5C5C5C5C // '\\' in every byte
	lows        = 0x0101010101010101
	highs       = 0x8080808080808080
)

// hasZero has the high bit set in the lowest zero byte of x (and possibly
// in higher bytes after it, which callers ignore: they take the lowest).
func hasZero(x uint64) uint64 { return (x - lows) &^ x & highs }
