package chaos

import (
	"fmt"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// dropFault cuts a 200 stream after AfterBytes bytes of its body (or
// after its first AfterEvents events): Toxiproxy's limit_data, installed by
// the mock after it has read the request and before it writes a byte, so
// the cut is exact: limit = head length + the wire length of AfterBytes
// bytes of the event stream (chunk framing included). The client reads
// exactly AfterBytes bytes of the stream, then an unexpected EOF.
type dropFault struct{ baseFault }

func (dropFault) describe(f Fault) string {
	if n := f.Drop.AfterEvents; n != nil {
		return fmt.Sprintf("drop after %d events", *n)
	}
	return fmt.Sprintf("drop after %d bytes", f.Drop.AfterBytes)
}

// cutAt returns how many bytes of resp's body the client gets: AfterBytes,
// or the length of the first AfterEvents pieces (one SSE event each).
func cutAt(d *DropFault, resp *response) int {
	if d.AfterEvents == nil {
		return max(d.AfterBytes, 0)
	}
	n := 0
	for _, p := range resp.Pieces[:min(max(*d.AfterEvents, 0), len(resp.Pieces))] {
		n += len(p)
	}
	return n
}

func (dropFault) serve(s *serving) {
	s.answer(okResponse(s.p), func(resp *response) {
		s.st.limit = int64(len(resp.Head) + resp.WireOffset(cutAt(s.f.Drop, resp)))
		if err := s.e.addToxics([]toxicSpec{{
			name: fmt.Sprintf("a%d-drop", s.n), typ: "limit_data", stream: "downstream",
			toxicity: 1.0, attrs: toxiclient.Attributes{"bytes": s.st.limit},
		}}); err != nil {
			s.e.logf("attempt %d: %v", s.n, err)
		}
	})
}

func (dropFault) closedBy(bool) string { return trace.ClosedByProxy }
func (dropFault) cutsResponse() bool   { return true }

func (dropFault) failure(_ Fault, pe *provider.Error, _ time.Time) {
	pe.Kind, pe.Streamed = provider.KindIncomplete, true
}
