package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Message is one chat turn.
type Message struct{ Role, Content string }

// Request is one model call, provider-neutral.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	MaxTokens int // 0: DefaultMaxTokens
}

// DefaultMaxTokens is sent when Request.MaxTokens is 0 (the Anthropic API
// requires max_tokens).
const DefaultMaxTokens = 1024

// Usage counts tokens as the provider reported them (0 if not reported).
type Usage struct{ InputTokens, OutputTokens int }

// Response is the result of a successful, fully streamed attempt.
type Response struct {
	Text       string // every text delta, concatenated
	StopReason string // Anthropic stop_reason / OpenAI finish_reason
	RequestID  string // request-id / x-request-id header
	Model      string // the model the provider reported, else the requested one
	Usage      Usage
}

// Client makes exactly ONE attempt per call; it never retries. A failed
// attempt returns a *Error.
type Client interface {
	Stream(ctx context.Context, req Request) (*Response, error)
}

// Config configures a provider client.
type Config struct {
	// BaseURL is scheme://host[:port], e.g. http://127.0.0.1:1234; a
	// trailing /v1 (as OPENAI_BASE_URL usually has) is accepted too.
	// Empty: the provider's real API.
	BaseURL string
	// APIKey is sent as x-api-key (Anthropic) or Authorization: Bearer
	// (OpenAI). It never appears in an error.
	APIKey string
	// HTTPClient sends the requests. nil: a client with keep-alives disabled,
	// so every attempt opens its own TCP connection (which is what makes
	// per-connection TCP faults per-attempt).
	HTTPClient *http.Client
	// Timeout bounds one whole attempt, body included; 0 means none.
	Timeout time.Duration
	// OnText, if set, is called with each streamed text delta, in order, on
	// the goroutine that called Stream.
	OnText func(string)
}

// Default base URLs.
const (
	AnthropicBaseURL = "https://api.anthropic.com"
	OpenAIBaseURL    = "https://api.openai.com" // chat completions and Responses
)

// clients maps a provider name (a wire format) to its constructor. Each
// client's file registers itself in an init function, so a new wire format
// is one more file and touches no switch.
var clients = map[string]func(Config) Client{}

// register adds a client constructor; a name registered twice is a
// programming error.
func register(name string, newClient func(Config) Client) {
	if _, dup := clients[name]; dup {
		panic("provider: client " + name + " registered twice")
	}
	clients[name] = newClient
}

// Names returns the provider names New accepts, sorted.
func Names() []string {
	names := make([]string, 0, len(clients))
	for name := range clients {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// New returns the client of the named provider: "anthropic" (Messages
// API), "openai" (chat completions), "openai-responses" (Responses API) or
// "gemini" (the Gemini API).
// An unknown name is an error that lists the known ones.
func New(provider string, cfg Config) (Client, error) {
	if newClient, ok := clients[provider]; ok {
		return newClient(cfg), nil
	}
	return nil, fmt.Errorf("unknown provider %q (want one of: %s)", provider, strings.Join(Names(), ", "))
}

func defaultHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:              http.ProxyFromEnvironment,
		DisableKeepAlives:  true,
		DisableCompression: true, // gzip would hold back streamed events
		DialContext:        (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:  true,
	}}
}

// maxErrorBody bounds how much of a non-2xx body is read.
const maxErrorBody = 1 << 20

// errAttemptTimeout is the cause of the per-attempt context when
// Config.Timeout fires, which tells it apart from the caller's cancellation.
var errAttemptTimeout = errors.New("per-attempt timeout")

// wire is what differs between the two providers.
type wire interface {
	// request builds the HTTP request for req.
	request(ctx context.Context, req Request) (*http.Request, error)
	// httpError fills e from a non-2xx body.
	httpError(e *Error, body []byte)
	// event consumes one SSE event; done reports a complete response.
	event(st *streamState, ev SSEEvent) (done bool, err *Error)
	requestIDHeader() string
}

// streamState accumulates one attempt's response.
type streamState struct {
	resp     Response
	text     strings.Builder
	streamed bool
	onText   func(string)
	name     string
	key      string
}

func (st *streamState) addText(s string) {
	st.streamed = true
	if s == "" {
		return
	}
	st.text.WriteString(s)
	if st.onText != nil {
		st.onText(s)
	}
}

// base is the attempt machinery both clients share.
type base struct {
	name string
	cfg  Config
	hc   *http.Client
	w    wire
}

func newBase(name string, cfg Config, w wire) base {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	return base{name: name, cfg: cfg, hc: hc, w: w}
}

func (b *base) stream(ctx context.Context, req Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Kind: KindCanceled, Provider: b.name, Err: err}
	}
	actx := ctx
	if b.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeoutCause(ctx, b.cfg.Timeout, errAttemptTimeout)
		defer cancel()
	}
	hreq, err := b.w.request(actx, req)
	if err != nil {
		return nil, &Error{Kind: KindNetwork, Provider: b.name, Err: b.scrub(err)}
	}
	resp, err := b.hc.Do(hreq)
	if err != nil {
		return nil, b.transportError(ctx, actx, err, false, 0)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, b.httpError(resp)
	}
	return b.readStream(ctx, actx, req, resp)
}

// httpError is the error of a response with a status outside 2xx: its
// status, request id, Retry-After, x-should-retry and the provider's error
// body (read up to maxErrorBody), keys scrubbed.
func (b *base) httpError(resp *http.Response) *Error {
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{
		Kind:      KindHTTP,
		Provider:  b.name,
		Status:    resp.StatusCode,
		RequestID: resp.Header.Get(b.w.requestIDHeader()),
		Bytes:     int64(len(body)),
		Header:    resp.Header,
	}
	e.RetryAfter, e.RetryAfterRaw, e.HasRetryAfter = ParseRetryAfter(resp.Header, time.Now())
	switch strings.ToLower(strings.TrimSpace(resp.Header.Get("X-Should-Retry"))) {
	case "true":
		e.ShouldRetry = ptr(true)
	case "false":
		e.ShouldRetry = ptr(false)
	}
	b.w.httpError(e, body)
	if e.Message == "" && len(body) > 0 && !json.Valid(body) {
		e.Message = truncate(string(body), 500)
	}
	e.Message = b.scrubString(e.Message)
	if rerr != nil {
		e.Err = b.scrub(rerr)
	}
	return e
}

// readStream reads a 2xx event stream to its end: the response, or the
// error that cut it short (an SSE error event, a dropped connection, a
// stream that ended before its last event) with what had been streamed.
func (b *base) readStream(ctx, actx context.Context, req Request, resp *http.Response) (*Response, error) {
	st := &streamState{onText: b.cfg.OnText, name: b.name, key: b.cfg.APIKey}
	st.resp.RequestID = resp.Header.Get(b.w.requestIDHeader())
	st.resp.Model = req.Model
	cr := &countingReader{r: resp.Body}
	sse := NewSSEReader(cr)
	fail := func(e *Error) (*Response, error) {
		// Status stays 0: the attempt did not fail with an HTTP status, and a
		// trace's status field should not count failures as 200s.
		e.Provider = b.name
		e.RequestID = st.resp.RequestID
		e.Streamed = st.streamed
		e.Text = st.text.String()
		e.Bytes = cr.n
		e.Header = resp.Header
		e.Message = b.scrubString(e.Message)
		return nil, e
	}
	for {
		ev, err := sse.Next()
		if err == io.EOF {
			return fail(&Error{Kind: KindIncomplete, Message: "stream ended before the end of the response"})
		}
		if err != nil {
			return fail(b.transportError(ctx, actx, err, true, cr.n))
		}
		done, e := b.w.event(st, ev)
		if e != nil {
			return fail(e)
		}
		if done {
			st.resp.Text = st.text.String()
			return &st.resp, nil
		}
	}
}

// transportError classifies a transport failure. Caller cancellation wins
// over everything, then the per-attempt timeout, then the error itself.
// After a 2xx status (inBody), a failed body read is KindIncomplete with Err
// set, so that the classifier sees a mid-stream interruption; timeouts and
// cancellation keep their own kinds.
func (b *base) transportError(ctx, actx context.Context, err error, inBody bool, n int64) *Error {
	e := &Error{Provider: b.name, Err: b.scrub(err), Bytes: n}
	switch {
	case ctx.Err() != nil:
		e.Kind = KindCanceled
	case actx.Err() != nil && errors.Is(context.Cause(actx), errAttemptTimeout):
		e.Kind, e.AttemptTimeout = KindTimeout, true
	case isTimeout(err):
		e.Kind = KindTimeout
	case inBody:
		e.Kind = KindIncomplete
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Kind = KindRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		e.Kind = KindReset
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		e.Kind = KindEOF
	default:
		e.Kind = KindNetwork
	}
	return e
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errAttemptTimeout) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// scrub hides the API key (and anything like sk-...) in err's text while
// keeping errors.Is/As working through Unwrap.
func (b *base) scrub(err error) error {
	if err == nil {
		return nil
	}
	return &scrubbedError{err: err, key: b.cfg.APIKey}
}

func (b *base) scrubString(s string) string { return scrubKey(s, b.cfg.APIKey) }

func scrubKey(s, key string) string {
	if len(key) >= 4 {
		s = strings.ReplaceAll(s, key, "***")
	}
	return Redact(s)
}

type scrubbedError struct {
	err error
	key string
}

func (e *scrubbedError) Error() string { return scrubKey(e.err.Error(), e.key) }
func (e *scrubbedError) Unwrap() error { return e.err }

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func ptr[T any](v T) *T { return &v }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// postJSON builds a POST of v as JSON to url.
func postJSON(ctx context.Context, url string, v any) (*http.Request, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return req, nil
}

// parseErr reports malformed JSON in an event's data.
func parseErr(ev SSEEvent, err error) *Error {
	return &Error{Kind: KindParse, Message: fmt.Sprintf("malformed %s event data: %v: %q", ev.Event, err, truncate(ev.Data, 200))}
}

func trimBase(u, def string) string {
	if u == "" {
		u = def
	}
	// OPENAI_BASE_URL conventionally ends in /v1 (the OpenAI SDKs append
	// only /chat/completions); the clients add /v1 themselves.
	return strings.TrimSuffix(strings.TrimRight(u, "/"), "/v1")
}
