package chaos

import (
	"fmt"
	"net"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// resetFault resets the connection before any response byte: a downstream
// reset_peer (timeout 0) put on the proxy before the attempt connects (it
// only sends a RST on connections opened after it exists); the mock then
// writes the response head and the toxic resets both sides at once, so the
// client gets ECONNRESET and no byte.
type resetFault struct{ baseFault }

func (resetFault) describe(Fault) string { return "reset" }

// preConnect puts reset_peer downstream: it fires on the first response
// byte, which the mock writes only once it has read the request and the
// toxics of this attempt are known to be in place.
func (resetFault) preConnect(_ Fault, k int) []toxicSpec {
	return []toxicSpec{{
		name: fmt.Sprintf("a%d-reset", k), typ: "reset_peer", stream: "downstream",
		toxicity: 1.0, attrs: toxiclient.Attributes{"timeout": 0},
	}}
}

func (resetFault) serve(s *serving) {
	if !s.toxicsFirst {
		// reset_peer was not on the proxy when this connection was made (a
		// client that retried before the switch), so the proxy would not
		// send a RST. Close abruptly here instead; the client sees EOF.
		s.st.fallback = true
		s.e.journalRequest(s.st)
		s.e.logf("attempt %d: reset_peer missed the connection; the mock closes it instead", s.n)
		if tc, ok := s.c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		s.c.Close()
		s.st.goneAt = s.e.now()
		s.st.rec.ClosedBy = trace.ClosedByServer
		s.e.finish(s.st, s.n)
		return
	}
	// The first response byte reaches the downstream reset_peer toxic, which
	// resets the client's connection (and ours) at once. Status stays 0: the
	// client sees no response.
	s.e.journalRequest(s.st)
	resp := okResponse(s.p)
	s.e.write(s.c, s.st, &response{Head: resp.Head})
	s.st.rec.Bytes = 0
	s.finishWhenGone(trace.ClosedByProxy)
}

func (resetFault) closedBy(bool) string { return trace.ClosedByProxy }

func (resetFault) failure(_ Fault, pe *provider.Error, _ time.Time) { pe.Kind = provider.KindReset }
