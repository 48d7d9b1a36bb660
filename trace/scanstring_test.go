package trace

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// scanStringRef is the byte-at-a-time scan scanString replaces.
func scanStringRef(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			i++
		}
	}
	return 0, false
}

// TestScanStringSWAR: the word-at-a-time scan agrees with the byte loop on
// random strings dense in quotes, backslashes and bytes with the high bit
// set, at every length and offset around the 8-byte words.
func TestScanStringSWAR(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{'"', '\\', 'a', 0x80, 0xff, 0x22 ^ 0x80, 0x5c ^ 0x01, 0x00, 0x21, 0x23, 0x5b, 0x5d}
	for n := range 200000 {
		b := make([]byte, 1+rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		b[0] = '"'
		gotI, gotOK := scanString(b, 0)
		wantI, wantOK := scanStringRef(b, 0)
		if gotI != wantI || gotOK != wantOK {
			t.Fatalf("case %d: scanString(%q) = %d, %v; want %d, %v", n, b, gotI, gotOK, wantI, wantOK)
		}
	}
}

func BenchmarkScanString(b *testing.B) {
	s := []byte(`"2026-11-20T10:00:00.123Z","type":"ProviderRequestFinished"`)
	for b.Loop() {
		scanString(s, 0)
	}
}

// TestInternTypeKnown: every known type is interned (the same string, not
// a copy), whichever table finds it, and an unknown one is decoded.
func TestInternTypeKnown(t *testing.T) {
	t.Parallel()
	for _, k := range KnownTypes {
		got := internType([]byte(`"` + k + `"`))
		if got != k || unsafeData(got) != unsafeData(k) {
			t.Errorf("internType(%q) = %q, not the interned string", k, got)
		}
	}
	if got := internType([]byte(`"Custom\u0041"`)); got != "CustomA" {
		t.Errorf("unknown type = %q", got)
	}
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }
