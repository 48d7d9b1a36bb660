package chaos

import (
	"context"
	"sync"
	"time"
)

// probe measures how late this process's timers fire while scenarios run.
// On a busy machine (a CI runner sharing its cores) every wait a client
// sleeps, and every hand-off between client, proxy and mock, wakes up late
// by about that much; the server-side delay checks widen their tolerance by
// the lateness measured during the scenario, so that they fail on a client
// that waits wrongly rather than on a machine that is busy. On an idle
// machine the lateness is well under a millisecond and changes nothing.
type probe struct {
	mu      sync.Mutex
	samples []probeSample
}

type probeSample struct {
	at   time.Time
	late time.Duration
}

const probeTick = 5 * time.Millisecond

func (p *probe) run(ctx context.Context) {
	t := time.NewTimer(probeTick)
	defer t.Stop()
	for {
		start := time.Now()
		t.Reset(probeTick)
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			p.mu.Lock()
			p.samples = append(p.samples, probeSample{at: now, late: max(0, time.Since(start)-probeTick)})
			p.mu.Unlock()
		}
	}
}

// lateness returns the largest timer lateness seen between from and to.
func (p *probe) lateness(from, to time.Time) time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var m time.Duration
	for _, s := range p.samples {
		if !s.at.Before(from) && !s.at.After(to) && s.late > m {
			m = s.late
		}
	}
	return m
}
