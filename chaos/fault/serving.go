package fault

import (
	"time"

	"github.com/retrylab/retrylab/internal/wire"
)

// Serving is one attempt being answered by the mock, as a kind's Serve sees
// it. The mock implements it; each method that finishes the attempt
// (Answer, FinishWhenGone, Abort) is called once, last.
type Serving interface {
	// N is the attempt's number, from 1.
	N() int
	// Answer journals the request and sends the wire format's answer: its
	// error answer when errorAnswer, else its ok answer (both with the
	// kind's Wire parameters). before, when not nil, runs before the
	// first byte of a 200 is written, with the response, to delay it or
	// put a toxic in place for it. The attempt ends when the peer closes.
	Answer(errorAnswer bool, before func(r *wire.Response))
	// Sleep waits d, or less if the peer goes or the mock stops.
	Sleep(d time.Duration)
	// AddToxics puts toxics on the proxy now.
	AddToxics(ts ...Toxic) error
	// LimitBytes records that the proxy lets n bytes of the response
	// through, so the journal counts no more.
	LimitBytes(n int64)
	// Logf writes to the scenario's log, prefixed with the attempt.
	Logf(format string, args ...any)
	// JournalRequest journals the attempt's request (Answer does it too).
	JournalRequest()
	// WriteHead writes r's head alone: no body byte is counted.
	WriteHead(r *wire.Response)
	// OK is the wire format's ok answer to the attempt (not sent).
	OK() *wire.Response
	// FinishWhenGone waits until the peer closes the connection, then
	// finishes the attempt as closed by closedBy (a trace.ClosedBy*).
	FinishWhenGone(closedBy string)
	// ToxicsFirst reports whether the attempt's pre-connect toxics were
	// on the proxy before its connection was made.
	ToxicsFirst() bool
	// Abort journals the request and closes the connection at once with
	// a reset where the system allows, as closed by the server, noting
	// why in the log; it finishes the attempt.
	Abort(why string)

	// A kind that paces its answer (slow, stall) writes it itself, piece
	// by piece, with these: Start, then any Piece and Wait, then End or
	// FinishWhenGone.

	// Wait waits d of policy time (d × the scenario's time scale on the
	// mock's clock), or less if the peer goes or the mock stops; it
	// reports whether the peer is still there and the mock running (if
	// not, the answer is cut: nothing more is written).
	Wait(d time.Duration) bool
	// Start records r's status, journals the request and writes r's head
	// (unless the answer is cut); it reports whether the head went through
	// to a peer still there. A paced answer calls it once, even when a
	// Wait before it was cut short, so that the request is journaled.
	Start(r *wire.Response) bool
	// Piece writes b as one piece of r's body, framed as r's pieces are
	// (one chunk of a chunked r), in one Write; it reports whether the
	// write went through to a peer still there. r's own last piece goes
	// out with the end of the body, as Answer sends them.
	Piece(r *wire.Response, b []byte) bool
	// End writes the end of r's body (the last chunk of a chunked r) when
	// every Piece went through, then ends the attempt as Answer does: a
	// half-close, and the attempt ends when the peer closes.
	End(r *wire.Response)
}
