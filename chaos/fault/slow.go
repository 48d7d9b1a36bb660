package fault

import (
	"fmt"

	"github.com/retrylab/retrylab/retry/provider"
)

// Slow is the whole ok answer, sent slowly: its first byte FirstByte late
// and each further event PerEvent after the one before, both policy time
// (the mock waits them scaled by the scenario's time scale). It completes,
// unless the client gives up first (then the journal shows the attempt
// closed by the client, before its last byte). An answer that does not
// stream is one piece: only FirstByte delays it.
type Slow struct {
	FirstByte Duration `yaml:"firstByte"`
	PerEvent  Duration `yaml:"perEvent"`
}

func init() { Register(Def{Kind: Slow{}, Order: 120, Decode: decodeSlow}) }

// decodeSlow decodes a slow answer; slow: {} (no delay at all) is ok.
func decodeSlow(m *Mapping) Kind {
	var s *Slow
	m.Decode("slow", &s)
	if s == nil || *s == (Slow{}) {
		return nil
	}
	return *s
}

func (Slow) Name() string { return "slow" }

func (s Slow) Describe() string {
	return fmt.Sprintf("slow: first byte after %s, %s per event", s.FirstByte, s.PerEvent)
}

func (Slow) Completes() bool { return true }

// Serve sends the ok answer piece by piece, paced.
func (s Slow) Serve(sv Serving) {
	resp := sv.OK()
	sv.Wait(s.FirstByte.D())
	whole := sv.Start(resp)
	for i := 0; whole && i < len(resp.Pieces); i++ {
		whole = (i == 0 || sv.Wait(s.PerEvent.D())) && sv.Piece(resp, resp.Pieces[i])
	}
	sv.End(resp)
}

// Failure: a slow answer fails only when the client's timeout ends it.
func (Slow) Failure(pe *provider.Error, _ Met) { pe.Kind = provider.KindTimeout }
