package provider

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	type result struct {
		D   time.Duration
		Raw string
		OK  bool
	}
	tests := []struct {
		name    string
		ms, sec string // "" = header absent
		want    result
	}{
		{"absent", "", "", result{0, "", false}},
		{"int seconds", "", "2", result{2 * time.Second, "2", true}},
		{"zero means at once", "", "0", result{0, "0", true}},
		{"fraction", "", "1.5", result{1500 * time.Millisecond, "1.5", true}},
		{"spaces trimmed, raw kept", "", " 3 ", result{3 * time.Second, " 3 ", true}},
		{"HTTP-date", "", "Sat, 21 Nov 2026 10:00:05 GMT", result{5 * time.Second, "Sat, 21 Nov 2026 10:00:05 GMT", true}},
		{"HTTP-date in the past is at once", "", "Sat, 21 Nov 2026 09:00:00 GMT", result{0, "Sat, 21 Nov 2026 09:00:00 GMT", true}},
		{"RFC 850 date", "", "Saturday, 21-Nov-26 10:00:10 GMT", result{10 * time.Second, "Saturday, 21-Nov-26 10:00:10 GMT", true}},
		{"garbage", "", "soon", result{0, "soon", false}},
		{"negative", "", "-1", result{0, "-1", false}},
		{"NaN", "", "NaN", result{0, "NaN", false}},
		{"Inf word", "", "Inf", result{0, "Inf", false}},
		{"hex rejected", "", "0x10", result{0, "0x10", false}},
		{"huge capped", "", "1e300", result{maxRetryAfter, "1e300", true}},
		{"ms first", "250", "7", result{250 * time.Millisecond, "7", true}},
		{"ms fraction", "1.5", "", result{1500 * time.Microsecond, "", true}},
		{"ms zero", "0", "9", result{0, "9", true}},
		{"bad ms falls back to seconds", "x", "4", result{4 * time.Second, "4", true}},
		{"bad ms alone", "x", "", result{0, "", false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.ms != "" {
				h.Set("retry-after-ms", tt.ms)
			}
			if tt.sec != "" {
				h.Set("retry-after", tt.sec)
			}
			var got result
			got.D, got.Raw, got.OK = ParseRetryAfter(h, now)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseRetryAfter() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"2", "0", "1.5", "-1", "NaN", "1e309", "Sat, 21 Nov 2026 10:00:05 GMT", "", " 7", "1e-400"} {
		f.Add(s, "")
		f.Add("", s)
	}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ms, sec string) {
		h := http.Header{}
		if ms != "" {
			h["Retry-After-Ms"] = []string{ms}
		}
		if sec != "" {
			h["Retry-After"] = []string{sec}
		}
		d, raw, ok := ParseRetryAfter(h, now)
		if raw != sec {
			t.Fatalf("raw = %q, want the header as sent %q", raw, sec)
		}
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("d = %v out of [0, %v]", d, maxRetryAfter)
		}
		if !ok && d != 0 {
			t.Fatalf("ok = false with d = %v", d)
		}
		if ms == "" && sec == "" && ok {
			t.Fatal("ok without headers")
		}
	})
}
