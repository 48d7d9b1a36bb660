package chaos

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// EnvConfig configures StartEnv.
type EnvConfig struct {
	Scenario  *Scenario
	Toxi      *Toxiproxy
	Journal   *trace.Writer // server.jsonl; nil-safe
	RunID     string
	Log       io.Writer           // progress lines; nil = discard
	OnAttempt func(ServerAttempt) // optional live callback when an attempt ends
	// OnSecret, if set, is called with every API key value a client sent
	// (x-api-key, api-key, the Authorization token), so that the caller can
	// scrub those exact strings from what it writes.
	OnSecret func(string)
	Now      func() time.Time // clock of Arrived and Ended; nil = time.Now

	// onAccept, if set, is called after each accepted connection has been
	// stamped (tests).
	onAccept func()
}

// ServerAttempt is what the mock server saw of one attempt: one connection
// that carried a POST to a path the mock serves.
type ServerAttempt struct {
	// N is 1-based, in the order the mock finished reading the requests
	// (headers and body), not the order the connections arrived: of two
	// concurrent connections, the one that arrived later gets the smaller
	// N if its request was read first, so Arrived need not grow with N. A
	// connection that closes without a request while the next fault is raw
	// toxics is numbered when it closes.
	N      int
	Fault  string // Fault.Kind() of the fault this attempt met
	Status int    // HTTP status sent; 0 when no response was sent (hang, reset)
	Path   string // request path; "" when no request arrived (reset)
	Model  string // the request body's model (secrets redacted)
	// Arrived is when the request's first byte reached the mock: the moment
	// the client sent it. Connected is when the connection was accepted,
	// which may be much earlier: a client may open a connection (a pool's
	// spare, or one its HTTP stack opens at once when it abandons a half-read
	// body) and send on it only after its backoff. Waits are measured from
	// Arrived. Without a request (raw toxics held it back) Arrived is
	// Connected.
	Arrived   time.Time
	Connected time.Time
	Ended     time.Time
	Bytes     int64  // response bytes that left toward the client (drop: at most the cut)
	ClosedBy  string // trace.ClosedByServer, ClosedByClient or ClosedByProxy
	RequestID string // the request-id / x-request-id header sent
	// BodySHA256 is the hex SHA-256 of the request body, and Prompt an
	// excerpt of its last user message's text (requestPrompt): what the
	// checks of expect.prompts read, e.g. that a retry carries the error
	// context of the attempt before it (seed 004 US-002).
	BodySHA256 string
	Prompt     string
}

// Env is one scenario's network: the mock server on 127.0.0.1 and a
// uniquely named Toxiproxy proxy in front of it. Clients talk to BaseURL.
//
// Attempts are counted by requests at the mock: a connection becomes attempt
// k when it has delivered a POST to /v1/messages or /v1/chat/completions (the
// k-th such request meets the scenario's k-th fault; past the end of the
// list, ok). Anything else is answered 404/405 without consuming a fault, and
// a connection that closes without a request is not an attempt, with one
// exception: when the next fault is raw toxics, which may hold the request
// back inside the proxy, such a connection is that attempt (with no path).
// Arrived is when the request's first byte reached the mock, not when the
// connection was accepted: Toxiproxy dials the mock as soon as a client
// connects, and a client may connect long before it sends (Connected
// records that). The mock closes
// each connection after one response (and says Connection: close unless the
// response is to be cut; see connectionHeader), so every attempt is a new
// connection and a fresh set of per-connection toxics. The toxics on the
// proxy act on every connection, so a health probe that connects while
// attempt k's reset or raw toxics are in place meets them too (but consumes
// nothing).
//
// How each fault is made. status, sseError, ok and latency (a sleep before
// answering) come from the mock. hang is made by the mock too: it reads the
// request and never answers until the client gives up; to the client this is
// the same as an upstream timeout toxic, and the mock still journals the
// request's path and model and sees the exact moment the client closes. drop
// is Toxiproxy's limit_data, installed by the mock after it has read the
// request and before it writes a byte, so the cut is exact: limit = head
// length + the wire length of afterBytes bytes of the event stream (chunk
// framing included); the client reads exactly afterBytes bytes of the stream
// and then an unexpected EOF. reset is a downstream reset_peer (timeout 0)
// put on the proxy before the attempt connects (it only sends a RST on
// connections opened after it exists); the mock then writes the response head
// and the toxic resets both sides at once, so the client gets ECONNRESET and
// no byte. Raw toxics are put on the proxy before the attempt connects, with
// toxicity 1.0 unless the scenario says otherwise.
//
// When an attempt ends. After its last byte the mock half-closes the
// connection and waits until the proxy closes it. Toxiproxy closes the
// upstream side only after it has delivered (or cut) everything toward the
// client and closed the client's connection, so ServerAttempt.Ended is the
// moment the client saw the end, for every fault kind: for drop it is when
// limit_data cut the stream, for reset when reset_peer fired, for hang when
// the client gave up, for a latency or bandwidth toxic when the delayed bytes
// were delivered. The residual error is the proxy's hand-off from its client
// side to its upstream side plus the client's connect time: the gap
// Arrived(k+1) − Ended(k) overstates the client's wait by that. Measured with
// TestGapResidual (RETRYLAB_MEASURE=1): mean 0.4–0.8 ms, worst 1–3 ms, for
// every fault kind, embedded and real toxiproxy-server, on a 2-core machine.
//
// Per-attempt toxics. Toxics act on every live connection of a proxy. So
// when attempt k ends (as above) the Env removes attempt k's toxics and
// installs attempt k+1's pre-connect toxics, and only then records attempt k
// as ended (Attempts, OnAttempt, journal). A client that retries within the
// time of those API calls (about a millisecond) can connect before the
// switch: the mock then withholds attempt k+1's response until the switch is
// done, so downstream toxics are right; an upstream raw toxic may miss data
// already sent; a reset whose toxic was not in place when the connection was
// made falls back to the mock closing the connection abruptly (the client
// sees EOF instead of ECONNRESET; the log says so).
type Env struct {
	cfg       EnvConfig
	provider  string
	proxy     *toxiclient.Proxy
	ln        net.Listener
	baseURL   string
	mockURL   string
	tag       string
	now       func() time.Time
	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	mu       sync.Mutex
	cond     *sync.Cond // signals ready changes; uses mu
	ready    int        // the attempt whose pre-connect toxics are in place
	accepted int
	attempts []ServerAttempt
	conns    map[net.Conn]bool

	journalErr error // the first failed journal write

	toxMu  sync.Mutex // serialises toxic changes
	active []string   // names of the toxics on the proxy
}

// readyWait bounds how long an attempt's response waits for its toxics to
// be switched in (it only matters when the previous attempt never ended).
const readyWait = 2 * time.Second

// endWait bounds how long the mock waits, after its last byte, for the proxy
// or client to close the connection.
const endWait = 2 * time.Minute

// StartEnv starts the mock on 127.0.0.1:0 and a uniquely named proxy in front
// of it, with attempt 1's toxics in place. The caller should call Close when
// finished.
func StartEnv(ctx context.Context, cfg EnvConfig) (*Env, error) {
	if cfg.Scenario == nil {
		return nil, errors.New("chaos: StartEnv needs a scenario")
	}
	if cfg.Toxi == nil {
		return nil, errors.New("chaos: StartEnv needs a Toxiproxy")
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	provider := cfg.Scenario.Provider
	if provider == "" {
		provider = ProviderAnthropic
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("chaos: mock listen: %w", err)
	}
	sum := sha256.Sum256([]byte(cfg.RunID + "\x00" + cfg.Scenario.Name + "\x00" + ln.Addr().String()))
	e := &Env{
		cfg:      cfg,
		provider: provider,
		ln:       ln,
		mockURL:  "http://" + ln.Addr().String(),
		tag:      hex.EncodeToString(sum[:6]),
		now:      time.Now,
		done:     make(chan struct{}),
		conns:    map[net.Conn]bool{},
	}
	if cfg.Now != nil {
		e.now = cfg.Now
	}
	e.cond = sync.NewCond(&e.mu)
	e.proxy, err = cfg.Toxi.createProxy(ctx, cfg.Scenario.Name, ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, err
	}
	e.baseURL = "http://" + e.proxy.Listen
	if err := e.switchTo(ctx, 1); err != nil {
		e.Close()
		return nil, err
	}
	e.wg.Add(1)
	go e.acceptLoop()
	fmt.Fprintf(cfg.Log, "[mock] %s: mock %s, proxy %s (%s)\n", cfg.Scenario.Name, e.mockURL, e.baseURL, e.proxy.Name)
	return e, nil
}

// BaseURL returns http://127.0.0.1:PORT of the proxy; clients talk to it.
func (e *Env) BaseURL() string { return e.baseURL }

// MockURL returns the mock's own URL, bypassing the proxy (for debugging).
func (e *Env) MockURL() string { return e.mockURL }

// AnthropicBaseURL is the value of ANTHROPIC_BASE_URL for a client: the
// proxy's URL (SDKs append /v1/messages).
func (e *Env) AnthropicBaseURL() string { return e.baseURL }

// OpenAIBaseURL is the value of OPENAI_BASE_URL for a client: the proxy's URL
// with /v1 (SDKs append /chat/completions).
func (e *Env) OpenAIBaseURL() string { return e.baseURL + "/v1" }

// ClientEnv returns the environment variables an external client needs.
func (e *Env) ClientEnv() []string {
	return []string{"ANTHROPIC_BASE_URL=" + e.AnthropicBaseURL(), "OPENAI_BASE_URL=" + e.OpenAIBaseURL()}
}

// ProxyName returns the name of the Env's Toxiproxy proxy.
func (e *Env) ProxyName() string { return e.proxy.Name }

// Attempts returns what the server saw, in the order of N: finished attempts
// and, for attempts still in progress, what is known so far (zero Ended). The
// slice is a copy; it is safe to call after Close.
func (e *Env) Attempts() []ServerAttempt {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]ServerAttempt(nil), e.attempts...)
}

// Close removes the proxy and stops the mock, ending attempts in progress.
// It works after ctx cancellation and is idempotent.
func (e *Env) Close() error {
	e.closeOnce.Do(func() {
		close(e.done)
		e.mu.Lock()
		e.cond.Broadcast()
		e.mu.Unlock()
		var errs []error
		if e.proxy != nil {
			errs = append(errs, e.cfg.Toxi.deleteProxy(e.proxy.Name))
		}
		e.ln.Close()
		e.mu.Lock()
		for c := range e.conns {
			c.Close()
		}
		e.mu.Unlock()
		e.wg.Wait()
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}

func (e *Env) logf(format string, args ...any) {
	fmt.Fprint(e.cfg.Log, redactSecrets(fmt.Sprintf("[mock] %s: "+format+"\n", append([]any{e.cfg.Scenario.Name}, args...)...)))
}

// noteSecrets hands OnSecret every key value a request carries: in its
// headers, its query and its body (see requestSecrets).
func (e *Env) noteSecrets(req *http.Request, body []byte) {
	if e.cfg.OnSecret == nil {
		return
	}
	for _, v := range requestSecrets(req, body) {
		e.cfg.OnSecret(v)
	}
}

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
		if e.cfg.onAccept != nil {
			e.cfg.onAccept()
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
func (e *Env) newAttempt(connected, arrived time.Time) (int, Fault, ServerAttempt) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.accepted++
	n := e.accepted
	f := e.fault(n)
	rec := ServerAttempt{N: n, Fault: f.Kind(), Arrived: arrived, Connected: connected, RequestID: e.requestID(n)}
	e.attempts = append(e.attempts, rec)
	return n, f, rec
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

// nextFault returns the fault the next attempt will meet.
func (e *Env) nextFault() Fault {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fault(e.accepted + 1)
}

// isAttempt reports whether a request is one the mock serves: a POST to
// /v1/messages or /v1/chat/completions.
func isAttempt(req *http.Request) bool {
	return req.Method == http.MethodPost && (req.URL.Path == PathAnthropic || req.URL.Path == PathOpenAI)
}

// fault returns the fault the n-th attempt meets.
func (e *Env) fault(n int) Fault {
	if a := e.cfg.Scenario.Attempts; n <= len(a) {
		return a[n-1]
	}
	return Fault{}
}

// requestID is the deterministic, fixed-width request id of attempt n.
func (e *Env) requestID(n int) string { return fmt.Sprintf("req_mock%s%06d", e.tag, n) }

// attemptState is what serve learns about one attempt as it goes.
type attemptState struct {
	rec      ServerAttempt
	peerGone chan struct{} // closed when a read on the connection fails
	peerAt   time.Time     // set by the reader before peerGone is closed
	goneAt   time.Time     // when the attempt ended; set by serve only
	wroteAll bool
	limit    int64 // drop: bytes the proxy lets through; 0 = no limit
	fallback bool  // a reset the proxy missed, done by the mock
}

// serve serves connection c. Only a POST to a path the mock serves is an
// attempt and meets the next fault: any other request (a health probe, a GET,
// a wrong path) is answered 404 or 405 without consuming a fault, and a
// connection that closes without sending a request is not an attempt, unless
// the next fault is raw toxics, which may have held the request back in the
// proxy (then it is that attempt, with no path).
func (e *Env) serve(c net.Conn, connected time.Time, readyAt int) {
	defer c.Close()
	fb := &firstByteReader{r: c, now: e.now}
	br := bufio.NewReader(fb)
	req, err := http.ReadRequest(br)
	arrived := fb.at
	if arrived.IsZero() {
		arrived = connected
	}
	var body []byte
	if err == nil {
		body, err = io.ReadAll(io.LimitReader(req.Body, 32<<20))
		e.noteSecrets(req, body)
	}
	if err != nil {
		if e.nextFault().Kind() != FaultToxics {
			e.logf("connection closed without a complete request (%v); not an attempt", err)
			return
		}
		// No request: a raw toxic held it back, and the client gave up.
		n, f, rec := e.newAttempt(connected, arrived)
		st := &attemptState{rec: rec, peerGone: make(chan struct{})}
		st.goneAt = e.now()
		st.rec.ClosedBy = e.closer(f, false)
		e.journalRequest(st)
		e.finish(st, n)
		return
	}
	if !isAttempt(req) {
		e.serveOther(c, req, body)
		return
	}
	n, f, rec := e.newAttempt(connected, arrived)
	toxicsFirst := readyAt >= n
	st := &attemptState{rec: rec, peerGone: make(chan struct{})}
	st.rec.Path = req.URL.Path
	rb := decodeRequest(body)
	model, stream, includeUsage := rb.Model, rb.Stream, rb.StreamOptions.IncludeUsage
	st.rec.Model = redactSecrets(model)
	sum := sha256.Sum256(body)
	st.rec.BodySHA256 = hex.EncodeToString(sum[:])
	st.rec.Prompt = redactSecrets(rb.prompt())
	go func() {
		// The request is complete; any further read ends when the peer closes.
		_, _ = io.Copy(io.Discard, br)
		st.peerAt = e.now()
		close(st.peerGone)
	}()
	e.waitReady(n)

	p := respParams{provider: e.provider, model: st.rec.Model, requestID: st.rec.RequestID, now: e.now(), fault: f, nonStream: !stream, includeUsage: includeUsage}
	if st.rec.Path == PathOpenAI {
		p.provider = ProviderOpenAI
	} else if st.rec.Path == PathAnthropic {
		p.provider = ProviderAnthropic
	}
	var resp *response
	switch {
	case f.Kind() == FaultStatus:
		resp = errorResponse(p)
	case f.Kind() == FaultHang:
		e.journalRequest(st)
		e.logf("attempt %d: hang (holding the request until the client gives up)", n)
		e.finishWhenGone(st, n, trace.ClosedByClient)
		return
	case f.Kind() == FaultReset && !toxicsFirst:
		// reset_peer was not on the proxy when this connection was made (a
		// client that retried before the switch), so the proxy would not
		// send a RST. Close abruptly here instead; the client sees EOF.
		st.fallback = true
		e.journalRequest(st)
		e.logf("attempt %d: reset_peer missed the connection; the mock closes it instead", n)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
		st.goneAt = e.now()
		st.rec.ClosedBy = trace.ClosedByServer
		e.finish(st, n)
		return
	case f.Kind() == FaultReset:
		// The first response byte reaches the downstream reset_peer toxic,
		// which resets the client's connection (and ours) at once. Status
		// stays 0: the client sees no response.
		e.journalRequest(st)
		resp = okResponse(p)
		e.write(c, st, &response{head: resp.head})
		st.rec.Bytes = 0
		e.finishWhenGone(st, n, trace.ClosedByProxy)
		return
	default:
		resp = okResponse(p)
	}
	st.rec.Status = resp.status
	e.journalRequest(st)

	if f.Kind() == FaultLatency && resp.status == 200 {
		t := time.NewTimer(f.Latency.D())
		select {
		case <-t.C:
		case <-st.peerGone:
		case <-e.done:
		}
		t.Stop()
	}
	if f.Kind() == FaultDrop && resp.status == 200 {
		st.limit = int64(len(resp.head) + resp.wireOffset(max(f.Drop.AfterBytes, 0)))
		if err := e.addToxics([]toxicSpec{{
			name: fmt.Sprintf("a%d-drop", n), typ: "limit_data", stream: "downstream",
			toxicity: 1.0, attrs: toxiclient.Attributes{"bytes": st.limit},
		}}); err != nil {
			e.logf("attempt %d: %v", n, err)
		}
	}
	e.write(c, st, resp)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	t := time.NewTimer(endWait)
	select {
	case <-st.peerGone:
		st.goneAt = st.peerAt
	case <-e.done:
		st.goneAt = e.now()
	case <-t.C:
		st.goneAt = e.now()
	}
	t.Stop()
	st.rec.ClosedBy = e.closer(f, st.wroteAll)
	e.finish(st, n)
}

// serveOther answers a request that is not an attempt (wrong method or path)
// with a 404 or 405 error in the provider's shape. It consumes no fault and
// is not journaled; the toxics on the proxy still act on it.
func (e *Env) serveOther(c net.Conn, req *http.Request, body []byte) {
	model, _, _ := requestFields(body)
	p := respParams{provider: e.provider, model: redactSecrets(model), requestID: "req_mock" + e.tag + "000000", now: e.now()}
	resp := notFoundResponse(p, req.Method, req.URL.Path)
	e.logf("%s %s: not an attempt, answered %d", req.Method, redactSecrets(req.URL.Path), resp.status)
	st := &attemptState{peerGone: make(chan struct{})}
	e.write(c, st, resp)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// write sends resp, one piece per Write, stopping when the peer is gone.
func (e *Env) write(c net.Conn, st *attemptState, resp *response) {
	pieces := [][]byte{resp.head}
	for i := range resp.pieces {
		pieces = append(pieces, resp.wire(i))
	}
	if tr := resp.trailer(); tr != nil {
		pieces = append(pieces, tr)
	}
	for _, p := range pieces {
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
	}
	st.wroteAll = true
}

// closer says who closed an attempt's connection.
func (e *Env) closer(f Fault, wroteAll bool) string {
	switch f.Kind() {
	case FaultDrop, FaultReset:
		return trace.ClosedByProxy
	case FaultToxics:
		if !wroteAll {
			return trace.ClosedByProxy
		}
	case FaultHang:
		return trace.ClosedByClient
	}
	if wroteAll {
		return trace.ClosedByServer
	}
	return trace.ClosedByClient
}

// finishWhenGone waits until the peer closes the connection (or the Env
// closes), then finishes the attempt as closed by closedBy.
func (e *Env) finishWhenGone(st *attemptState, n int, closedBy string) {
	select {
	case <-st.peerGone:
		st.goneAt = st.peerAt
	case <-e.done:
		st.goneAt = e.now()
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
	e.attempts[n-1] = st.rec
	e.mu.Unlock()
	// One rounding for the journal and the log.
	dur := st.rec.Ended.Sub(st.rec.Arrived).Round(time.Millisecond)
	e.journal(trace.TypeMockResponse, trace.MockResponse{
		Attempt: n, Fault: st.rec.Fault, Status: st.rec.Status, Bytes: st.rec.Bytes,
		DurationMs: dur.Milliseconds(), ClosedBy: st.rec.ClosedBy, FinishedAt: st.rec.Ended.UTC(),
	})
	e.logf("attempt %d: %s → %s, %d bytes, %s, closed by %s", n, st.rec.Fault, statusText(st.rec.Status),
		st.rec.Bytes, dur, st.rec.ClosedBy)
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
		BodySHA256: st.rec.BodySHA256, Prompt: st.rec.Prompt,
	})
	e.mu.Lock()
	a := &e.attempts[st.rec.N-1]
	a.Path, a.Model, a.Status = st.rec.Path, st.rec.Model, st.rec.Status
	a.BodySHA256, a.Prompt = st.rec.BodySHA256, st.rec.Prompt
	e.mu.Unlock()
}

// waitReady waits until attempt n's toxics are in place and no earlier
// attempt's are left on the proxy (readyFor), the Env closes, or readyWait
// passes.
func (e *Env) waitReady(n int) {
	need := e.readyFor(n)
	e.mu.Lock()
	ready := e.ready >= need
	e.mu.Unlock()
	if ready {
		return
	}
	deadline := time.AfterFunc(readyWait, func() {
		e.mu.Lock()
		e.cond.Broadcast()
		e.mu.Unlock()
	})
	defer deadline.Stop()
	start := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for e.ready < need && time.Since(start) < readyWait {
		select {
		case <-e.done:
			return
		default:
		}
		e.cond.Wait()
	}
}

// readyFor is the switch attempt n's response must wait for: its own when
// its fault uses the proxy (a switch removes every toxic on it, a drop's
// too), else the one after the last earlier attempt whose fault did. Without
// that, there is nothing to wait for: concurrent attempts of a stretch with
// no toxics (past the scenario's faults) are not held back one by one.
func (e *Env) readyFor(n int) int {
	usesProxy := func(f Fault) bool { return f.Reset != nil || f.Drop != nil || len(f.Toxics) > 0 }
	if usesProxy(e.fault(n)) {
		return n
	}
	for k := min(n-1, len(e.cfg.Scenario.Attempts)); k >= 1; k-- {
		if usesProxy(e.fault(k)) {
			return k + 1
		}
	}
	return 0
}

// switchTo removes the toxics on the proxy and installs attempt k's
// pre-connect toxics. It does nothing when attempt k is already switched in,
// and makes no API call when there is nothing to change.
func (e *Env) switchTo(ctx context.Context, k int) error {
	e.toxMu.Lock()
	defer e.toxMu.Unlock()
	e.mu.Lock()
	if e.ready >= k {
		e.mu.Unlock()
		return nil
	}
	e.mu.Unlock()
	var errs []error
	for _, name := range e.active {
		name := name
		if err := call(ctx, func() error { return e.proxy.RemoveToxic(name) }); err != nil && !strings.Contains(err.Error(), "not found") {
			errs = append(errs, fmt.Errorf("remove toxic %s: %w", name, err))
		}
	}
	e.active = nil
	errs = append(errs, e.addToxicsLocked(ctx, preConnectToxics(e.fault(k), k)))
	e.mu.Lock()
	e.ready = k
	e.cond.Broadcast()
	e.mu.Unlock()
	return errors.Join(errs...)
}

// addToxics installs toxics on the proxy; they are removed at the next switch.
func (e *Env) addToxics(ts []toxicSpec) error {
	e.toxMu.Lock()
	defer e.toxMu.Unlock()
	return e.addToxicsLocked(context.Background(), ts)
}

func (e *Env) addToxicsLocked(ctx context.Context, ts []toxicSpec) error {
	var errs []error
	for _, t := range ts {
		err := call(ctx, func() error {
			_, err := e.proxy.AddToxic(t.name, t.typ, t.stream, t.toxicity, t.attrs)
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("toxiproxy %s: add %s toxic %q to %s: %w", e.cfg.Toxi.url, t.typ, t.name, e.proxy.Name, err))
			continue
		}
		e.active = append(e.active, t.name)
	}
	return errors.Join(errs...)
}

// requestBody is what the mock reads of a JSON request body, decoded once
// per request: the fields that shape the answer, and the messages, kept raw
// until a prompt is asked for (a messages value of any shape never spoils
// the other fields).
type requestBody struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages json.RawMessage `json:"messages"`
}

// decodeRequest decodes a request body; a body that is not a JSON object
// gives the zero requestBody: fields that parsed before an error are kept
// by Unmarshal, and a half-parsed body is not trusted.
func decodeRequest(body []byte) requestBody {
	var v requestBody
	if json.Unmarshal(body, &v) != nil {
		return requestBody{}
	}
	if len(v.Model) > 200 {
		v.Model = v.Model[:200]
	}
	return v
}

// requestFields returns the "model", "stream" and
// "stream_options.include_usage" fields of a JSON request body; a body that
// is not a JSON object gives "" and false.
func requestFields(body []byte) (model string, stream, includeUsage bool) {
	v := decodeRequest(body)
	return v.Model, v.Stream, v.StreamOptions.IncludeUsage
}

// MaxPromptExcerpt bounds ServerAttempt.Prompt, in bytes: a longer prompt
// keeps its first and last MaxPromptExcerpt/2 bytes (cut at rune
// boundaries) around " … ", so both an error context at its start and the
// original request at its end stay visible.
const MaxPromptExcerpt = 2048

// requestPrompt is decodeRequest(body).prompt().
func requestPrompt(body []byte) string { return decodeRequest(body).prompt() }

// prompt returns the text of the last user message of an Anthropic
// Messages or OpenAI Chat Completions request: its content string, or its
// text parts joined by newlines; "" when there is none. The result is valid
// UTF-8 and at most MaxPromptExcerpt bytes plus the " … " joint.
func (v requestBody) prompt() string {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(v.Messages) == 0 || json.Unmarshal(v.Messages, &msgs) != nil {
		return ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "user" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(m.Content, &parts) != nil {
				return ""
			}
			var texts []string
			for _, p := range parts {
				if p.Type == "text" {
					texts = append(texts, p.Text)
				}
			}
			text = strings.Join(texts, "\n")
		}
		return excerpt(strings.ToValidUTF8(text, "\uFFFD"), MaxPromptExcerpt)
	}
	return ""
}

// excerpt keeps s whole when it fits in max bytes, else its first and last
// max/2 bytes, cut at rune boundaries, joined by " … ".
func excerpt(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := s[:max/2], s[len(s)-max/2:]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.ValidString(tail) {
		tail = tail[1:]
	}
	return head + " … " + tail
}

// redactSecrets removes anything that looks like an API key from s.
func redactSecrets(s string) string { return provider.Redact(s) }
