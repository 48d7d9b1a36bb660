package client

import (
	"context"
	"math"
	"runtime/metrics"
	"slices"
	"sync"
	"time"
)

// Probe measures how late this process's timers fire while scenarios run.
// On a busy machine (a CI runner sharing its cores) every wait a client
// sleeps, and every hand-off between client, proxy and mock, wakes up late
// by about that much; the server-side delay checks widen their tolerance by
// the lateness measured during the scenario, so that they fail on a client
// that waits wrongly rather than on a machine that is busy. On an idle
// machine the lateness is well under a millisecond and changes nothing.
//
// Timer lateness alone misses one kind of contention: goroutines that are
// runnable but wait in the scheduler's run queue behind others (the client
// reading a reply, the proxy copying bytes, the mock accepting a
// connection) while the probe's own timer goroutine runs at once. So each
// tick also reads the runtime's scheduling-latency histogram
// (/sched/latencies:seconds) and records the worst latency of the tick.
type Probe struct {
	mu      sync.Mutex
	samples []probeSample
	sched   schedLatency
}

type probeSample struct {
	at   time.Time
	late time.Duration
}

const ProbeTick = 5 * time.Millisecond

// GapLead is how far before an attempt's end the contention measured for
// the gap that follows it starts.
const GapLead = 20 * time.Millisecond

func (p *Probe) Run(ctx context.Context) {
	t := time.NewTimer(ProbeTick)
	defer t.Stop()
	for {
		start := time.Now()
		t.Reset(ProbeTick)
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			late := max(0, time.Since(start)-ProbeTick, p.sched.worstSinceLast())
			p.mu.Lock()
			p.samples = append(p.samples, probeSample{at: now, late: late})
			p.mu.Unlock()
		}
	}
}

// Lateness returns the largest timer lateness seen between from and to
// (both included). run appends samples in time order, so the window is
// found by binary search: the runner asks once per gap, and the samples
// grow by 1/ProbeTick for the whole run.
func (p *Probe) Lateness(from, to time.Time) time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// lo: the first sample not before from; hi: the first sample after to.
	lo, _ := slices.BinarySearchFunc(p.samples, from, func(s probeSample, t time.Time) int {
		return s.at.Compare(t)
	})
	hi, _ := slices.BinarySearchFunc(p.samples, to, func(s probeSample, t time.Time) int {
		if s.at.After(t) {
			return 1
		}
		return -1
	})
	var m time.Duration
	for i := lo; i < hi; i++ {
		m = max(m, p.samples[i].late)
	}
	return m
}

// schedLatency reads the runtime's goroutine scheduling-latency histogram
// and reports the worst latency recorded since the previous read.
type schedLatency struct {
	sample []metrics.Sample
	prev   []uint64
}

const schedLatencyMetric = "/sched/latencies:seconds"

// worstSinceLast returns the upper bound of the highest histogram bucket
// that gained counts since the previous call (0 on the first call, or when
// the metric is unavailable).
func (s *schedLatency) worstSinceLast() time.Duration {
	if s.sample == nil {
		s.sample = []metrics.Sample{{Name: schedLatencyMetric}}
	}
	metrics.Read(s.sample)
	if s.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := s.sample[0].Value.Float64Histogram()
	first := s.prev == nil
	if len(s.prev) != len(h.Counts) {
		s.prev = make([]uint64, len(h.Counts))
	}
	var worst time.Duration
	for i := len(h.Counts) - 1; i >= 0; i-- {
		if h.Counts[i] > s.prev[i] && !first {
			// Buckets[i+1] is the bucket's upper bound; the last one is +Inf.
			hi := h.Buckets[i+1]
			if math.IsInf(hi, 1) {
				hi = h.Buckets[i]
			}
			worst = time.Duration(hi * float64(time.Second))
			break
		}
	}
	copy(s.prev, h.Counts)
	return worst
}
