package fault

import (
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// Hang reads the request and never answers until the client gives up. To
// the client this is the same as an upstream timeout toxic, and the mock
// still journals the request's path and model and sees the exact moment
// the client closes.
type Hang struct{}

func init() { Register(Def{Kind: Hang{}, Order: 40, Decode: decodeHang}) }

// decodeHang decodes hang: {} (or hang: with nothing, the same).
func decodeHang(m *Mapping) Kind {
	var h *struct{}
	m.Decode("hang", &h)
	if h == nil {
		return nil
	}
	return Hang{}
}

func (Hang) Name() string     { return "hang" }
func (Hang) Describe() string { return "hang" }

func (Hang) Serve(s Serving) {
	s.JournalRequest()
	s.Logf("hang (holding the request until the client gives up)")
	s.FinishWhenGone(trace.ClosedByClient)
}

func (Hang) ClosedBy(bool) string { return trace.ClosedByClient }

func (Hang) Failure(pe *provider.Error, _ Met) { pe.Kind = provider.KindTimeout }
