package mock

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// TestConcurrentAttemptsNotSerialisedWithoutToxics: an attempt's response
// waits for the proxy's toxics to be switched only when toxics are at stake
// (its own, or an earlier attempt's still on the proxy). It used to wait for
// the previous attempt to end whatever the faults, so concurrent success
// streams went out one at a time: 500 concurrent streams through the
// embedded Toxiproxy made 1,500 streams/s with a p99 time to first byte of
// 380 ms, against 3,100 and 180 ms without the wait (bench/mockload).
func TestConcurrentAttemptsNotSerialisedWithoutToxics(t *testing.T) {
	drop := scenario.Fault{Kind: fault.Drop{AfterBytes: 10}}
	reset := scenario.Fault{Kind: fault.Reset{}}
	raw := scenario.Fault{Kind: fault.Toxics{{Type: "latency", Attributes: map[string]any{"latency": 100}}}}
	status := scenario.Fault{Kind: fault.Status{Status: 529}}
	for _, tc := range []struct {
		name   string
		faults []scenario.Fault
		ready  int // the attempt whose toxics are switched in
		n      int // the attempt that waits
		want   time.Duration
	}{
		{"no faults, attempt 2 while 1 is open", nil, 1, 2, 0},
		{"no faults, far ahead", nil, 1, 500, 0},
		{"status faults only", []scenario.Fault{status, status}, 1, 3, 0},
		{"after the last toxic attempt was switched out", []scenario.Fault{drop, status}, 2, 3, 0},
		{"its own reset must be on the proxy first", []scenario.Fault{status, reset}, 1, 2, readyWait},
		{"its own raw toxics must be on the proxy first", []scenario.Fault{raw}, 0, 1, readyWait},
		{"its own drop must not be removed by the previous switch", []scenario.Fault{status, drop}, 1, 2, readyWait},
		{"an earlier drop still on the proxy", []scenario.Fault{drop}, 1, 3, readyWait},
		{"an earlier reset still on the proxy", []scenario.Fault{status, reset, status}, 1, 3, readyWait},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := &Env{cfg: EnvConfig{Scenario: &scenario.Scenario{Name: "ready", Attempts: tc.faults}}, done: make(chan struct{}), ready: tc.ready}
				e.cond = sync.NewCond(&e.mu)
				start := time.Now()
				e.waitReady(tc.n)
				if got := time.Since(start); got != tc.want {
					t.Errorf("attempt %d with attempt %d switched in waited %v, want %v", tc.n, tc.ready, got, tc.want)
				}
			})
		})
	}
}
