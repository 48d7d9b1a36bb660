package battery

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/probe"
)

// The phases of a probe depend on each other only through what the
// earlier ones showed: the exhaustion again (probe.MoreSamples) and the
// survival figures' checks (probe.SurvivalChecks) on the exhaustion and
// survival runs, the Retry-After ceiling's first round
// (probe.NextCeilingRound) on the battery's Retry-After probes, each
// further round on the one before. Run them one after another and a
// probe takes several times the client's own waits. So each is started
// speculatively as soon as what it depends on has finished
// (Runner.speculate: the exhaustion group of the battery, its decision
// group, the round before), beside what still runs, from the profile of
// what has finished by then; and when the whole battery has finished,
// Runner.Run decides every phase exactly as it would have after it, and
// takes a speculative phase only when it is the very phase it decides
// (same probes, same values: specs.take compares their key). One that is
// not is stopped and dropped, and the phase decided runs then. The
// profile is inferred from the same observations either way: only the
// wall time changes.

// phase is what a run of probes returned.
type phase struct {
	obs []probe.Observation
	b   *batch // its batch, held for Interim until accepted or dropped
	sum *chaos.Summary
	err error
}

// speculation is a phase started before it was known to be needed.
type speculation struct {
	key    string // what it runs (its probes and values): compared by take
	cancel context.CancelFunc
	done   chan struct{}
	res    phase
}

// specs holds a Run's speculative phases by slot ("more", "checks",
// "round-1", ...). Once closed (Runner.Run decides the phases itself),
// none starts.
type specs struct {
	mu     sync.Mutex
	closed bool
	m      map[string]*speculation
	wg     sync.WaitGroup // the goroutines that start speculations
}

func newSpecs() *specs { return &specs{m: map[string]*speculation{}} }

// start runs run in a goroutine as slot's speculation, unless specs is
// closed or slot is taken: then it returns nil. The speculation ends when
// ctx does, or when take or drop cancels it.
func (s *specs) start(ctx context.Context, slot, key string, run func(context.Context) phase) *speculation {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.m[slot] != nil || ctx.Err() != nil {
		return nil
	}
	sctx, cancel := context.WithCancel(ctx)
	sp := &speculation{key: key, cancel: cancel, done: make(chan struct{})}
	s.m[slot] = sp
	go func() {
		defer close(sp.done)
		sp.res = run(sctx)
	}()
	return sp
}

// wait waits for sp to end and returns what it ran.
func (sp *speculation) wait() phase {
	<-sp.done
	return sp.res
}

// close stops new speculations from starting; those started go on.
func (s *specs) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// claim removes slot's speculation and returns it, ok when it ran key:
// its phase is the one asked for (sp.wait). One that ran something else
// is stopped: the caller waits for it and drops its phase. nil when slot
// has none.
func (s *specs) claim(slot, key string) (sp *speculation, ok bool) {
	s.mu.Lock()
	sp = s.m[slot]
	delete(s.m, slot)
	s.mu.Unlock()
	if sp == nil {
		return nil, false
	}
	if sp.key != key {
		sp.cancel()
		return sp, false
	}
	return sp, true
}

// drop stops every speculation left and returns their phases, for the
// caller to drop.
func (s *specs) drop() []phase {
	s.close()
	s.mu.Lock()
	left := s.m
	s.m = map[string]*speculation{}
	s.mu.Unlock()
	var out []phase
	for _, sp := range left {
		sp.cancel()
	}
	for _, sp := range left {
		out = append(out, sp.wait())
	}
	return out
}

// groups tracks the battery's scenarios by group as chaos reports them
// ended (chaos.Runner.OnResult), and calls a group's function once, in a
// goroutine, when every scenario of it has ended, with the names of all
// the scenarios ended by then.
type groups struct {
	mu    sync.Mutex
	of    map[string]string // scenario name → group
	left  map[string]int
	ended map[string]bool
	fire  map[string]func(ended map[string]bool)
	wg    *sync.WaitGroup
}

func newGroups(wg *sync.WaitGroup) *groups {
	return &groups{of: map[string]string{}, left: map[string]int{}, ended: map[string]bool{}, fire: map[string]func(map[string]bool){}, wg: wg}
}

// add puts scenario name in group g.
func (gs *groups) add(g, name string) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.of[name] = g
	gs.left[g]++
}

// on sets what runs when group g has ended.
func (gs *groups) on(g string, f func(ended map[string]bool)) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.fire[g] = f
}

// endedNow returns the names of the scenarios ended by now.
func (gs *groups) endedNow() map[string]bool {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	out := make(map[string]bool, len(gs.ended))
	for n := range gs.ended {
		out[n] = true
	}
	return out
}

// end records that scenario name has ended.
func (gs *groups) end(name string) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g, ok := gs.of[name]
	if !ok || gs.ended[name] {
		return
	}
	gs.ended[name] = true
	gs.left[g]--
	if f := gs.fire[g]; gs.left[g] == 0 && f != nil {
		ended := make(map[string]bool, len(gs.ended))
		for n := range gs.ended {
			ended[n] = true
		}
		gs.wg.Add(1)
		go func() {
			defer gs.wg.Done()
			f(ended)
		}()
	}
}

// keyOf is what a phase of ps runs, to tell a speculation that ran the
// very probes asked for: their scenarios' names (which carry the fault,
// the round and the values) and deadlines.
func keyOf(ps []Probe) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%s/%s/%d;", p.Scenario.Name, p.Deadline, p.OutageMs)
	}
	return b.String()
}
