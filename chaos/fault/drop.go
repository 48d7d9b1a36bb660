package fault

import (
	"fmt"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/internal/yamldiag"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// Drop cuts a 200 stream after AfterBytes bytes of its body (or after its
// first AfterEvents events, whatever their size in the scenario's wire
// format; an answer that does not stream is one event): Toxiproxy's
// limit_data, installed by the mock after it has read the request and
// before it writes a byte, so the cut is exact: limit = head length + the
// wire length of AfterBytes bytes of the event stream (chunk framing
// included). The client reads exactly AfterBytes bytes of the stream, then
// an unexpected EOF.
type Drop struct {
	AfterBytes  int  `yaml:"afterBytes"`
	AfterEvents *int `yaml:"afterEvents"`
}

func init() { Register(Def{Kind: Drop{}, Order: 30, Decode: decodeDrop}) }

// decodeDrop decodes a drop: afterBytes or afterEvents, not both (negative
// values are caught with every other count).
func decodeDrop(m *Mapping) Kind {
	var d *Drop
	m.Decode("drop", &d)
	dm := yamldiag.Fields(m.Value("drop"))
	_, bytes := dm["afterBytes"]
	if n, events := dm["afterEvents"]; events && bytes {
		m.Errorf(n, yamldiag.Join(m.Path("drop"), "afterEvents"), "a drop cuts after a number of bytes or of events: keep one", "drop has both afterBytes and afterEvents")
	}
	if d == nil {
		return nil
	}
	return *d
}

func (Drop) Name() string { return "drop" }

func (d Drop) Describe() string {
	if n := d.AfterEvents; n != nil {
		return fmt.Sprintf("drop after %d events", *n)
	}
	return fmt.Sprintf("drop after %d bytes", d.AfterBytes)
}

// CutAt returns how many bytes of resp's body the client gets: AfterBytes,
// or the length of the first AfterEvents pieces (one SSE event each).
func (d Drop) CutAt(resp *wire.Response) int {
	if d.AfterEvents == nil {
		return max(d.AfterBytes, 0)
	}
	n := 0
	for _, p := range resp.Pieces[:min(max(*d.AfterEvents, 0), len(resp.Pieces))] {
		n += len(p)
	}
	return n
}

// Serve answers ok with a limit_data toxic put in place once the bytes of
// the answer are known.
func (d Drop) Serve(s Serving) {
	s.Answer(false, func(resp *wire.Response) {
		limit := int64(len(resp.Head) + resp.WireOffset(d.CutAt(resp)))
		s.LimitBytes(limit)
		if err := s.AddToxics(Toxic{
			Name: fmt.Sprintf("a%d-drop", s.N()), Type: "limit_data", Stream: "downstream",
			Toxicity: 1.0, Attributes: map[string]any{"bytes": limit},
		}); err != nil {
			s.Logf("%v", err)
		}
	})
}

func (Drop) ClosedBy(bool) string { return trace.ClosedByProxy }
func (Drop) CutsResponse() bool   { return true }
func (Drop) UsesProxy() bool      { return true }

func (Drop) Failure(pe *provider.Error, _ Met) {
	pe.Kind, pe.Streamed = provider.KindIncomplete, true
}
