package mock

import (
	"fmt"
	"net"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// The fault kinds live in package chaos/fault, one file each, and are found
// by their registry; this file is the mock's side of them: a *serving is
// the fault.Serving a kind's Serve answers through.

var _ fault.Serving = (*serving)(nil)

// DescribeFault says in a few words what one attempt meets, e.g.
// "529", "429 retry-after=2", "sseError overloaded_error after 3 events".
func DescribeFault(f scenario.Fault) string { return fault.Describe(f.Kind) }

// preConnectToxics returns the toxics that must be on the proxy before
// attempt k (1-based) connects (fault.PreConnecter).
func preConnectToxics(f scenario.Fault, k int) []toxicSpec {
	return toxicSpecs(fault.PreConnect(f.Kind, k))
}

// toxicSpecs are ts as the proxy's client takes them.
func toxicSpecs(ts []fault.Toxic) []toxicSpec {
	var out []toxicSpec
	for _, t := range ts {
		out = append(out, toxicSpec{name: t.Name, typ: t.Type, stream: t.Stream, toxicity: t.Toxicity, attrs: toxiclient.Attributes(t.Attributes)})
	}
	return out
}

func (s *serving) N() int                            { return s.n }
func (s *serving) Sleep(d time.Duration)             { s.sleep(d) }
func (s *serving) LimitBytes(n int64)                { s.st.limit = n }
func (s *serving) JournalRequest()                   { s.e.journalRequest(s.st) }
func (s *serving) OK() *wire.Response                { return okResponse(s.p) }
func (s *serving) FinishWhenGone(closedBy string)    { s.finishWhenGone(closedBy) }
func (s *serving) ToxicsFirst() bool                 { return s.toxicsFirst }
func (s *serving) AddToxics(ts ...fault.Toxic) error { return s.e.addToxics(toxicSpecs(ts)) }

func (s *serving) Logf(format string, args ...any) {
	s.e.logf("attempt %d: %s", s.n, fmt.Sprintf(format, args...))
}

func (s *serving) Answer(errorAnswer bool, before func(*wire.Response)) {
	resp := okResponse(s.p)
	if errorAnswer {
		resp = errorResponse(s.p)
	}
	s.answer(resp, before)
}

// WriteHead writes r's head alone; the journal counts no body byte.
func (s *serving) WriteHead(r *wire.Response) {
	s.e.write(s.c, s.st, &response{Head: r.Head})
	s.st.rec.Bytes = 0
}

// Abort closes the connection at once (a reset where the system allows) and
// finishes the attempt as closed by the server.
func (s *serving) Abort(why string) {
	s.st.fallback = true
	s.e.journalRequest(s.st)
	s.Logf("%s", why)
	// Through the proxy the reset meets Toxiproxy, which closes the
	// client's side: the client reads EOF. Direct, a plain close makes
	// the same EOF (the request was read whole: nothing unread to turn
	// the close into a reset).
	if tc, ok := s.c.(*net.TCPConn); ok && !s.e.direct {
		_ = tc.SetLinger(0)
	}
	s.c.Close()
	s.st.goneAt = s.e.now()
	s.st.rec.ClosedBy = trace.ClosedByServer
	s.e.finish(s.st, s.n)
}

// Wait waits d of policy time, scaled by the scenario's time scale.
func (s *serving) Wait(d time.Duration) bool {
	scale := s.e.cfg.TimeScale
	if scale <= 0 {
		scale = 1
	}
	t := time.NewTimer(time.Duration(float64(d) * scale))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.st.peerGone:
	case <-s.e.done:
	}
	s.cut = true
	return false
}

// Start records r's status, journals the request and writes r's head.
func (s *serving) Start(r *wire.Response) bool {
	s.st.rec.Status = r.Status
	s.e.journalRequest(s.st)
	return s.put(r.Head)
}

// Piece writes b as one more piece of r's body, framed as r frames its own;
// r's last piece goes with the end of the body, in one Write, as answer
// writes them back to back: a client that has read the last event may
// close at once (and the run may end), before a separate end went out.
func (s *serving) Piece(r *wire.Response, b []byte) bool {
	if s.put(nil) { // not cut: b goes out below unless the write fails
		defer func(before int64) {
			if !s.cut {
				s.st.rec.OutputTokens += int64(before)
			}
		}(int64(pieceTokensOf(r, b)))
	}
	one := wire.Response{Chunked: r.Chunked, Pieces: [][]byte{b}}
	w := one.Wire(0)
	if n := len(r.Pieces); n > 0 && len(b) > 0 && len(r.Pieces[n-1]) > 0 && &b[0] == &r.Pieces[n-1][0] {
		w = append(w, r.Trailer()...)
		s.ended = s.put(w)
		return s.ended
	}
	return s.put(w)
}

// pieceTokensOf is the output tokens of b, one of r's pieces (by
// identity), 0 for anything else (a keepalive).
func pieceTokensOf(r *wire.Response, b []byte) int {
	if len(b) == 0 {
		return 0
	}
	for i, p := range r.Pieces {
		if len(p) > 0 && &p[0] == &b[0] {
			return r.PieceTokens(i)
		}
	}
	return 0
}

// End writes the end of r's body unless a piece was cut (or the last piece
// carried it), then ends the attempt as answer does.
func (s *serving) End(r *wire.Response) {
	if !s.cut && (s.ended || s.put(r.Trailer())) {
		s.st.wroteAll = true
	}
	s.end()
}

// put writes b in one Write unless the answer is cut or the peer gone,
// counting what left; a failure cuts the answer.
func (s *serving) put(b []byte) bool {
	if s.cut {
		return false
	}
	if len(b) == 0 {
		return true // nothing to send: a client that read a whole JSON answer may be gone already
	}
	select {
	case <-s.st.peerGone:
		s.cut = true
		return false
	default:
	}
	k, err := s.c.Write(b)
	s.st.rec.Bytes += int64(k)
	if err != nil {
		s.cut = true
	}
	return !s.cut
}
