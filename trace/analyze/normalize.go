package analyze

import (
	"strings"
	"unicode/utf8"
)

// MaxMessageBytes bounds a normalised message; a longer one is cut at a
// rune boundary and ends in "…".
const MaxMessageBytes = 200

// NormalizeMessage turns an error message into its template, so that ids,
// numbers and quoted values do not split one message into thousands:
//
//   - a quoted value ('…', "…" or `…`) becomes "<…>";
//   - a word (a run of letters, digits, '_', '-', '.') that is a UUID
//     becomes <uuid>; one of 8 or more hex digits with at least one digit,
//     or 0x followed by hex digits, becomes <hex>; a number, with an
//     optional unit of up to 3 letters (429, 1.5, 30s, 500ms), becomes <n>
//     followed by the unit; any other word holding a digit (req_01HX9,
//     r-7f3a) becomes <id>; other words stay;
//   - runs of white space become one space, and the ends are trimmed;
//   - the result is cut to MaxMessageBytes.
//
// An empty message is "(empty)".
func NormalizeMessage(s string) string {
	var b strings.Builder
	b.Grow(min(len(s), MaxMessageBytes+8))
	space := false
	for i := 0; i < len(s) && b.Len() < MaxMessageBytes; {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = b.Len() > 0
			i++
			continue
		case c == '"' || c == '\'' || c == '`':
			if j := strings.IndexByte(s[i+1:], c); j >= 0 && (c != '\'' || i == 0 || !isWordByte(s[i-1])) {
				flushSpace(&b, &space)
				b.WriteString(`"<…>"`)
				i += j + 2
				continue
			}
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			flushSpace(&b, &space)
			b.WriteString(normWord(s[i:j]))
			i = j
			continue
		}
		flushSpace(&b, &space)
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError) // invalid UTF-8 becomes U+FFFD
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	out := b.String()
	if len(out) > MaxMessageBytes {
		cut := MaxMessageBytes
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + "…"
	}
	if out == "" {
		return "(empty)"
	}
	return out
}

func flushSpace(b *strings.Builder, space *bool) {
	if *space {
		b.WriteByte(' ')
		*space = false
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// normWord normalises one word (see NormalizeMessage).
func normWord(w string) string {
	// A word's trailing dots are punctuation: "failed." stays "failed.",
	// "after 3." is "<n>.".
	core := strings.TrimRight(w, ".")
	tail := w[len(core):]
	if !strings.ContainsAny(core, "0123456789") {
		return w
	}
	if isUUID(core) {
		return "<uuid>" + tail
	}
	if len(core) > 2 && (core[:2] == "0x" || core[:2] == "0X") && allHex(core[2:]) {
		return "<hex>" + tail
	}
	if len(core) >= 8 && allHex(core) {
		return "<hex>" + tail
	}
	// A number, with an optional sign-free decimal part and a unit of up to 3 letters.
	i := 0
	for i < len(core) && (isDigit(core[i]) || core[i] == '.' && i > 0) {
		i++
	}
	if i > 0 && isDigit(core[0]) {
		unit := core[i:]
		if len(unit) <= 3 && allLetters(unit) {
			return "<n>" + unit + tail
		}
	}
	return "<id>" + tail
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

func allLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// isUUID reports whether s is 8-4-4-4-12 hex digits.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}
