package mock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// futureProxyKind is a kind nobody registered that puts toxics on the
// proxy: a kind added later takes the proxy path because it says so
// (fault.ProxyUser), not because a list names it.
type futureProxyKind struct{}

func (futureProxyKind) Name() string     { return "futureProxyKind" }
func (futureProxyKind) Describe() string { return "a future kind" }
func (futureProxyKind) UsesProxy() bool  { return true }

// ownProxies lists the proxies toxi has on its server.
func ownProxies(t *testing.T, toxi *Toxiproxy) []string {
	t.Helper()
	ps, err := toxi.Client().Proxies()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for name := range ps {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// TestPathDecision: an Env serves a scenario straight from the mock unless
// a fault it can serve (attempts:, an outage phase's mix; a fleet's
// clients each meet attempts:) puts toxics on the proxy, or --proxy always
// says so; every registered kind is asked through the interface, with a
// value that uses the proxy where the zero value does not (raw toxics).
func TestPathDecision(t *testing.T) {
	toxi := startToxi(t)
	samples := map[string][]fault.Kind{ // values beyond each kind's zero value
		"toxics": {fault.Toxics{{Type: "latency", Attributes: map[string]any{"latency": 10}}}},
	}
	type kase struct {
		name string
		kind fault.Kind
		want string
	}
	var cases []kase
	pathOf := func(k fault.Kind) string {
		if fault.UsesProxy(k) {
			return PathToxiproxy
		}
		return PathDirect
	}
	for _, d := range fault.Defs() {
		name := d.Kind.Name()
		cases = append(cases, kase{name, d.Kind, pathOf(d.Kind)})
		for i, k := range samples[name] {
			cases = append(cases, kase{fmt.Sprintf("%s#%d", name, i+1), k, pathOf(k)})
		}
	}
	cases = append(cases, kase{"futureProxyKind", futureProxyKind{}, PathToxiproxy})
	// The decision is derived, but not vacuous: these three need the proxy.
	for _, k := range []fault.Kind{fault.Drop{}, fault.Reset{}, samples["toxics"][0]} {
		if pathOf(k) != PathToxiproxy {
			t.Fatalf("%s does not use the proxy", k.Name())
		}
	}
	outage := func(f scenario.Fault) *scenario.Outage {
		return &scenario.Outage{Phases: []scenario.Phase{{For: fault.Duration(time.Second), Mix: []scenario.MixEntry{{Weight: 1, Fault: f}}}}}
	}
	for _, c := range cases {
		f := scenario.Fault{Kind: c.kind}
		for _, where := range []struct {
			name string
			sc   scenario.Scenario
		}{
			{"attempts", scenario.Scenario{Attempts: []scenario.Fault{{}, f}}},
			{"outage", scenario.Scenario{Attempts: []scenario.Fault{{Kind: fault.Status{Status: 529}}}, Outage: outage(f)}},
		} {
			t.Run(c.name+"/"+where.name, func(t *testing.T) {
				sc := where.sc
				sc.Name = "path"
				e, err := StartEnv(t.Context(), EnvConfig{Scenario: &sc, Toxi: toxi})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				if got := e.Path(); got != c.want {
					t.Errorf("path = %s, want %s", got, c.want)
				}
				direct := e.BaseURL() == e.MockURL()
				if direct != (c.want == PathDirect) || (e.proxyName() == "") != direct {
					t.Errorf("base URL %s, mock %s, proxy %q: direct %v, want %s", e.BaseURL(), e.MockURL(), e.proxyName(), direct, c.want)
				}
			})
		}
	}
	if ps := ownProxies(t, toxi); len(ps) > 0 {
		t.Errorf("proxies left after Close: %v", ps)
	}
	for _, tc := range []struct {
		name  string
		sc    scenario.Scenario
		proxy ProxyMode
		want  string
	}{
		{"no faults", scenario.Scenario{}, "", PathDirect},
		{"limits", scenario.Scenario{Limits: &scenario.Account{RequestsPerMinute: 10}}, ProxyAuto, PathDirect},
		{"fleet", scenario.Scenario{Fleet: &scenario.Fleet{Clients: 3}, Attempts: []scenario.Fault{{Kind: fault.Status{Status: 429}}}}, "", PathDirect},
		{"always, no faults", scenario.Scenario{}, ProxyAlways, PathToxiproxy},
		{"always, a fleet", scenario.Scenario{Fleet: &scenario.Fleet{Clients: 3}}, ProxyAlways, PathToxiproxy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := tc.sc
			sc.Name = "path"
			e, err := StartEnv(t.Context(), EnvConfig{Scenario: &sc, Toxi: toxi, Proxy: tc.proxy})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if got := e.Path(); got != tc.want {
				t.Errorf("path = %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("bad mode", func(t *testing.T) {
		_, err := StartEnv(t.Context(), EnvConfig{Scenario: &scenario.Scenario{Name: "path"}, Toxi: toxi, Proxy: "sometimes"})
		if err == nil || !strings.Contains(err.Error(), "always") {
			t.Errorf("err = %v, want one naming the modes", err)
		}
	})
	t.Run("no Toxiproxy", func(t *testing.T) {
		e, err := StartEnv(t.Context(), EnvConfig{Scenario: &scenario.Scenario{Name: "path"}})
		if err != nil {
			t.Fatalf("a direct scenario needs no Toxiproxy: %v", err)
		}
		e.Close()
		_, err = StartEnv(t.Context(), EnvConfig{Scenario: &scenario.Scenario{Name: "path", Attempts: []scenario.Fault{{Kind: fault.Reset{}}}}})
		if err == nil {
			t.Errorf("a reset scenario started without a Toxiproxy")
		}
	})
}

// TestDirectNeverTouchesToxiproxy: the clients of a scenario served direct
// talk to the mock: the Toxiproxy has no proxy at all (nothing listens
// for it) while they run, fresh and pooled connections alike, and every
// attempt is journaled as through the proxy.
func TestDirectNeverTouchesToxiproxy(t *testing.T) {
	toxi := startToxi(t)
	e := startEnv(t, toxi, wire.ProviderAnthropic, scenario.Fault{Kind: fault.Status{Status: 529}}, scenario.Fault{Kind: fault.SSEError{AfterEvents: 2}})
	if e.Path() != PathDirect || e.BaseURL() != e.MockURL() {
		t.Fatalf("path %s, base URL %s, mock %s", e.Path(), e.BaseURL(), e.MockURL())
	}
	if !slices.Contains(e.ClientEnv(), "ANTHROPIC_BASE_URL="+e.MockURL()) {
		t.Errorf("client env %v lacks the mock's URL", e.ClientEnv())
	}
	if ps := ownProxies(t, toxi); len(ps) > 0 {
		t.Fatalf("proxies on the Toxiproxy: %v", ps)
	}
	var got []int
	resp, _, err := post(t, t.Context(), e.BaseURL(), wire.PathAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, resp.StatusCode)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	for range 3 {
		status, _, err := postReuse(t, c, e.BaseURL())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, status)
	}
	if diff := cmp.Diff([]int{529, 200, 200, 200}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	as := waitAttempts(t, e, 4)
	if len(as) != 4 || as[1].Fault != "sseError" {
		t.Errorf("attempts = %+v", as)
	}
	if ps := ownProxies(t, toxi); len(ps) > 0 {
		t.Errorf("proxies on the Toxiproxy: %v", ps)
	}
	if !strings.Contains(e.log.String(), "direct (no fault needs the proxy)") {
		t.Errorf("the log does not say the path:\n%s", e.log.String())
	}
}

// TestPathsAgree: what a client meets and what the journal records are the
// same on both paths, for the kinds the mock makes itself: the status, the
// body's length, the error the client reads, the fault, status, bytes and
// closer journaled.
func TestPathsAgree(t *testing.T) {
	toxi := startToxi(t)
	type met struct {
		Status   int
		BodyLen  int
		Err      string
		Fault    string
		JStatus  int
		Bytes    int64
		ClosedBy string
	}
	errClass := func(err error) string {
		switch {
		case err == nil:
			return ""
		case errors.Is(err, context.DeadlineExceeded):
			return "deadline"
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return "EOF"
		}
		return err.Error()
	}
	cases := []struct {
		name   string
		faults []scenario.Fault
		pooled bool          // the last attempt goes out on the connection of the one before
		giveUp time.Duration // the client's timeout; 0: none
	}{
		{"ok", nil, false, 0},
		{"529", []scenario.Fault{{Kind: fault.Status{Status: 529}}}, false, 0},
		{"sseError", []scenario.Fault{{Kind: fault.SSEError{AfterEvents: 3, Type: "overloaded_error"}}}, false, 0},
		{"truncate", []scenario.Fault{{Kind: fault.Truncate{AfterEvents: 3}}}, false, 0},
		{"latency", []scenario.Fault{{Kind: fault.Latency{D: fault.Duration(30 * time.Millisecond)}}}, false, 0},
		{"slow", []scenario.Fault{{Kind: fault.Slow{PerEvent: fault.Duration(time.Millisecond)}}}, false, 0},
		{"hang", []scenario.Fault{{Kind: fault.Hang{}}}, false, 200 * time.Millisecond},
		{"closeIdle", []scenario.Fault{{}, {Kind: fault.CloseIdle{}}}, true, 0},
		{"ok pooled", []scenario.Fault{{}, {}}, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := map[ProxyMode]met{}
			for _, mode := range []ProxyMode{ProxyAuto, ProxyAlways} {
				e := startEnvWith(t, EnvConfig{Toxi: toxi, Proxy: mode,
					Scenario: &scenario.Scenario{Name: strings.ReplaceAll(t.Name(), "/", "_"), Attempts: tc.faults}})
				if want := map[ProxyMode]string{ProxyAuto: PathDirect, ProxyAlways: PathToxiproxy}[mode]; e.Path() != want {
					t.Fatalf("%s: path %s, want %s", mode, e.Path(), want)
				}
				var m met
				var err error
				start := time.Now()
				var resp *http.Response
				var body []byte
				if tc.pooled {
					c := &http.Client{Transport: &http.Transport{}}
					if _, _, err := postReuse(t, c, e.BaseURL()); err != nil {
						t.Fatal(err)
					}
					waitAttempts(t, e, 1)
					m.Status, _, err = postReuse(t, c, e.BaseURL())
					c.CloseIdleConnections()
				} else {
					ctx := t.Context()
					if tc.giveUp > 0 {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, tc.giveUp)
						defer cancel()
					}
					resp, body, err = post(t, ctx, e.BaseURL(), wire.PathAnthropic)
					if resp != nil {
						m.Status = resp.StatusCode
					}
					m.BodyLen = len(body)
				}
				m.Err = errClass(err)
				as := waitAttempts(t, e, max(1, len(tc.faults)))
				a := as[len(as)-1]
				m.Fault, m.JStatus, m.Bytes, m.ClosedBy = a.Fault, a.Status, a.Bytes, a.ClosedBy
				got[mode] = m
				if a.Ended.Before(a.Arrived) || a.Connected.After(a.Arrived) {
					t.Errorf("%s: connected %v, arrived %v, ended %v", mode, a.Connected, a.Arrived, a.Ended)
				}
				if tc.giveUp > 0 && a.Ended.Before(start.Add(tc.giveUp)) {
					t.Errorf("%s: ended %v after the request began, before the client gave up (%v)", mode, a.Ended.Sub(start), tc.giveUp)
				}
			}
			if diff := cmp.Diff(got[ProxyAlways], got[ProxyAuto]); diff != "" {
				t.Errorf("direct differs from the proxy path (-proxy +direct):\n%s", diff)
			}
			if tc.name == "closeIdle" && (got[ProxyAuto].Err != "EOF" || got[ProxyAuto].ClosedBy != trace.ClosedByServer) {
				t.Errorf("closeIdle: %+v, want EOF closed by the server", got[ProxyAuto])
			}
		})
	}
}

// TestDirectEndsAtLastByte: on the direct path an attempt the mock answered
// whole ends once its last byte is written, whether or not the client
// closes the connection after it (through the proxy, Toxiproxy closes it
// for the client); one the client leaves (hang) ends when it closes.
func TestDirectEndsAtLastByte(t *testing.T) {
	e := startEnvWith(t, EnvConfig{Scenario: &scenario.Scenario{Name: t.Name(),
		Attempts: []scenario.Fault{{Kind: fault.Status{Status: 529}}, {Kind: fault.Hang{}}}}})
	c, err := net.Dial("tcp", strings.TrimPrefix(e.BaseURL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"model":"claude-haiku-4-5","max_tokens":64,"messages":[]}`
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", wire.PathAnthropic, len(body), body)
	b, err := io.ReadAll(c) // to the mock's FIN; the connection stays open
	if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 529") {
		t.Fatalf("read %q, %v", b, err)
	}
	as := waitAttempts(t, e, 1)
	if a := as[0]; a.Status != 529 || a.ClosedBy != trace.ClosedByServer || a.Bytes != int64(len(b)) {
		t.Errorf("attempt 1 = %+v, read %d bytes", a, len(b))
	}
	h, err := net.Dial("tcp", strings.TrimPrefix(e.BaseURL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(h, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", wire.PathAnthropic, len(body), body)
	gaveUp := time.Now()
	h.Close()
	as = waitAttempts(t, e, 2)
	if a := as[1]; a.ClosedBy != trace.ClosedByClient || a.Ended.Before(gaveUp) {
		t.Errorf("hang = %+v, want ended by the client at or after %v", a, gaveUp)
	}
}
