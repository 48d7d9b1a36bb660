package trace

import (
	"bytes"
	"cmp"
	"unicode/utf8"

	"github.com/retrylab/retrylab/trace/internal/jsonval"
)

// labelHash computes the label of a string from its raw JSON contents,
// given in pieces of any size: escapes and UTF-8 sequences may straddle
// them. It decodes as jsonval.String does, keeping the first bytes and the
// FNV-1a hash of the whole.
type labelHash struct {
	pend   []byte // raw bytes not decoded yet: an escape that may go on
	dec    []byte
	carry  []byte // decoded bytes that may begin a UTF-8 sequence
	prefix []byte
	sum    uint64
	n      int64
	chunk  int // decode once pend holds this many bytes; 0: 64 KiB (tests set less)
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func (h *labelHash) reset() {
	h.pend, h.carry, h.prefix = h.pend[:0], h.carry[:0], h.prefix[:0]
	h.sum, h.n = fnvOffset, 0
}

func (h *labelHash) write(raw []byte) {
	h.pend = append(h.pend, raw...)
	if len(h.pend) < cmp.Or(h.chunk, 64<<10) {
		return
	}
	cut := escapeCut(h.pend)
	h.decode(h.pend[:cut], false)
	h.pend = h.pend[:copy(h.pend, h.pend[cut:])]
}

// escapeCut is the end of the escapes of raw that can be decoded now: an
// escape needs up to 12 bytes to be known.
func escapeCut(raw []byte) int {
	i := 0
	for {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return len(raw)
		}
		i += j
		if len(raw)-i < 12 {
			return i
		}
		_, n := jsonval.EscapeUnit(raw[i:])
		i += n
	}
}

// decode decodes raw (whole escapes) and adds what it stands for.
func (h *labelHash) decode(raw []byte, final bool) {
	if n := len(h.carry) + len(raw); cap(h.dec) < n { // escapes only shrink
		h.dec = make([]byte, 0, n+n/4)
	}
	h.dec = jsonval.AppendUnescaped(append(h.dec[:0], h.carry...), raw)
	d := h.dec
	h.carry = h.carry[:0]
	if !final {
		// A UTF-8 sequence begun in the last 3 bytes may end in the next piece.
		for i := len(d) - 1; i >= 0 && i >= len(d)-3; i-- {
			if utf8.RuneStart(d[i]) {
				if !utf8.FullRune(d[i:]) {
					h.carry = append(h.carry, d[i:]...)
					d = d[:i]
				}
				break
			}
		}
	}
	if utf8.Valid(d) {
		h.add(d)
		return
	}
	// Invalid UTF-8 becomes U+FFFD, byte by byte, as jsonval.ValidString does.
	for len(d) > 0 {
		i := 0
		for i < len(d) {
			if d[i] < utf8.RuneSelf {
				i++
				continue
			}
			r, n := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		h.add(d[:i])
		if i < len(d) {
			h.add(replacementChar)
			i++
		}
		d = d[i:]
	}
}

var replacementChar = []byte("\uFFFD")

func (h *labelHash) add(b []byte) {
	if n := MaxLabelBytes + 4 - len(h.prefix); n > 0 {
		h.prefix = append(h.prefix, b[:min(n, len(b))]...)
	}
	sum := h.sum
	for _, c := range b {
		sum = (sum ^ uint64(c)) * fnvPrime
	}
	h.sum = sum
	h.n += int64(len(b))
}

// label is the label of the string written so far, which ends here.
func (h *labelHash) label() string {
	h.decode(h.pend, true)
	h.pend = h.pend[:0]
	if h.n <= MaxLabelBytes {
		return string(h.prefix)
	}
	return cutLabel(string(h.prefix), h.sum)
}

// appendQuoted appends s (valid UTF-8) as a JSON string that decodes to s.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
