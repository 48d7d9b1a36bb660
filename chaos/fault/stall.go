package fault

import (
	"fmt"
	"time"

	"github.com/retrylab/retrylab/internal/yamldiag"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// Stall is a 200 that stops short: the head and the first AfterEvents
// events of the answer, then nothing but the format's keepalive
// (wire.Format.Keepalive: Anthropic's ping event, an SSE comment for the
// OpenAI formats and Gemini) every Keepalive of policy time, until the
// client gives up or the scenario ends. Keepalive 0 is a silent stall
// after the head and the events (hang, by contrast, never answers). The
// answer's last event is never sent, however large AfterEvents, so a stall
// never completes. A request that did not ask for a stream gets the head
// of its JSON answer and then nothing: there are no keepalives in a JSON
// body.
//
// The point is the client's timeout: one that a keepalive resets (an idle
// timer over bytes or frames, not over events that carry the answer)
// never notices the stall; the built-in client's per-attempt timeout
// bounds the whole attempt, so it does (provider.KindTimeout).
type Stall struct {
	AfterEvents int       `yaml:"afterEvents"`
	Keepalive   *Duration `yaml:"keepalive"` // nil: DefaultKeepalive
}

// DefaultKeepalive is a stall's keepalive interval when the scenario gives
// none.
const DefaultKeepalive = 5 * time.Second

// minKeepalive bounds a stall's keepalive interval from below (0 aside):
// shorter, the keepalives are a flood, not a stall.
const minKeepalive = 100 * time.Millisecond

func init() { Register(Def{Kind: Stall{}, Order: 110, Decode: decodeStall}) }

// decodeStall decodes a stall; "stall:" with nothing is stall: {}.
func decodeStall(m *Mapping) Kind {
	if v := m.Value("stall"); v != nil && v.Tag == "!!null" {
		return Stall{}
	}
	var s *Stall
	m.Decode("stall", &s)
	if s == nil {
		return nil
	}
	if k := s.Keepalive; k != nil && *k > 0 && k.D() < minKeepalive {
		m.Errorf(yamldiag.Fields(m.Value("stall"))["keepalive"], yamldiag.Join(m.Path("stall"), "keepalive"),
			fmt.Sprintf("use %s or more, or 0 for a silent stall", minKeepalive),
			"keepalive %s is too short for a stall: the keepalives would flood the client", k)
	}
	return *s
}

func (Stall) Name() string { return "stall" }

func (s Stall) Describe() string {
	if k := s.every(); k > 0 {
		return fmt.Sprintf("stall after %d events, keepalive %s", s.AfterEvents, k)
	}
	return fmt.Sprintf("stall after %d events, silent", s.AfterEvents)
}

// every is the keepalive interval, 0 for none.
func (s Stall) every() time.Duration {
	if s.Keepalive == nil {
		return DefaultKeepalive
	}
	return s.Keepalive.D()
}

// Serve sends the head and the first events of the ok answer, then
// keepalives until the client goes.
func (s Stall) Serve(sv Serving) {
	resp := sv.OK()
	if sv.Start(resp) {
		n := 0
		if resp.Keepalive != nil { // a stream; a JSON answer is one piece, never sent
			n = min(max(s.AfterEvents, 0), len(resp.Pieces)-1)
		}
		for _, p := range resp.Pieces[:max(n, 0)] {
			if !sv.Piece(resp, p) {
				break
			}
		}
		sv.Logf("stall after %d events (holding the stream until the client gives up)", n)
		if k := s.every(); k > 0 && resp.Keepalive != nil {
			for sv.Wait(k) && sv.Piece(resp, resp.Keepalive) {
			}
		}
	}
	sv.FinishWhenGone(trace.ClosedByClient)
}

func (Stall) ClosedBy(bool) string { return trace.ClosedByClient }

// Failure: a stall is what the client's timeout catches.
func (Stall) Failure(pe *provider.Error, _ Met) { pe.Kind = provider.KindTimeout }
