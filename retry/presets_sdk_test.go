package retry

import (
	"testing"
	"time"
)

// TestSDKPresetRetryAfterRule pins the Retry-After rule the SDK presets
// model, the Python SDKs': a value is used when 0 < value ≤ 60s, else the
// backoff is (the Node SDKs use other values too; see the doc comments).
func TestSDKPresetRetryAfterRule(t *testing.T) {
	backoffLo, backoffHi := 375*time.Millisecond, 500*time.Millisecond // 0.5s × (1 − 0.25·rand)
	tests := []struct {
		name   string
		ra     time.Duration
		lo, hi time.Duration
	}{
		{"0: backoff", 0, backoffLo, backoffHi},
		{"1.5s: used", 1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"60s: used", 60 * time.Second, 60 * time.Second, 60 * time.Second},
		{"61s: backoff", 61 * time.Second, backoffLo, backoffHi},
	}
	for _, preset := range []string{"anthropic-sdk", "openai-sdk"} {
		p, err := Preset(preset)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			t.Run(preset+"/"+tt.name, func(t *testing.T) {
				lo, hi, ok := p.Envelope(RateLimit, 1, tt.ra, true)
				if !ok || lo != tt.lo || hi != tt.hi {
					t.Errorf("Envelope(rate_limit, 1, Retry-After %v) = [%v, %v] ok=%v, want [%v, %v]", tt.ra, lo, hi, ok, tt.lo, tt.hi)
				}
			})
		}
	}
}
