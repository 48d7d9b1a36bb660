package fault

import (
	"fmt"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// Reset resets the connection before any response byte: a downstream
// reset_peer (timeout 0) put on the proxy before the attempt connects (it
// only sends a RST on connections opened after it exists); the mock then
// writes the response head and the toxic resets both sides at once, so the
// client gets ECONNRESET and no byte.
type Reset struct{}

func init() { Register(Def{Kind: Reset{}, Order: 50, Decode: decodeReset}) }

func decodeReset(m *Mapping) Kind {
	var r *struct{}
	m.Decode("reset", &r)
	if r == nil {
		return nil
	}
	return Reset{}
}

func (Reset) Name() string     { return "reset" }
func (Reset) Describe() string { return "reset" }

// PreConnect puts reset_peer downstream: it fires on the first response
// byte, which the mock writes only once it has read the request and the
// toxics of this attempt are known to be in place.
func (Reset) PreConnect(n int) []Toxic {
	return []Toxic{{
		Name: fmt.Sprintf("a%d-reset", n), Type: "reset_peer", Stream: "downstream",
		Toxicity: 1.0, Attributes: map[string]any{"timeout": 0},
	}}
}

func (Reset) Serve(s Serving) {
	if !s.ToxicsFirst() {
		// reset_peer was not on the proxy when this connection was made (a
		// client that retried before the switch), so the proxy would not
		// send a RST. Close abruptly here instead; the client sees EOF.
		s.Abort("reset_peer missed the connection; the mock closes it instead")
		return
	}
	// The first response byte reaches the downstream reset_peer toxic, which
	// resets the client's connection (and ours) at once. Status stays 0: the
	// client sees no response.
	s.JournalRequest()
	s.WriteHead(s.OK())
	s.FinishWhenGone(trace.ClosedByProxy)
}

func (Reset) ClosedBy(bool) string { return trace.ClosedByProxy }
func (Reset) UsesProxy() bool      { return true }

func (Reset) Failure(pe *provider.Error, _ Met) { pe.Kind = provider.KindReset }
