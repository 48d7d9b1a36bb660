package chaos

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode"

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

// AttemptsMatch is the scenario key attemptsMatch: which answer requests
// are the scenario's attempts. Every field given must match; a request a
// wire format answers that does not match is a side request, answered
// with a success in its format.
type AttemptsMatch struct {
	Path   string `yaml:"path"`   // the request path, a path.Match pattern: /v1/responses, /v1beta/models/*
	Model  string `yaml:"model"`  // the request's model, a path.Match pattern: gpt-5*, claude-sonnet-4-5
	Stream *bool  `yaml:"stream"` // whether the request asked for a stream
	// Prompt is text the request's prompt (its last user message) must
	// contain: an agent's own calls beside the answer (a title, a memory
	// extraction, a summary), sent to the same path and model, carry
	// prompts of their own.
	Prompt string `yaml:"prompt"`
	// Tools is whether the request offers the model tools (a non-empty
	// top-level tools array, where all four wire formats put them): an
	// agent's turn does, its title call to the same model often does not
	// (opencode over an OpenAI-compatible provider).
	Tools *bool `yaml:"tools"`
}

// matches reports whether an answer request is an attempt; a nil
// AttemptsMatch matches every one.
func (m *AttemptsMatch) matches(reqPath string, rb wire.Request) bool {
	if m == nil {
		return true
	}
	if m.Prompt != "" && !strings.Contains(rb.Prompt, m.Prompt) {
		return false
	}
	if ok, _ := path.Match(m.Path, reqPath); m.Path != "" && !ok {
		return false
	}
	if ok, _ := path.Match(m.Model, rb.Model); m.Model != "" && !ok {
		return false
	}
	return (m.Stream == nil || *m.Stream == rb.Stream) && (m.Tools == nil || *m.Tools == rb.Tools)
}

// sideRequest is what the mock saw of one side request.
type sideRequest struct {
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
		p.provider, p.model, p.asks = format, redactSecrets(rb.Model), rb.Asks()
		resp = okResponse(p)
	case strings.EqualFold(req.Header.Get("Upgrade"), "websocket"):
		resp = wire.RefuseUpgrade(p.wire(), reqPath)
	case method == http.MethodHead || method == http.MethodGet && contains(healthPaths, reqPath):
		resp = wire.Health(p.wire(), method)
	default:
		var ok bool
		if resp, ok = wire.Side(p.wire(), method, reqPath); !ok {
			resp = notFoundResponse(p, method, reqPath)
		}
	}
	e.journalSide(req, body, arrived, rb, resp.Status)
	e.logf("%s %s: side request, answered %d", printable(method), printable(redactSecrets(reqPath)), resp.Status)
	st := &attemptState{peerGone: make(chan struct{})}
	e.write(c, st, resp)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// journalSide journals a side request and keeps it for sideRequests.
func (e *Env) journalSide(req *http.Request, body []byte, arrived time.Time, rb wire.Request, status int) {
	sr := sideRequest{Method: req.Method, Path: redactSecrets(req.URL.Path), Model: redactSecrets(rb.Model), Status: status}
	mr := trace.MockRequest{Side: true, Method: sr.Method, Path: sr.Path, Model: sr.Model, Status: status,
		ArrivedAt: arrived.UTC(), Prompt: redactSecrets(rb.Prompt)}
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		mr.BodySHA256 = hex.EncodeToString(sum[:])
	}
	e.journal(trace.TypeMockRequest, mr)
	e.mu.Lock()
	e.sides = append(e.sides, sr)
	e.mu.Unlock()
}

// sideRequests returns the side requests the mock has answered so far.
func (e *Env) sideRequests() []sideRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]sideRequest(nil), e.sides...)
}

// models are the scenario's models, for a model list: its model, its
// escalation ladder and its fallbacks, each once.
func (e *Env) models() []string {
	sc := e.cfg.Scenario
	var out []string
	for _, m := range append([]string{sc.Model}, append(sc.Client.Escalation,
		sc.Client.Fallback.LargeContext, sc.Client.Fallback.Error, sc.Client.Fallback.ProviderModel)...) {
		if m != "" && !contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// String says what attemptsMatch matches, for logs and errors.
func (m *AttemptsMatch) String() string {
	var parts []string
	if m.Path != "" {
		parts = append(parts, "path "+m.Path)
	}
	if m.Model != "" {
		parts = append(parts, "model "+m.Model)
	}
	if m.Stream != nil {
		parts = append(parts, fmt.Sprintf("stream %v", *m.Stream))
	}
	if m.Prompt != "" {
		parts = append(parts, fmt.Sprintf("prompt containing %q", m.Prompt))
	}
	if m.Tools != nil {
		parts = append(parts, fmt.Sprintf("tools %v", *m.Tools))
	}
	return strings.Join(parts, ", ")
}

// printable makes text a request carried (a method, a decoded path, a
// model) safe for a log line or a terminal: invalid UTF-8, control
// characters (C0 with ESC, BEL, newlines and tabs, DEL, C1: a %0A in a
// Gemini model name) and invisible format characters (bidirectional
// overrides, zero-width characters, U+2028/U+2029) are replaced by U+FFFD,
// so that a hostile request can neither forge a line of mock.log nor move,
// recolour or reorder what chaos serve prints.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
