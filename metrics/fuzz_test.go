package metrics_test

import (
	"encoding/json"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/retrylab/retrylab/metrics"
	"github.com/retrylab/retrylab/trace"
)

// FuzzObserveEvent: any payload of any event type is counted or ignored,
// never a panic, and what the Collector exports stays valid (UTF-8 label
// values, consistent families) and within its label cap.
func FuzzObserveEvent(f *testing.F) {
	f.Add(trace.TypeProviderRequestFinished, `{"provider":"a","model":"m","retries":"2","success":true}`, "r")
	f.Add(trace.TypeRetryAttempt, `{"provider":"\xff","failureType":"x","status":1e30,"willRetry":true,"delayMs":-1e99}`, "")
	f.Add(trace.TypeRunEscalated, `{"from":"L2","to":null,"reason":7}`, "r")
	f.Add(trace.TypeRepairAttempted, `{"iteration":"9223372036854775808"}`, "r")
	f.Add(trace.TypeRepairAttempted, `[1,2]`, "r")
	f.Fuzz(func(t *testing.T, typ, payload, run string) {
		c := metrics.New(metrics.Options{MaxValues: 2, MaxRuns: 2})
		for range 3 {
			c.ObserveEvent(trace.Event{Type: typ, RunID: run, Payload: json.RawMessage(payload)})
		}
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatalf("Gather: %v", err)
		}
		for _, mf := range mfs {
			if n := len(mf.GetMetric()); n > 3*3*3*3 { // two values and "other" per label
				t.Errorf("%s has %d series, above the cap", mf.GetName(), n)
			}
		}
	})
}
