package chaos

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

	mu      sync.Mutex
	proxies map[string]bool // names of the proxies created and not yet deleted
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

// StartToxiproxy connects to the Toxiproxy server at apiURL, or, when apiURL
// is "", starts an embedded one on 127.0.0.1 with an ephemeral port. An
// unreachable apiURL gives a *ToxiproxyError naming the URL, with a hint.
func StartToxiproxy(ctx context.Context, apiURL string) (*Toxiproxy, error) {
	t := &Toxiproxy{proxies: map[string]bool{}}
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
	names := make([]string, 0, len(t.proxies))
	for n := range t.proxies {
		names = append(names, n)
	}
	t.mu.Unlock()
	var errs []error
	for _, n := range names {
		errs = append(errs, t.deleteProxy(n))
	}
	if t.srv != nil {
		t.srv.Close()
	}
	return errors.Join(errs...)
}

// proxyPrefix starts the name of every proxy retrylab creates.
const proxyPrefix = "retrylab-"

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
	rest, found := strings.CutPrefix(name, proxyPrefix)
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
		if !ok || h != host || pid == me || processAlive(pid) {
			continue
		}
		if err := t.deleteProxy(name); err != nil {
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
	name := fmt.Sprintf("%s%s-%s-%d-%d", proxyPrefix, ownerTag(os.Getpid()), sanitize(base), time.Now().UnixNano()%1e9, t.seq)
	t.proxies[name] = true
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
	return p, nil
}

// deleteProxy deletes the named proxy, with its own deadline so that it works
// while the caller's context is cancelled. A proxy already gone is not an
// error.
func (t *Toxiproxy) deleteProxy(name string) error {
	err := call(context.Background(), func() error {
		p, err := t.client.Proxy(name)
		if err != nil {
			return err
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
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), apiTimeout)
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
