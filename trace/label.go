// Labels: how a string read from a trace (a provider, a model, a run id)
// is bounded, the same way for a short line and for one read as a stream.

package trace

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"unicode/utf8"

	"github.com/retrylab/retrylab/trace/internal/jsonval"
)

// MaxLabelBytes is the longest label (provider, model, failure type, reason,
// from, to, run id, unknown type) kept as it is. A longer one is cut to its
// first bytes followed by "…" and 16 hex digits of its FNV-1a hash, so that
// distinct long values stay distinct while memory stays bounded.
const MaxLabelBytes = 256

// Label bounds s to MaxLabelBytes (see there): how every reader of traces
// names a provider, a model, a run or a type it counts, whatever the line.
func Label(s string) string {
	if len(s) <= MaxLabelBytes {
		return s
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	return cutLabel(s, h.Sum64())
}

// cutLabel is the label of a string longer than MaxLabelBytes whose first
// bytes s holds (at least MaxLabelBytes-18 of them) and whose FNV-1a hash
// is sum.
func cutLabel(s string, sum uint64) string {
	suffix := fmt.Sprintf("…%016x", sum)
	cut := min(MaxLabelBytes-len(suffix), len(s))
	for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}

// RawLabel is the Label of the raw contents of a JSON string (no quotes),
// as RawEvent.RunID holds them.
func RawLabel(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		if len(raw) <= MaxLabelBytes {
			return string(raw)
		}
		return Label(string(raw))
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	return Label(jsonval.String(q))
}
