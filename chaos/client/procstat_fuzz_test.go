package client

import "testing"

// FuzzParseStatCPU: any /proc/PID/stat text is read without panicking; what
// is read is never negative, and its group is the one parseStatGroup reads.
func FuzzParseStatCPU(f *testing.F) {
	for _, s := range []string{
		"42 (node) S 1 40 40 0 -1 4194560 100 0 0 0 7 3 2 1 20 0 11 0",
		"42 (a) (b c) R 1 41 41 0 -1 0 0 0 0 0 100 50 0 0 20 0",
		"42 (x) S 1 40 40 0 -1 0 0 0 0 0 7",
		"42 (x) S 1 40 40 0 -1 0 0 0 0 0 7 -3 0 0",
		")", "", "1 () Z",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, own, reaped, ok := parseStatCPU(b)
		if !ok {
			return
		}
		if own < 0 || reaped < 0 {
			t.Errorf("parseStatCPU(%q) read negative times %d, %d", b, own, reaped)
		}
		if _, g2, ok2 := parseStatGroup(b); !ok2 || g2 != g {
			t.Errorf("parseStatCPU(%q) read group %d, parseStatGroup %d (%v)", b, g, g2, ok2)
		}
	})
}
