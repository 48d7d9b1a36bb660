package fault

import "github.com/retrylab/retrylab/internal/wire"

// Latency is a successful response sent after a sleep.
type Latency struct{ D Duration }

func init() { Register(Def{Kind: Latency{}, Order: 60, Decode: decodeLatency}) }

func decodeLatency(m *Mapping) Kind {
	var l Latency
	m.Decode("latency", &l.D)
	if l.D == 0 {
		return nil // latency: 0 is no delay: ok
	}
	return l
}

func (Latency) Name() string       { return "latency" }
func (l Latency) Describe() string { return "latency " + l.D.String() }
func (Latency) Completes() bool    { return true }

func (l Latency) Serve(s Serving) {
	s.Answer(false, func(*wire.Response) { s.Sleep(l.D.D()) })
}
