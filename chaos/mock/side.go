package mock

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// Side requests are what an agent sends beside its answer request: a token
// count, a model list, a WebSocket upgrade it falls back from, a health
// probe, a routing call to a small model (an answer request that the
// scenario's attemptsMatch does not match), or a request to a path the
// mock does not serve. Each is answered at once, consumes no fault and is
// journaled as a MockRequest with side: true (attempt 0). The toxics on the
// proxy act on it like on any connection.

// SideRequest is what the mock saw of one side request.
type SideRequest struct {
	Method, Path, Model string
	Status              int
}

// healthPaths are the GET paths answered as a health probe (HEAD is, on
// any path).
var healthPaths = []string{"/", "/health", "/healthz"}

// serveSide answers a side request and journals it; format is the wire
// format that answers the request ("" when none does) and rb what it read.
func (e *Env) serveSide(c net.Conn, req *http.Request, body []byte, arrived time.Time, format string, rb wire.Request) {
	p := respParams{provider: e.provider, requestID: "req_mock" + e.tag + "000000", now: e.now(), models: e.models()}
	method, reqPath := req.Method, req.URL.Path
	var resp *response
	switch {
	case format != "":
		p.provider, p.model, p.asks = format, redact.RedactSecrets(rb.Model), rb.Asks()
		resp = okResponse(p)
	case strings.EqualFold(req.Header.Get("Upgrade"), "websocket"):
		resp = wire.RefuseUpgrade(p.wire(), reqPath)
	case method == http.MethodHead || method == http.MethodGet && scenario.Contains(healthPaths, reqPath):
		resp = wire.Health(p.wire(), method)
	default:
		var ok bool
		if resp, ok = wire.Side(p.wire(), method, reqPath); !ok {
			resp = notFoundResponse(p, method, reqPath)
		}
	}
	e.journalSide(req, body, arrived, rb, resp.Status)
	e.logf("%s %s: side request, answered %d", Printable(method), Printable(redact.RedactSecrets(reqPath)), resp.Status)
	st := &attemptState{peerGone: make(chan struct{})}
	e.write(c, st, resp)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// journalSide journals a side request and keeps it for SideRequests.
func (e *Env) journalSide(req *http.Request, body []byte, arrived time.Time, rb wire.Request, status int) {
	sr := SideRequest{Method: req.Method, Path: redact.RedactSecrets(req.URL.Path), Model: redact.RedactSecrets(rb.Model), Status: status}
	mr := trace.MockRequest{Side: true, Method: sr.Method, Path: sr.Path, Model: sr.Model, Status: status,
		ArrivedAt: arrived.UTC(), Prompt: redact.RedactSecrets(rb.Prompt)}
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		mr.BodySHA256 = hex.EncodeToString(sum[:])
	}
	e.journal(trace.TypeMockRequest, mr)
	e.mu.Lock()
	e.sides = append(e.sides, sr)
	e.mu.Unlock()
}

// SideRequests returns the side requests the mock has answered so far.
func (e *Env) SideRequests() []SideRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]SideRequest(nil), e.sides...)
}

// models are the scenario's models, for a model list: its model, its
// escalation ladder and its fallbacks, each once.
func (e *Env) models() []string {
	sc := e.cfg.Scenario
	var out []string
	for _, m := range append([]string{sc.Model}, append(sc.Client.Escalation,
		sc.Client.Fallback.LargeContext, sc.Client.Fallback.Error, sc.Client.Fallback.ProviderModel)...) {
		if m != "" && !scenario.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// Printable makes text a request carried (a method, a decoded path, a
// model) safe for a log line or a terminal: invalid UTF-8, control
// characters (C0 with ESC, BEL, newlines and tabs, DEL, C1: a %0A in a
// Gemini model name) and invisible format characters (bidirectional
// overrides, zero-width characters, U+2028/U+2029) are replaced by U+FFFD,
// so that a hostile request can neither forge a line of mock.log nor move,
// recolour or reorder what chaos serve prints.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
