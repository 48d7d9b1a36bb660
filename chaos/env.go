package chaos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
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
