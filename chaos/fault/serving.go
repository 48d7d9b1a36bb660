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
}
