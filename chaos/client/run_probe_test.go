package client

import (
	"testing"
	"time"
)

// TestProbeLateness checks lateness's window: both ends included, samples
// outside it ignored. lateness binary-searches the window (samples are in
// time order); the cases are also checked against a scan of every sample,
// the behaviour it replaced.
func TestProbeLateness(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	// Samples every 5ms; each one's lateness is distinct so the window's
	// bounds show in the result. Two share an instant.
	p := &Probe{samples: []probeSample{
		{at(0), ms(1)}, {at(5), ms(9)}, {at(10), ms(2)}, {at(10), ms(8)},
		{at(15), ms(3)}, {at(20), ms(7)}, {at(25), ms(4)},
	}}
	scan := func(from, to time.Time) time.Duration {
		var m time.Duration
		for _, s := range p.samples {
			if !s.at.Before(from) && !s.at.After(to) && s.late > m {
				m = s.late
			}
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		from, to int
		want     time.Duration
	}{
		{"everything", -10, 100, ms(9)},
		{"from is included", 5, 5, ms(9)},
		{"to is included", 1, 5, ms(9)},
		{"just after a sample excludes it", 6, 100, ms(8)},
		{"just before a sample excludes it", 6, 9, 0},
		{"both samples at one instant", 10, 10, ms(8)},
		{"from the first sample", 0, 4, ms(1)},
		{"to the last sample", 21, 25, ms(4)},
		{"before every sample", -10, -1, 0},
		{"after every sample", 26, 100, 0},
		{"from after to", 20, 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to := at(tc.from), at(tc.to)
			if got := p.Lateness(from, to); got != tc.want {
				t.Errorf("lateness(%d, %d) = %s, want %s", tc.from, tc.to, got, tc.want)
			}
			if got := scan(from, to); got != tc.want {
				t.Errorf("scan(%d, %d) = %s, want %s (test case is wrong)", tc.from, tc.to, got, tc.want)
			}
		})
	}
	for from := -1; from <= 26; from++ {
		for to := -1; to <= 26; to++ {
			if got, want := p.Lateness(at(from), at(to)), scan(at(from), at(to)); got != want {
				t.Errorf("lateness(%d, %d) = %s, scan = %s", from, to, got, want)
			}
		}
	}
	var none *Probe
	if got := none.Lateness(t0, at(100)); got != 0 {
		t.Errorf("nil probe lateness = %s, want 0", got)
	}
	if got := (&Probe{}).Lateness(t0, at(100)); got != 0 {
		t.Errorf("empty probe lateness = %s, want 0", got)
	}
}
