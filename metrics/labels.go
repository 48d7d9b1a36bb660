package metrics

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Other is the label value of every value past a label's cap.
const Other = "other"

// maxLabelBytes is the longest label value kept; longer ones are cut.
const maxLabelBytes = 128

// capped bounds the distinct values of one label: the first max values
// seen are kept, every later new one is Other. It is safe for concurrent
// use.
type capped struct {
	mu   sync.Mutex
	max  int
	seen map[string]bool
}

func newCapped(max int) *capped { return &capped{max: max, seen: map[string]bool{}} }

// value returns v made a valid, short label value, or Other once max
// distinct values are taken.
func (c *capped) value(v string) string {
	v = clean(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[v] {
		return v
	}
	if len(c.seen) >= c.max {
		return Other
	}
	c.seen[v] = true
	return v
}

// clean makes v valid UTF-8 (client_golang rejects anything else) of at
// most maxLabelBytes.
func clean(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	if len(v) <= maxLabelBytes {
		return v
	}
	cut := maxLabelBytes
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut]
}
