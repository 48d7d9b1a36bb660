package wire

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Format is one wire format the mock speaks: one file per format
// (anthropic.go, openai.go, ...), listed in formats. What every format
// shares (the status line, chunk framing, Content-Length, Connection,
// Retry-After and the scenario's extra headers, cutting a stream for an
// sseError fault, the byte offsets of a drop) is written once, in wire.go;
// a format only says what differs.
type Format interface {
	// Answers reports whether a request with this method and path asks
	// this format for an answer (an attempt, unless the scenario's
	// attemptsMatch says otherwise). Another method on a path for which
	// Answers(POST, path) holds is answered 405.
	Answers(method, path string) bool
	// Route names the requests Answers accepts, for messages:
	// "POST /v1/messages".
	Route() string
	// DefaultModel is the model a scenario of this format names when it
	// names none.
	DefaultModel() string
	// Read returns what the answer depends on, from the request's URL
	// (never nil) and body: the model, whether it streams, the last user
	// message. A body that is not what the format expects gives the zero
	// Request; nothing panics (FuzzReadRequest).
	Read(u *url.URL, body []byte) Request
	// Headers returns the format's own headers of a response with this
	// status (200 for a success): its request id first, then version and
	// rate-limit headers, in the order sent (an error's retry-after goes
	// right after the request id).
	Headers(p Params, status int) []Header
	// Events returns the events of a successful stream in order, each one
	// complete SSE event ("event: ...\ndata: ...\n\n"); the last ones end
	// the stream (message_stop, data: [DONE], response.completed). Each is
	// sent as one chunk, so the byte offsets of the faults that count
	// events (sseError.afterEvents, drop.afterEvents) follow from them.
	Events(p Params) []string
	// StreamError returns the event (or events) an sseError fault sends
	// after the first n events of Events, ending the stream.
	StreamError(p Params, n int) string
	// Closing returns how many of the last events of Events close the
	// stream (message_delta and message_stop; the finish_reason chunk, the
	// usage chunk and data: [DONE]; response.completed; the chunk with
	// finishReason): a client that has not read them must take the answer
	// for incomplete. A truncate fault leaves them out (cut.go).
	Closing(p Params) int
	// Malformed returns the event a malformed fault sends after the first
	// n events of Events: the format's text-delta event with its data cut
	// mid-JSON (cutData), in the format's own framing.
	Malformed(p Params, n int) string
	// Keepalive returns the event a stream of this format carries while
	// nothing else is sent (a stall fault sends it every keepalive
	// interval): a whole SSE event or comment, sent as one chunk, that a
	// client of the format must read and drop.
	Keepalive() string
	// Message returns the JSON body of a successful answer that does not
	// stream, "\n" included.
	Message(p Params) string
	// ErrorBody returns the JSON body of an error response with status
	// p.Fault.Status, "\n" included.
	ErrorBody(p Params) string
	// Side answers a request that an agent makes beside the answer (a
	// model list, a token count): its status and JSON body ("\n"
	// included), ok false when the format has no such request.
	Side(method, path string, p Params) (status int, body string, ok bool)
	// Client says how a client of this format is pointed at the mock.
	Client() Client
}

// Client is a format's side of the client's environment: the variables
// its official SDKs (and the agents built on them) read to find the
// provider and its key, and the retry core's preset of that SDK. The
// harness, the probe and the OTLP mapping ask the formats for these
// instead of keeping lists of their own.
type Client struct {
	// BaseURLVar names the variable that holds the provider's base URL:
	// ANTHROPIC_BASE_URL.
	BaseURLVar string
	// BasePath is what the base URL holds past the server's address: "/v1"
	// when the SDKs append paths relative to it (OPENAI_BASE_URL), "" when
	// they append the whole path (/v1/messages).
	BasePath string
	// KeyVar names the variable that holds the API key: ANTHROPIC_API_KEY.
	KeyVar string
	// SDKPreset names the retry core's preset of the format's official SDK
	// (retry.Preset): what a scenario's client gets when it names no policy.
	SDKPreset string
}

// Request is what the mock reads of a request: what shapes its answer, and
// the text of its last user message for the journal.
type Request struct {
	Model        string
	Stream       bool
	IncludeUsage bool   // OpenAI chat: stream_options.include_usage
	WantsJSON    bool   // Gemini: generationConfig.responseMimeType application/json
	Prompt       string // the last user message's text, whole
	Tools        bool   // the request offers the model tools (OffersTools)
}

// Asks is what a request asks of the answer's shape, beside its model: the
// part of Request a response depends on (Params.Asks). A format that reads
// a new such flag adds it here and sets it in its Read; the mock passes it
// on whole.
type Asks struct {
	// NonStream is set when the request did not ask for a stream
	// ("stream" absent or false, the APIs' default): a success is then one
	// JSON body, as the real APIs answer.
	NonStream bool
	// IncludeUsage is the OpenAI chat request's
	// stream_options.include_usage: every chunk then carries "usage": null
	// and a last chunk with empty choices carries the usage, before data:
	// [DONE].
	IncludeUsage bool
	// WantsJSON is set when the request asks for a JSON answer (Gemini's
	// responseMimeType application/json, as Gemini CLI's routing call
	// does): without a scenario's text, the answer's text is then {}, which
	// parses, instead of the mock's prose, which a client would retry.
	WantsJSON bool
}

// Asks returns what r asks of the answer's shape.
func (r Request) Asks() Asks {
	return Asks{NonStream: !r.Stream, IncludeUsage: r.IncludeUsage, WantsJSON: r.WantsJSON}
}

// OffersTools reports whether a request body offers the model tools: a
// non-empty top-level "tools" array, where the Anthropic, OpenAI chat,
// Responses and Gemini APIs all put them.
func OffersTools(body []byte) bool {
	var v struct {
		Tools []json.RawMessage `json:"tools"`
	}
	return json.Unmarshal(body, &v) == nil && len(v.Tools) > 0
}

// registry lists the wire formats by a scenario's provider: name. A new
// format is one file and one entry here. The order is the order a
// client's environment lists their variables in (ClientEnv).
var registry = []struct {
	name   string
	format Format
}{
	{ProviderAnthropic, anthropic{}},
	{ProviderOpenAI, openai{}},
	{ProviderResponses, responses{}},
	{ProviderGemini, gemini{}},
}

// formats maps a provider name to its format.
var formats = func() map[string]Format {
	m := make(map[string]Format, len(registry))
	for _, r := range registry {
		m[r.name] = r.format
	}
	return m
}()

// order is the order formats are tried in when a request is recognised:
// by name, so that the result never depends on map order.
var order = func() []string {
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}()

// Names returns the provider names of the formats the mock speaks, sorted.
func Names() []string { return append([]string(nil), order...) }

// Lookup returns the format of a scenario's provider name; an unknown name
// is an error that lists the known ones.
func Lookup(name string) (Format, error) {
	if f, ok := formats[name]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("unknown provider %q (the mock speaks %s)", name, strings.Join(order, ", "))
}

// Must is Lookup for a name known to be valid (a loaded scenario's); it
// panics otherwise.
func Must(name string) Format {
	f, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return f
}

// Recognize returns the format that answers a request with this method and
// path, and its provider name.
func Recognize(method, path string) (string, Format, bool) {
	for _, n := range order {
		if f := formats[n]; f.Answers(method, path) {
			return n, f, true
		}
	}
	return "", nil, false
}

// Routes lists every format's Route, for messages.
func Routes() string {
	rs := make([]string, 0, len(order))
	for _, n := range order {
		rs = append(rs, formats[n].Route())
	}
	return strings.Join(rs, ", ")
}
