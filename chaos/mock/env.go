package mock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// EnvConfig configures StartEnv.
type EnvConfig struct {
	Scenario  *scenario.Scenario
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
	// TimeScale multiplies the policy-time waits of the faults that pace
	// their answer (slow, stall: fault.Serving.Wait); 0 = 1.
	TimeScale float64
	// OutageSeed seeds the scenario's outage: draws when it gives no seed
	// of its own (chaos run's --seed).
	OutageSeed int64

	// KeepAttempts, if > 0, bounds the attempt records the Env holds (a
	// long `chaos serve`): the first KeepAttempts and the last KeepAttempts
	// to 2×KeepAttempts; the others are only counted (Tally). 0 keeps every
	// record, as a run's checks need.
	KeepAttempts int
	// QuietAttempts drops the log line of each attempt that ends (serve
	// without -v); the other lines stay.
	QuietAttempts bool
	// Fleet is how many clients share the Env (fleet:, fleet.go); 0 or 1:
	// one client, whose attempts the mock numbers as they come.
	Fleet int

	// OnAccept, if set, is called after each accepted connection has been
	// stamped (tests).
	OnAccept func()

	// Proxy says when the Env puts Toxiproxy in front of the mock: auto
	// ("" too) only when a fault of the scenario needs it
	// (scenario.UsesProxy), always for every scenario (the path of every
	// attempt before; chaos run and chaos serve's --proxy).
	Proxy ProxyMode
}

// ProxyMode is when an Env puts Toxiproxy in front of its mock
// (EnvConfig.Proxy; chaos run and chaos serve's --proxy).
type ProxyMode string

const (
	// ProxyAuto: a Toxiproxy proxy only for a scenario with a fault that
	// puts toxics on it (drop, reset, raw toxics); the others are served
	// straight by the mock.
	ProxyAuto ProxyMode = "auto"
	// ProxyAlways: every scenario behind a Toxiproxy proxy.
	ProxyAlways ProxyMode = "always"
)

// ProxyModes are the values --proxy takes.
var ProxyModes = []string{string(ProxyAuto), string(ProxyAlways)}

// ParseProxyMode reads a --proxy value.
func ParseProxyMode(s string) (ProxyMode, error) {
	switch m := ProxyMode(s); m {
	case ProxyAuto, ProxyAlways:
		return m, nil
	case "":
		return ProxyAuto, nil
	}
	return "", fmt.Errorf("--proxy %q: want auto (Toxiproxy only for a scenario whose faults need it) or always", s)
}

// The paths an Env's clients take to the mock (Env.Path; result.json's
// path, chaos serve's first line).
const (
	// PathDirect: clients talk to the mock's own listener.
	PathDirect = "direct"
	// PathToxiproxy: clients talk to a Toxiproxy proxy in front of it.
	PathToxiproxy = "toxiproxy"
)

// Env is one scenario's network: the mock server on 127.0.0.1 (server.go)
// and, when a fault of the scenario needs one (EnvConfig.Proxy), a
// uniquely named Toxiproxy proxy in front of it (toxi.go). Clients talk to
// BaseURL: the proxy's, else the mock's own (Path says which). How attempts are counted and stamped, how each fault is
// made and when an attempt ends are the package's contracts: see the
// package documentation (doc.go).
type Env struct {
	cfg       EnvConfig
	provider  string
	proxy     *toxiclient.Proxy // nil on the direct path
	direct    bool              // no proxy: clients talk to the mock
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
	// attempts holds the records of attempts base+1 … accepted; with
	// KeepAttempts the older ones are let go (keepLocked), after a copy of
	// the first KeepAttempts in head.
	attempts []ServerAttempt
	base     int
	head     []ServerAttempt
	tally    map[TallyKey]int // attempts ended, by fault and status
	met      []scenario.Fault // met[n-1-metBase]: the fault attempt n met (outage.go)
	metBase  int              // with KeepAttempts, the faults of attempts up to metBase are let go
	outageT0 time.Time        // attempt 1's arrival: where the outage begins
	sides    []SideRequest    // requests beside the answer (side.go)
	conns    map[net.Conn]bool
	// perClient counts each fleet client's attempts (fleet.go); index 0
	// counts those of requests without a fleet key.
	perClient map[int]int

	journalErr error // the first failed journal write

	toxMu  sync.Mutex // serialises toxic changes
	active []string   // names of the toxics on the proxy

	firstReq  chan struct{} // closed when the first request's first byte arrives
	firstOnce sync.Once

	account   *account  // the scenario's limits: (account.go); nil: unlimited
	accountT0 time.Time // where the account's policy time begins
}

// readyWait bounds how long an attempt's response waits for its toxics to
// be switched in (it only matters when the previous attempt never ended).
const readyWait = 2 * time.Second

// StartEnv starts the mock on 127.0.0.1:0 and, unless the scenario is
// served direct (EnvConfig.Proxy), a uniquely named proxy in front of it,
// with attempt 1's toxics in place. The decision is made once, here, from
// the scenario's faults. The caller should call Close when finished.
func StartEnv(ctx context.Context, cfg EnvConfig) (*Env, error) {
	if cfg.Scenario == nil {
		return nil, errors.New("chaos: StartEnv needs a scenario")
	}
	if _, err := ParseProxyMode(string(cfg.Proxy)); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	direct := cfg.Proxy != ProxyAlways && !cfg.Scenario.UsesProxy()
	if cfg.Toxi == nil && !direct {
		return nil, errors.New("chaos: StartEnv needs a Toxiproxy")
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	provider := cfg.Scenario.Provider
	if provider == "" {
		provider = wire.ProviderAnthropic
	}
	if _, err := wire.Lookup(provider); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
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
		direct:   direct,
		mockURL:  "http://" + ln.Addr().String(),
		tag:      hex.EncodeToString(sum[:6]),
		now:      time.Now,
		done:     make(chan struct{}),
		conns:    map[net.Conn]bool{},
		firstReq: make(chan struct{}),
		tally:    map[TallyKey]int{},
	}
	if cfg.Now != nil {
		e.now = cfg.Now
	}
	e.cond = sync.NewCond(&e.mu)
	e.account, e.accountT0 = newAccount(cfg.Scenario.Limits), e.now()
	if direct {
		e.baseURL = e.mockURL
		e.ready = 1 // no toxic to put anywhere
	} else {
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
	}
	e.wg.Add(1)
	go e.acceptLoop()
	if direct {
		fmt.Fprintf(cfg.Log, "[mock] %s: mock %s, direct (no fault needs the proxy)\n", cfg.Scenario.Name, e.mockURL)
	} else {
		fmt.Fprintf(cfg.Log, "[mock] %s: mock %s, proxy %s (%s)\n", cfg.Scenario.Name, e.mockURL, e.baseURL, e.proxy.Name)
	}
	return e, nil
}

// Path is how the Env's clients reach the mock: PathDirect (its own
// listener: no fault of the scenario needs the proxy) or PathToxiproxy.
func (e *Env) Path() string {
	if e.direct {
		return PathDirect
	}
	return PathToxiproxy
}

// FirstRequest is closed when the first byte of the client's first
// request reaches the mock (an attempt or a side request): the moment the
// client, done starting, talks to the provider. A client's deadline may
// count from it (Runner.StartGrace).
func (e *Env) FirstRequest() <-chan struct{} { return e.firstReq }

// BaseURL returns http://127.0.0.1:PORT of the proxy, or of the mock on
// the direct path; clients talk to it.
func (e *Env) BaseURL() string { return e.baseURL }

// MockURL returns the mock's own URL, bypassing the proxy (for debugging;
// BaseURL on the direct path).
func (e *Env) MockURL() string { return e.mockURL }

// ClientEnv returns the base-URL variables an external client needs, as
// the wire formats name them (wire.BaseURLEnv): ANTHROPIC_BASE_URL is the
// proxy's URL (the mock's on the direct path), OPENAI_BASE_URL the same
// with /v1, ...
func (e *Env) ClientEnv() []string { return wire.BaseURLEnv(e.baseURL) }

// proxyName returns the name of the Env's Toxiproxy proxy, "" on the
// direct path.
func (e *Env) proxyName() string {
	if e.proxy == nil {
		return ""
	}
	return e.proxy.Name
}

// Attempts returns what the server saw, in the order of N: finished attempts
// and, for attempts still in progress, what is known so far (zero Ended). The
// slice is a copy; it is safe to call after Close.
// With EnvConfig.KeepAttempts, the attempts in the middle of a long run
// are missing (AttemptsSeen says how many there were).
func (e *Env) Attempts() []ServerAttempt {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.base == 0 {
		return append([]ServerAttempt(nil), e.attempts...)
	}
	return append(append([]ServerAttempt(nil), e.head...), e.attempts...)
}

// AttemptsSeen returns how many attempts the Env numbered, whether or not
// it still holds their records.
func (e *Env) AttemptsSeen() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.accepted
}

// TallyKey is a fault and a status (0: none sent) of ended attempts.
type TallyKey struct {
	Fault  string
	Status int
}

// Tally returns how many attempts ended with each fault and status, every
// one of them, whatever KeepAttempts let go.
func (e *Env) Tally() map[TallyKey]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[TallyKey]int, len(e.tally))
	for k, v := range e.tally {
		out[k] = v
	}
	return out
}

// recLocked returns the record of attempt n, nil when it was let go; e.mu
// is held.
func (e *Env) recLocked(n int) *ServerAttempt {
	if i := n - 1 - e.base; i >= 0 && i < len(e.attempts) {
		return &e.attempts[i]
	}
	return nil
}

// setLocked stores rec as attempt rec.N's record, in head too while it is
// one of the first KeepAttempts; e.mu is held.
func (e *Env) setLocked(rec ServerAttempt, update func(*ServerAttempt)) {
	if a := e.recLocked(rec.N); a != nil {
		update(a)
	}
	if i := rec.N - 1; i < len(e.head) {
		update(&e.head[i])
	}
}

// keepLocked lets the records go that KeepAttempts does not keep: once
// 2×KeepAttempts are held, all but the last KeepAttempts, after the first
// KeepAttempts were copied to head (amortised: a copy per KeepAttempts
// attempts). e.mu is held.
func (e *Env) keepLocked() {
	k := e.cfg.KeepAttempts
	if k <= 0 || len(e.attempts) < 2*k {
		return
	}
	if e.base == 0 {
		e.head = append([]ServerAttempt(nil), e.attempts[:k]...)
	}
	drop := len(e.attempts) - k
	e.attempts = append(make([]ServerAttempt, 0, 2*k), e.attempts[drop:]...)
	e.base += drop
	// The faults decided for the attempts let go are no longer asked for
	// (faultLocked serves the attempts around the last ones).
	if d := e.base - e.metBase; d > 0 && d <= len(e.met) {
		e.met = append(make([]scenario.Fault, 0, 2*k), e.met[d:]...)
		e.metBase = e.base
	}
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
			errs = append(errs, e.cfg.Toxi.release(e.proxy, apiTimeout))
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

// logf writes one [mock] line: keys redacted, and printable, whatever a
// request put in its arguments.
func (e *Env) logf(format string, args ...any) {
	msg := redact.RedactSecrets(fmt.Sprintf(format, args...))
	fmt.Fprintf(e.cfg.Log, "[mock] %s: %s\n", e.cfg.Scenario.Name, Printable(msg))
}

// waitReady waits until attempt n's toxics are in place and no earlier
// attempt's are left on the proxy (readyFor), the Env closes, or readyWait
// passes.
func (e *Env) waitReady(n int) {
	if e.direct {
		return // no toxic to wait for
	}
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
	usesProxy := func(f scenario.Fault) bool { return fault.UsesProxy(f.Kind) }
	if usesProxy(e.fault(n)) {
		return n
	}
	last := n - 1
	if e.cfg.Scenario.Outage == nil {
		last = min(last, len(e.cfg.Scenario.Attempts))
	}
	e.mu.Lock()
	first := e.metBase + 1 // with KeepAttempts: the attempts let go are long switched past
	e.mu.Unlock()
	for k := last; k >= first; k-- {
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
	if e.direct {
		return nil // no proxy, no toxic: every attempt is ready (StartEnv)
	}
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
		if err := call(ctx, func() error { return e.proxy.RemoveToxic(name) }); err != nil && !isNotFound(err) {
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
	if e.proxy == nil && len(ts) > 0 {
		// Not reached: a scenario with a kind that puts toxics on the
		// proxy is never served direct (scenario.UsesProxy).
		return fmt.Errorf("toxics %v for the proxy, but %s is served direct", ts[0].typ, e.cfg.Scenario.Name)
	}
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

// noteSecrets hands OnSecret every key value a request carries: in its
// headers, its query and its body (see RequestSecrets).
func (e *Env) noteSecrets(req *http.Request, body []byte) {
	if e.cfg.OnSecret == nil {
		return
	}
	for _, v := range redact.RequestSecrets(req, body) {
		e.cfg.OnSecret(v)
	}
}
