package fault

import (
	"slices"
	"testing"
)

func TestToxicAttrValue(t *testing.T) {
	t.Parallel()
	names := func(typ string) []string {
		var out []string
		for k := range ToxicAttrs[typ] {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		typ, k   string
		v        any
		want     int64
		wantMsg  string
		wantHint string
	}{
		{"latency", "latency", 300, 300, "", ""},
		{"latency", "latancy", 300, 0, `unknown attribute "latancy" of a latency toxic`, "did you mean latency?"},
		{"latency", "zzzzzzzzz", 1, 0, `unknown attribute "zzzzzzzzz" of a latency toxic`, "a latency toxic takes jitter, latency"},
		{"noop", "x", 1, 0, `unknown attribute "x" of a noop toxic`, "a noop toxic takes no attributes"},
		{"bandwidth", "rate", 0, 0, "0 KB/s is out of range", "rate of a bandwidth toxic goes from 1 to 1099511627776 KB/s"},
		{"bandwidth", "rate", "fast", 0, "want a whole number of KB/s, got fast", "write a whole number of KB/s from 1 to 1099511627776"},
		{"slicer", "average_size", 64, 64, "", ""},
	}
	for _, tt := range tests {
		got, msg, hint := ToxicAttrValue(tt.typ, tt.k, tt.v, nil, ToxicAttrs[tt.typ], names(tt.typ))
		if got != tt.want || msg != tt.wantMsg || hint != tt.wantHint {
			t.Errorf("ToxicAttrValue(%s, %s, %v) = %d, %q, %q; want %d, %q, %q", tt.typ, tt.k, tt.v, got, msg, hint, tt.want, tt.wantMsg, tt.wantHint)
		}
	}
}
