package mock

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/rs/zerolog"
)

// Toxiproxy is a connection to a Toxiproxy server, shared by all scenarios of
// one invocation. It is either embedded (an in-process server on an ephemeral
// loopback port) or a real toxiproxy-server reached by URL; both are driven
// through the official client package, so the code path is the same.
//
// The caller should call Close when finished: it removes every proxy this
// Toxiproxy created (also those of Envs not closed) and stops an embedded
// server. Methods are safe for concurrent use.
type Toxiproxy struct {
	url    string
	client *toxiclient.Client
	srv    *embeddedServer // nil when not embedded

	mu sync.Mutex
	// proxies holds the proxies created and not yet deleted, by name (nil
	// while the create call is in flight).
	proxies map[string]*toxiclient.Proxy
	seq     int
	closed  bool

	stale    []string // stale proxies removed at start
	staleErr error
}

// ToxiproxyError says a Toxiproxy server could not be reached. Hint tells the
// user what to do next.
type ToxiproxyError struct {
	URL string
	Err error
}

func (e *ToxiproxyError) Error() string {
	return fmt.Sprintf("toxiproxy at %s is unreachable: %v", e.URL, e.Err)
}

func (e *ToxiproxyError) Unwrap() error { return e.Err }

// Hint says how to fix the error.
func (e *ToxiproxyError) Hint() string {
	return "start one with `toxiproxy-server -host 127.0.0.1 -port 8474` (go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0), " +
		"or omit --toxiproxy and unset TOXIPROXY_URL to use the embedded one"
}

// apiTimeout bounds every call to the Toxiproxy API, cleanup included; the
// official client takes no context.
const apiTimeout = 5 * time.Second

// CleanupTimeout bounds each proxy deletion once a run is interrupted: the
// process promises to stop within a second, so a slow proxy API gets this
// long; a proxy it could not delete by then is tried again at Close, and
// one left by a process that exited first is removed as stale by the next
// run on this machine (StartToxiproxy).
const CleanupTimeout = 500 * time.Millisecond

// StartToxiproxy connects to the Toxiproxy server at apiURL, or, when apiURL
// is "", starts an embedded one on 127.0.0.1 with an ephemeral port. An
// unreachable apiURL gives a *ToxiproxyError naming the URL, with a hint.
func StartToxiproxy(ctx context.Context, apiURL string) (*Toxiproxy, error) {
	t := &Toxiproxy{proxies: map[string]*toxiclient.Proxy{}}
	if apiURL == "" {
		srv, err := startEmbedded()
		if err != nil {
			return nil, err
		}
		t.srv, t.url = srv, srv.url
	} else {
		t.url = strings.TrimSuffix(apiURL, "/")
		if !strings.Contains(t.url, "://") {
			t.url = "http://" + t.url
		}
	}
	t.client = toxiclient.NewClient(t.url)
	err := call(ctx, func() error {
		_, err := t.client.Version()
		return err
	})
	if err != nil {
		if t.srv != nil {
			t.srv.Close()
			return nil, fmt.Errorf("embedded toxiproxy: %w", err)
		}
		return nil, &ToxiproxyError{URL: t.url, Err: err}
	}
	if t.srv == nil {
		// A run SIGKILLed on this machine left its proxies behind. Failing
		// to remove them is no reason not to run: they only hold a port.
		t.stale, t.staleErr = t.removeStale(ctx)
	}
	return t, nil
}

// Stale returns the proxies of dead runs that StartToxiproxy removed from
// the server, and why it could not remove others (nil if it could).
func (t *Toxiproxy) Stale() ([]string, error) { return t.stale, t.staleErr }

// URL returns the URL of the Toxiproxy API.
func (t *Toxiproxy) URL() string { return t.url }

// Embedded reports whether the server runs in this process.
func (t *Toxiproxy) Embedded() bool { return t.srv != nil }

// Client returns the official client connected to the server; for tests and
// diagnostics.
func (t *Toxiproxy) Client() *toxiclient.Client { return t.client }

// Close removes every proxy this Toxiproxy created and stops an embedded
// server. It works after ctx cancellation (it uses its own short deadline)
// and is idempotent.
func (t *Toxiproxy) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	err := t.DeleteAll(apiTimeout)
	if t.srv != nil {
		t.srv.Close()
	}
	return err
}

// DeleteAll deletes every proxy this Toxiproxy created and has not deleted
// yet, all at once, each within timeout, and returns what it could not
// delete. It needs no context (it works after an interrupt) and leaves the
// Toxiproxy usable: an Env whose proxy it deleted closes without error.
func (t *Toxiproxy) DeleteAll(timeout time.Duration) error {
	t.mu.Lock()
	names := make([]string, 0, len(t.proxies))
	for n := range t.proxies {
		names = append(names, n)
	}
	t.mu.Unlock()
	sort.Strings(names)
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() { errs[i] = t.deleteProxy(n, timeout) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ProxyPrefix starts the name of every proxy retrylab creates.
const ProxyPrefix = "retrylab-"

// ownerTag names the process that owns a proxy: "<pid>.<host>", host being
// a hash of this machine's name (a proxy's name allows only so much). The
// separator "." is one that sanitize never writes, so that the names of
// older retrylab versions ("retrylab-<scenario>-...") never parse as owned.
func ownerTag(pid int) string { return fmt.Sprintf("%d.%s", pid, hostTag()) }

// hostTag is the hash of this machine's name, as ownerTag writes it.
func hostTag() string {
	h, _ := os.Hostname()
	f := fnv.New32a()
	f.Write([]byte(h))
	return fmt.Sprintf("%08x", f.Sum32())
}

// proxyOwner returns the pid and host tag encoded in a proxy's name by
// createProxy, or ok false for any other name.
func proxyOwner(name string) (pid int, host string, ok bool) {
	rest, found := strings.CutPrefix(name, ProxyPrefix)
	if !found {
		return 0, "", false
	}
	tag, _, _ := strings.Cut(rest, "-")
	p, host, found := strings.Cut(tag, ".")
	if !found || len(host) != 8 {
		return 0, "", false
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 {
		return 0, "", false
	}
	return pid, host, true
}

// removeStale deletes the proxies that retrylab runs on this machine left
// behind on the server when they died without cleaning up (SIGKILL, a
// crash): those whose name holds this host and the pid of a process that no
// longer exists. A live run's proxies, another machine's, and any other
// proxy are left alone. It returns the names it removed; errors (a proxy
// already gone is not one) are joined.
func (t *Toxiproxy) removeStale(ctx context.Context) ([]string, error) {
	var all map[string]*toxiclient.Proxy
	err := call(ctx, func() error {
		var err error
		all, err = t.client.Proxies()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("toxiproxy %s: list proxies: %w", t.url, err)
	}
	me, host := os.Getpid(), hostTag()
	var removed []string
	var errs []error
	for name := range all {
		pid, h, ok := proxyOwner(name)
		if !ok || h != host || pid == me || ProcessAlive(pid) {
			continue
		}
		if err := t.deleteProxy(name, apiTimeout); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	sort.Strings(removed)
	return removed, errors.Join(errs...)
}

// createProxy creates a uniquely named proxy listening on an ephemeral
// loopback port and forwarding to upstream.
func (t *Toxiproxy) createProxy(ctx context.Context, base, upstream string) (*toxiclient.Proxy, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, errors.New("toxiproxy: closed")
	}
	t.seq++
	name := fmt.Sprintf("%s%s-%s-%d-%d", ProxyPrefix, ownerTag(os.Getpid()), sanitize(base), time.Now().UnixNano()%1e9, t.seq)
	t.proxies[name] = nil
	t.mu.Unlock()
	var p *toxiclient.Proxy
	err := call(ctx, func() error {
		var err error
		p, err = t.client.CreateProxy(name, "127.0.0.1:0", upstream)
		return err
	})
	if err != nil {
		t.mu.Lock()
		delete(t.proxies, name)
		t.mu.Unlock()
		return nil, fmt.Errorf("toxiproxy %s: create proxy %s: %w", t.url, name, err)
	}
	// Again: a DeleteAll while the call was in flight found nothing to
	// delete yet, and dropped the name.
	t.mu.Lock()
	t.proxies[name] = p
	t.mu.Unlock()
	return p, nil
}

// deleteProxy deletes the named proxy within timeout, a deadline of its
// own so that it works while the caller's context is cancelled: one API
// call when this Toxiproxy made the proxy, two otherwise (one to look it
// up). A proxy already gone is not an error.
func (t *Toxiproxy) deleteProxy(name string, timeout time.Duration) error {
	t.mu.Lock()
	p := t.proxies[name]
	t.mu.Unlock()
	err := callWithin(context.Background(), timeout, func() error {
		if p == nil {
			var err error
			if p, err = t.client.Proxy(name); err != nil {
				return err
			}
		}
		return p.Delete()
	})
	if isNotFound(err) {
		err = nil
	}
	if err == nil {
		t.mu.Lock()
		delete(t.proxies, name)
		t.mu.Unlock()
		return nil
	}
	return fmt.Errorf("toxiproxy %s: delete proxy %s: %w", t.url, name, err)
}

// release deletes p, a proxy this Toxiproxy created, within timeout,
// unless DeleteAll has deleted it already (an interrupted run deletes
// every proxy at once, before its Envs close).
func (t *Toxiproxy) release(p *toxiclient.Proxy, timeout time.Duration) error {
	t.mu.Lock()
	_, live := t.proxies[p.Name]
	t.mu.Unlock()
	if !live {
		return nil
	}
	return t.deleteProxy(p.Name, timeout)
}

// isNotFound reports whether err is the Toxiproxy API's 404 (a proxy or
// toxic that is not there), as the official client returns it.
func isNotFound(err error) bool {
	var ae *toxiclient.ApiError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// embeddedServer is Toxiproxy's API served in this process on an ephemeral
// loopback port.
type embeddedServer struct {
	url string
	srv *http.Server
}

func startEmbedded() (*embeddedServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("embedded toxiproxy: listen: %w", err)
	}
	api := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	s := &embeddedServer{url: "http://" + ln.Addr().String(),
		srv: &http.Server{Handler: api.Routes(), ReadHeaderTimeout: apiTimeout}}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the API and closes its connections.
func (s *embeddedServer) Close() { _ = s.srv.Close() }

// call runs f, a call of the official client (which takes no context), and
// returns its error, or an error when ctx ends or apiTimeout passes first; f
// then finishes in the background.
func call(ctx context.Context, f func() error) error {
	return callWithin(ctx, apiTimeout, f)
}

// callWithin is call with a timeout of d instead of apiTimeout.
func callWithin(ctx context.Context, d time.Duration, f func() error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("toxiproxy API call: %w", ctx.Err())
	}
}

// sanitize keeps a name to the characters safe in a proxy name.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 {
		return "env"
	}
	return b.String()
}

// toxicSpec is one toxic to install on an Env's proxy.
type toxicSpec struct {
	name, typ, stream string
	toxicity          float32
	attrs             toxiclient.Attributes
}
