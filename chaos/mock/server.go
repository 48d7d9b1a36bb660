package mock

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// endWait bounds how long the mock waits, after its last byte, for the proxy
// or client to close the connection.
const endWait = 2 * time.Minute

func (e *Env) acceptLoop() {
	defer e.wg.Done()
	for {
		c, err := e.ln.Accept()
		if err != nil {
			return
		}
		connected := e.now()
		e.mu.Lock()
		select {
		case <-e.done:
			e.mu.Unlock()
			c.Close()
			return
		default:
		}
		e.conns[c] = true
		// The attempt whose pre-connect toxics were on the proxy before it
		// dialed this connection (the proxy dials the mock when the client
		// connects, then builds the connection's toxic chain).
		readyAt := e.ready
		e.wg.Add(1)
		e.mu.Unlock()
		if e.cfg.OnAccept != nil {
			e.cfg.OnAccept()
		}
		go func() {
			defer e.wg.Done()
			e.serve(c, connected, readyAt)
			e.mu.Lock()
			delete(e.conns, c)
			e.mu.Unlock()
		}()
	}
}

// newAttempt numbers the next attempt, whose connection was accepted at
// connected and whose first request byte arrived at arrived, and records it
// as in progress.
func (e *Env) newAttempt(connected, arrived time.Time, client int) (int, scenario.Fault, ServerAttempt) {
	n, f, rec, _ := e.newAttemptAsking(connected, arrived, client, nil)
	return n, f, rec
}

// newAttemptAsking is newAttempt for an attempt whose request ask asks
// the scenario's provider account (account.go) first: refused, it meets
// the account's answer instead of its fault. ask nil: no request.
func (e *Env) newAttemptAsking(connected, arrived time.Time, client int, ask *accountAsk) (int, scenario.Fault, ServerAttempt, admission) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.accepted++
	n := e.accepted
	k := n
	if e.cfg.Fleet > 1 {
		if e.perClient == nil {
			e.perClient = map[int]int{}
		}
		e.perClient[client]++
		k = e.perClient[client]
	}
	ad := e.admitLocked(arrived, ask)
	var f scenario.Fault
	var draw *trace.OutageDraw
	if ad.limited != "" {
		f = e.limitedLocked(n, arrived, ask, ad)
	} else {
		f, draw = e.decideLocked(n, k, arrived)
	}
	rec := ServerAttempt{N: n, Fault: f.Name(), Arrived: arrived, Connected: connected, RequestID: e.requestID(n), Outage: draw, Limited: journalLimited(ad)}
	if e.cfg.Fleet > 1 {
		rec.Client, rec.ClientN = client, k
	}
	e.attempts = append(e.attempts, rec)
	e.keepLocked()
	return n, f, rec, ad
}

// firstByteReader stamps the moment the first byte arrives on a connection:
// the arrival of the request it carries.
type firstByteReader struct {
	r   io.Reader
	now func() time.Time
	at  time.Time
}

func (f *firstByteReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n > 0 && f.at.IsZero() {
		f.at = f.now()
	}
	return n, err
}

// nextFault returns the fault the next attempt will meet, as far as it is
// known before it arrives (outage.go).
func (e *Env) nextFault() scenario.Fault {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.faultLocked(e.accepted + 1)
}

// fault returns the fault the n-th attempt meets (faultLocked).
func (e *Env) fault(n int) scenario.Fault {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.faultLocked(n)
}

// requestID is the deterministic, fixed-width request id of attempt n.
func (e *Env) requestID(n int) string { return fmt.Sprintf("req_mock%s%06d", e.tag, n) }

// attemptState is what serve learns about one attempt as it goes.
type attemptState struct {
	rec      ServerAttempt
	peerGone chan struct{} // closed when a read on the connection fails
	more     chan struct{} // kept alive: closed when the next request's first byte is here
	peerAt   time.Time     // set by the reader before peerGone is closed
	goneAt   time.Time     // when the attempt ended; set by serve only
	wroteAll bool
	limit    int64 // drop: bytes the proxy lets through; 0 = no limit
	fallback bool  // a reset the proxy missed, done by the mock
	admitted bool  // the provider account admitted it (account.go)
	out      int   // the output tokens its answer's usage reports
}

// serve serves connection c. Only a request that a wire format answers
// (and the scenario's attemptsMatch matches) is an attempt and meets the
// next fault: any other request is a side request (side.go), answered
// without consuming a fault, and a connection that closes without sending a
// request is not an attempt, unless the next fault is raw toxics, which may
// have held the request back in the proxy (then it is that attempt, with no
// path).
func (e *Env) serve(c net.Conn, connected time.Time, readyAt int) {
	defer c.Close()
	fb := &firstByteReader{r: c, now: e.now}
	br := bufio.NewReader(fb)
	for {
		s := e.serveRequest(c, fb, br, connected, readyAt)
		if s == nil || !s.kept || !e.awaitNext(s) {
			return
		}
	}
}

// idleTimeout is how long a kept-alive connection may wait for its next
// request before the mock closes it (as the providers' front ends do; the
// figure is a choice: none of them documents its own).
const idleTimeout = 60 * time.Second

// awaitNext waits on a kept-alive connection for its next request: true
// when one begins to arrive, false when the peer closed, the connection
// stayed idle for idleTimeout or the Env closed.
func (e *Env) awaitNext(s *serving) bool {
	t := time.NewTimer(idleTimeout)
	defer t.Stop()
	select {
	case <-s.st.more:
		return true
	case <-s.st.peerGone:
	case <-t.C:
	case <-e.done:
	}
	return false
}

// keepAlive reports whether attempt n's connection stays open after its
// answer, as the providers keep theirs (HTTP/1.1 keep-alive): when the
// client did not ask to close, the answer is one the mock completes itself
// (a success or an error status: not cut, not held, no toxic), and the
// next attempt's fault puts no toxic on the proxy before it connects (a
// reset or raw toxics act on connections made after them, so that attempt
// needs a fresh one). Whatever ends a connection still ends it.
func (e *Env) keepAlive(req *http.Request, k fault.Kind, n int) bool {
	if req.Close || !req.ProtoAtLeast(1, 1) {
		return false
	}
	if _, isErr := k.(fault.HTTPError); fault.UsesProxy(k) || fault.CutsResponse(k) || !fault.Completes(k) && !isErr {
		return false
	}
	next := e.fault(n + 1).Kind
	return !fault.UsesProxy(next) && !fault.WithoutRequest(next)
}

// serveRequest serves the next request on c: an attempt (returned) or a
// side request (nil, as when no request came).
func (e *Env) serveRequest(c net.Conn, fb *firstByteReader, br *bufio.Reader, connected time.Time, readyAt int) *serving {
	req, err := http.ReadRequest(br)
	arrived := fb.at
	if arrived.IsZero() {
		arrived = connected
	} else {
		e.firstOnce.Do(func() { close(e.firstReq) })
	}
	var body []byte
	if err == nil {
		body, err = io.ReadAll(io.LimitReader(req.Body, 32<<20))
		e.noteSecrets(req, body)
	}
	if err != nil {
		e.serveNoRequest(connected, arrived, err)
		return nil
	}
	// The format that recognises the request answers it, whatever the
	// scenario's provider; it is an attempt if the scenario's
	// attemptsMatch (if any) matches it too.
	name, format, answers := wire.Recognize(req.Method, req.URL.Path)
	var whole, rb wire.Request
	if answers {
		whole = readWhole(format, req.URL, body)
		rb = forJournal(whole)
	}
	if !answers || !e.cfg.Scenario.AttemptsMatch.Matches(req.URL.Path, whole) {
		e.serveSide(c, req, body, arrived, name, rb)
		return nil
	}
	// The next request's first byte is stamped anew (it is already here
	// when the client sent it behind this one).
	fb.at = time.Time{}
	if br.Buffered() > 0 {
		fb.at = e.now()
	}
	s := e.newServed(c, br, req, body, name, rb, connected, arrived, readyAt)
	e.waitReady(s.n)
	fault.Serve(s.f.Kind, s)
	return s
}

// serveNoRequest handles a connection that closed before its request was
// complete: not an attempt, unless the next fault's kind may hold the
// request back in the proxy (raw toxics) and the client gave up.
func (e *Env) serveNoRequest(connected, arrived time.Time, err error) {
	if !fault.WithoutRequest(e.nextFault().Kind) {
		e.logf("connection closed without a complete request (%v); not an attempt", err)
		return
	}
	n, f, rec := e.newAttempt(connected, arrived, 0)
	st := &attemptState{rec: rec, peerGone: make(chan struct{})}
	st.goneAt = e.now()
	st.rec.ClosedBy = fault.ClosedBy(f.Kind, false)
	e.journalRequest(st)
	e.finish(st, n)
}

// serving is one attempt being answered: its connection, what the mock
// learnt of it so far, the fault it meets and the response's parameters.
type serving struct {
	e  *Env
	c  net.Conn
	st *attemptState
	f  scenario.Fault
	n  int
	p  respParams
	// toxicsFirst is true when the attempt's pre-connect toxics were on
	// the proxy before its connection was made.
	toxicsFirst bool
	// cut is set when a paced answer's Start, Piece or Wait did not go
	// through (faults.go): nothing more is written, End writes no end of
	// body; ended is set when its last piece carried the end.
	cut, ended bool
	// kept is set when the attempt ended with the connection kept alive
	// for the next request (p.keep and the whole answer went out).
	kept bool
}

// newServed numbers a complete request as the next attempt and records
// what it carries (path, model, body hash, prompt); a reader goroutine then
// notices the moment the peer closes.
func (e *Env) newServed(c net.Conn, br *bufio.Reader, req *http.Request, body []byte, name string, rb wire.Request, connected, arrived time.Time, readyAt int) *serving {
	n, f, rec, ad := e.newAttemptAsking(connected, arrived, e.fleetClient(req, body), &accountAsk{in: inputTokens(body), provider: name})
	st := &attemptState{rec: rec, peerGone: make(chan struct{}), admitted: ad.admitted()}
	// A path may carry a key (Gemini's models/{model}: a client may put
	// anything there), so it is redacted as the model is, here, where both
	// are recorded for the journal, the verdict and the logs.
	st.rec.Path = redact.RedactSecrets(req.URL.Path)
	st.rec.Model = redact.RedactSecrets(rb.Model)
	sum := sha256.Sum256(body)
	st.rec.BodySHA256 = hex.EncodeToString(sum[:])
	st.rec.Prompt = redact.RedactSecrets(rb.Prompt)
	keep := e.keepAlive(req, f.Kind, n)
	if keep {
		st.more = make(chan struct{})
	}
	go func() {
		// The request is complete; the next read ends when the peer closes,
		// or, on a connection kept alive, when its next request arrives
		// (left in br for serve).
		if keep {
			if _, err := br.Peek(1); err == nil {
				close(st.more)
				return
			}
		} else {
			_, _ = io.Copy(io.Discard, br)
		}
		st.peerAt = e.now()
		close(st.peerGone)
	}()
	now := e.now()
	f.Kind, st.rec.RetryAfter = fault.Stamp(f.Kind, arrived)
	p := respParams{provider: name, model: st.rec.Model, requestID: st.rec.RequestID, now: now, fault: f,
		asks: rb.Asks(), rate: ad.state, keep: keep}
	if e.account != nil {
		st.out = p.wire().OutputTokens() // what settleLocked charges; only an account reads it
	}
	return &serving{e: e, c: c, st: st, f: f, n: n, p: p, toxicsFirst: readyAt >= n}
}

// answer sends resp and ends the attempt when the peer has closed: the
// status is recorded and the request journaled first; then prepare (if not
// nil) runs before a 200 is written, to delay it or to put a toxic in
// place for it; the mock half-closes after its last byte and waits for the
// proxy or client to close (endWait at most).
func (s *serving) answer(resp *response, prepare func(*response)) {
	s.st.rec.Status = resp.Status
	s.e.journalRequest(s.st)
	if prepare != nil && resp.Status == 200 {
		prepare(resp)
	}
	if fault.UsesProxy(s.f.Kind) {
		s.e.write(s.c, s.st, resp)
	} else {
		s.e.writeAll(s.c, s.st, resp)
	}
	s.end()
}

// end half-closes the connection after the mock's last byte and finishes
// the attempt when the proxy or client closes (endWait at most).
//
// On a connection kept alive (respParams.keep) whose whole answer went
// out, the attempt ends at its last byte and the connection waits for the
// next request (serve).
func (s *serving) end() {
	if s.p.keep && s.st.wroteAll && !s.cut {
		s.kept = true
		s.st.goneAt = s.e.now()
		s.st.rec.ClosedBy = fault.ClosedBy(s.f.Kind, true)
		s.e.finish(s.st, s.n)
		return
	}
	if tc, ok := s.c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	if s.e.direct && s.st.wroteAll && !s.cut {
		// No proxy to close the mock's side once the client has it all:
		// the last byte is in the client's socket (loopback) when the
		// write returns, so the attempt ends now, as a kept-alive one
		// does; the connection is closed once the client closes it
		// (endWait at most), for the client to read the answer whole.
		s.st.goneAt = s.e.now()
		s.st.rec.ClosedBy = fault.ClosedBy(s.f.Kind, true)
		s.e.finish(s.st, s.n)
		s.lingerUntilGone()
		return
	}
	t := time.NewTimer(endWait)
	select {
	case <-s.st.peerGone:
		s.st.goneAt = s.st.peerAt
	case <-s.st.more: // a keep-alive answer that did not go through; the peer sent on
		s.st.goneAt = s.e.now()
	case <-s.e.done:
		s.st.goneAt = s.st.goneOr(s.e.now())
	case <-t.C:
		s.st.goneAt = s.e.now()
	}
	t.Stop()
	s.st.rec.ClosedBy = fault.ClosedBy(s.f.Kind, s.st.wroteAll)
	s.e.finish(s.st, s.n)
}

// lingerUntilGone waits, after the attempt has ended, until the peer
// closes the connection (or sends on it), the Env closes or endWait
// passes: closing the connection at once, before the client read the
// answer, could reset it under the client.
func (s *serving) lingerUntilGone() {
	t := time.NewTimer(endWait)
	defer t.Stop()
	select {
	case <-s.st.peerGone:
	case <-s.st.more:
	case <-s.e.done:
	case <-t.C:
	}
}

// sleep waits d, or less if the peer goes or the Env closes.
func (s *serving) sleep(d time.Duration) {
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-s.st.peerGone:
	case <-s.e.done:
	}
	t.Stop()
}

// goneOr returns when the peer went, if it has, else now. Select picks at
// random among ready cases: when the Env closes after the peer went, the
// attempt ended when the peer went, not at the close.
func (st *attemptState) goneOr(now time.Time) time.Time {
	select {
	case <-st.peerGone:
		return st.peerAt
	default:
		return now
	}
}

// finishWhenGone waits until the peer closes the connection (or the Env
// closes), then finishes the attempt as closed by closedBy.
func (s *serving) finishWhenGone(closedBy string) { s.e.finishWhenGone(s.st, s.n, closedBy) }

// write sends resp, one piece per Write, stopping when the peer is gone.
func (e *Env) write(c net.Conn, st *attemptState, resp *response) {
	pieces := [][]byte{resp.Head}
	for i := range resp.Pieces {
		pieces = append(pieces, resp.Wire(i))
	}
	if tr := resp.Trailer(); tr != nil {
		pieces = append(pieces, tr)
	}
	for i, p := range pieces {
		select {
		case <-st.peerGone:
			return
		default:
		}
		k, err := c.Write(p)
		st.rec.Bytes += int64(k)
		if err != nil {
			return
		}
		st.rec.OutputTokens += int64(resp.PieceTokens(i - 1)) // pieces[0] is the head
	}
	st.wroteAll = true
}

// writeAll sends resp in one write (writev: a system call, and one read
// for the proxy, instead of one per piece), for an answer no toxic acts on:
// the client gets the same bytes, as fast as it reads them.
func (e *Env) writeAll(c net.Conn, st *attemptState, resp *response) {
	bufs := make(net.Buffers, 0, len(resp.Pieces)+2)
	bufs = append(bufs, resp.Head)
	for i := range resp.Pieces {
		bufs = append(bufs, resp.Wire(i))
	}
	if tr := resp.Trailer(); tr != nil {
		bufs = append(bufs, tr)
	}
	select {
	case <-st.peerGone:
		return
	default:
	}
	k, err := bufs.WriteTo(c)
	st.rec.Bytes += k
	st.wroteAll = err == nil
}

// finishWhenGone waits until the peer closes the connection (or the Env
// closes), then finishes the attempt as closed by closedBy.
func (e *Env) finishWhenGone(st *attemptState, n int, closedBy string) {
	select {
	case <-st.peerGone:
		st.goneAt = st.peerAt
	case <-e.done:
		st.goneAt = st.goneOr(e.now())
	}
	st.rec.ClosedBy = closedBy
	e.finish(st, n)
}

// finish records the end of an attempt, journals it, and switches the proxy
// to the next attempt's toxics.
func (e *Env) finish(st *attemptState, n int) {
	st.rec.Ended = st.goneAt
	if st.limit > 0 && st.rec.Bytes > st.limit {
		st.rec.Bytes = st.limit
	}
	// Switch first: the client may already be waiting to start the next
	// attempt.
	select {
	case <-e.done:
	default:
		if err := e.switchTo(context.Background(), n+1); err != nil {
			e.logf("switching toxics for attempt %d: %v", n+1, err)
		}
	}
	e.mu.Lock()
	e.setLocked(st.rec, func(a *ServerAttempt) { *a = st.rec })
	e.tally[TallyKey{st.rec.Fault, st.rec.Status}]++
	e.settleLocked(st)
	e.mu.Unlock()
	// One rounding for the journal and the log.
	dur := st.rec.Ended.Sub(st.rec.Arrived).Round(time.Millisecond)
	e.journal(trace.TypeMockResponse, trace.MockResponse{
		Attempt: n, Fault: st.rec.Fault, Status: st.rec.Status, Bytes: st.rec.Bytes,
		DurationMs: dur.Milliseconds(), ClosedBy: st.rec.ClosedBy, FinishedAt: st.rec.Ended.UTC(), RetryAfter: st.rec.RetryAfter,
	})
	if !e.cfg.QuietAttempts {
		e.logf("attempt %d: %s → %s, %d bytes, %s, closed by %s", n, st.rec.Fault, statusText(st.rec.Status),
			st.rec.Bytes, dur, st.rec.ClosedBy)
	}
	if e.cfg.OnAttempt != nil {
		e.cfg.OnAttempt(st.rec)
	}
}

func statusText(s int) string {
	if s == 0 {
		return "no response"
	}
	return fmt.Sprint(s)
}

// journal writes one event to the journal; a failure is logged and kept
// (JournalErr), since the checks read the journal's attempts.
func (e *Env) journal(typ string, p any) {
	if err := e.cfg.Journal.Emit(typ, p); err != nil {
		e.logf("journal: writing %s: %v", typ, err)
		e.mu.Lock()
		if e.journalErr == nil {
			e.journalErr = fmt.Errorf("writing %s: %w", typ, err)
		}
		e.mu.Unlock()
	}
}

// JournalErr returns the first error writing the journal, or nil.
func (e *Env) JournalErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.journalErr
}

func (e *Env) journalRequest(st *attemptState) {
	e.journal(trace.TypeMockRequest, trace.MockRequest{
		Attempt: st.rec.N, Fault: st.rec.Fault, Status: st.rec.Status, Path: st.rec.Path,
		Model: st.rec.Model, ArrivedAt: st.rec.Arrived.UTC(), ConnectedAt: st.rec.Connected.UTC(),
		BodySHA256: st.rec.BodySHA256, Prompt: st.rec.Prompt, Outage: st.rec.Outage, Limited: st.rec.Limited, Client: st.rec.Client,
	})
	e.mu.Lock()
	e.setLocked(st.rec, func(a *ServerAttempt) {
		a.Path, a.Model, a.Status = st.rec.Path, st.rec.Model, st.rec.Status
		a.BodySHA256, a.Prompt = st.rec.BodySHA256, st.rec.Prompt
	})
	e.mu.Unlock()
}
