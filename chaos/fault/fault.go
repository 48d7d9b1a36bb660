// Package fault holds the fault kinds of retrylab's chaos scenarios: what
// one attempt of a client meets at the mock (a status, an SSE error event, a
// cut stream, a reset, a hang, a delay, raw Toxiproxy toxics, a plain ok).
//
// Each kind is one file of this package, the way Toxiproxy keeps its toxics:
// a type implementing Kind, and an init function that calls Register with
// its decoder. The kind decodes and validates its own keys of a fault
// mapping (attempts[k] of a scenario file) through the loader's Decoder, so
// its problems are reported at their own file, line and field with a hint,
// like every other problem of the file.
//
// Kind is small: a name and a description. What else a kind does is an
// optional interface, found by type assertion where it is used (as
// Toxiproxy's BufferedToxic and the standard library's io.WriterTo):
//
//   - the mock: PreConnecter (toxics put on the proxy before the attempt
//     connects), Server (how the attempt is answered), Wirer (what the wire
//     format renders), Stamper (a Retry-After date stamped on arrival),
//     Cutter (the response is meant to be cut), Closer (who closes the
//     connection), RequestOptional (the proxy may hold the request back),
//     ProxyUser (the kind puts toxics on the proxy at all);
//   - the verifier: Completer (a 200 of the kind is a complete answer),
//     Failer (the provider error a client meets), HTTPError (the status and
//     headers a client reads).
//
// The functions of the same names (PreConnect, Serve, ClosedBy, …) apply
// the kind's own behaviour or the default one, so callers never switch on a
// kind. A nil Kind is an ok attempt. This package does not import chaos;
// chaos imports it.
package fault

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// Kind is what one attempt meets: a value of a registered kind, decoded
// from its fault mapping.
type Kind interface {
	// Name is the key that names the kind in a fault mapping; the mock's
	// journal records it as the attempt's fault.
	Name() string
	// Describe says in a few words what an attempt meets, e.g. "529",
	// "429 retry-after=2", "sseError overloaded_error after 3 events".
	Describe() string
}

// Def registers a kind.
type Def struct {
	// Kind is the kind's zero value: its Name is the key that names it,
	// and its optional interfaces answer for a journaled attempt of the
	// kind (Completes).
	Kind Kind
	// Order places the kind in the lists of kinds and keys that messages
	// and hints give (the built-in kinds are 10, 20, … 80); ties by name.
	Order int
	// Keys are further keys of a fault mapping that belong to the kind
	// (status: retryAfter, headers …); they are decoded by Decode too.
	Keys []string
	// Decode decodes and validates the kind's keys of m, reporting problems
	// through m. It is called when m holds any of the kind's keys; it
	// returns nil when m does not make an attempt of the kind (status: 0,
	// drop: null), which is then ok.
	Decode func(m *Mapping) Kind
}

var (
	mu   sync.RWMutex
	defs = map[string]Def{}
)

// Register makes a kind known under d.Kind.Name(). It panics when the name
// or one of its keys is taken: a program with two kinds of one name is
// wrong, not unlucky.
func Register(d Def) {
	mu.Lock()
	defer mu.Unlock()
	name := d.Kind.Name()
	if _, dup := defs[name]; dup || d.Decode == nil {
		panic(fmt.Sprintf("fault: kind %q registered twice or without Decode", name))
	}
	for _, o := range defs {
		for _, k := range append([]string{name}, d.Keys...) {
			if k == o.Kind.Name() || slices.Contains(o.Keys, k) {
				panic(fmt.Sprintf("fault: key %q of kind %q is kind %q's", k, name, o.Kind.Name()))
			}
		}
	}
	defs[name] = d
}

// Lookup returns the registered kind named name.
func Lookup(name string) (Def, bool) {
	mu.RLock()
	defer mu.RUnlock()
	d, ok := defs[name]
	return d, ok
}

// Defs returns the registered kinds in Order.
func Defs() []Def {
	mu.RLock()
	out := make([]Def, 0, len(defs))
	for _, d := range defs {
		out = append(out, d)
	}
	mu.RUnlock()
	slices.SortFunc(out, func(a, b Def) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.Kind.Name(), b.Kind.Name()))
	})
	return out
}

// Names lists the kinds' names in Order.
func Names() []string {
	var out []string
	for _, d := range Defs() {
		out = append(out, d.Kind.Name())
	}
	return out
}

// Keys lists every key a fault mapping may hold: each kind's name followed
// by its further keys, in Order.
func Keys() []string {
	var out []string
	for _, d := range Defs() {
		out = append(append(out, d.Kind.Name()), d.Keys...)
	}
	return out
}

// orOK is k, or ok when k is nil.
func orOK(k Kind) Kind {
	if k == nil {
		return OK{}
	}
	return k
}

// NameOf is k's name, "ok" for nil.
func NameOf(k Kind) string { return orOK(k).Name() }

// Describe says what an attempt of kind k meets ("ok" for nil).
func Describe(k Kind) string { return orOK(k).Describe() }

// Duration is a time.Duration written in YAML as a Go duration string ("2s",
// "300ms"); the scenario loader decodes it (chaos.Duration is this type).
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// Toxic is a Toxiproxy toxic: one of a toxics fault, or one a kind puts on
// the proxy (PreConnect, Serving.AddToxics).
type Toxic struct {
	Type       string         `yaml:"type"`
	Name       string         `yaml:"name"`
	Stream     string         `yaml:"stream"` // upstream | downstream (default downstream)
	Toxicity   float32        `yaml:"toxicity"`
	Attributes map[string]any `yaml:"attributes"`
}

// Met is what the verifier knows of an attempt a client met.
type Met struct {
	// Ended is when the attempt ended, for a Retry-After date.
	Ended time.Time
	// RetryAfter is the Retry-After the mock stamped on the attempt (a
	// Stamper's), "" when none.
	RetryAfter string
	// Status is the HTTP status the mock sent (0 when none or unknown): an
	// sseError fault met by a request that did not ask for a stream is
	// answered with an error status, not a stream.
	Status int
}

// PreConnecter is a kind that puts toxics on the proxy before its attempt
// connects.
type PreConnecter interface {
	// PreConnect returns the toxics that must be on the proxy before
	// attempt n (1-based) connects.
	PreConnect(n int) []Toxic
}

// Server is a kind that answers its attempt itself; others get the ok
// answer of the wire format (with their Wire parameters).
type Server interface {
	// Serve answers the attempt; it ends by finishing it (Answer,
	// FinishWhenGone or Abort).
	Serve(s Serving)
}

// Wirer is a kind whose answer the wire format renders with parameters of
// its own (a status, an SSE error event, a text).
type Wirer interface{ Wire(f *wire.Fault) }

// Stamper is a kind whose answer depends on when its attempt arrived.
type Stamper interface {
	// Stamp returns the kind as served to an attempt that arrived then,
	// and the Retry-After it carries for the journal ("" for none).
	Stamp(arrived time.Time) (Kind, string)
}

// Cutter is a kind whose response is meant to be cut on its way to the
// client: it is sent keep-alive (wire.Params.KeepAlive).
type Cutter interface{ CutsResponse() bool }

// Closer is a kind that says who closed its attempt's connection, given
// whether the mock wrote its whole response.
type Closer interface{ ClosedBy(wroteAll bool) string }

// RequestOptional is a kind whose attempt may be a connection that closes
// before its request arrives (the request held back in the proxy).
type RequestOptional interface{ WithoutRequest() bool }

// ProxyUser is a kind that puts toxics on the proxy, before its attempt
// connects or while it is served: the mock then withholds the answer until
// the proxy is switched to the attempt. It is also what puts a scenario
// behind the proxy at all: one none of whose faults says UsesProxy is
// served straight by the mock, with no proxy (scenario.UsesProxy), so a
// kind with PreConnect toxics, or one that calls Serving.AddToxics, must
// say so.
type ProxyUser interface{ UsesProxy() bool }

// Completer is a kind a 200 of which is a complete answer.
type Completer interface{ Completes() bool }

// Failer is a kind that says which provider error a client meets.
type Failer interface {
	// Failure fills in pe, the provider error of an attempt met as m says.
	Failure(pe *provider.Error, m Met)
}

// HTTPError is a kind answered with an HTTP error status.
type HTTPError interface {
	HTTPStatus() int
	// ResponseHeaders are the response's headers a client reads (Retry-After,
	// x-should-retry …), for an attempt met as m says.
	ResponseHeaders(m Met) http.Header
}

// PreConnect returns the toxics k puts on the proxy before attempt n
// connects (none unless k is a PreConnecter).
func PreConnect(k Kind, n int) []Toxic {
	if p, ok := k.(PreConnecter); ok {
		return p.PreConnect(n)
	}
	return nil
}

// Serve answers s as k says, by default with the ok answer.
func Serve(k Kind, s Serving) {
	if sv, ok := k.(Server); ok {
		sv.Serve(s)
		return
	}
	s.Answer(false, nil)
}

// WireFault is what the wire format renders for k.
func WireFault(k Kind) wire.Fault {
	var f wire.Fault
	if w, ok := k.(Wirer); ok {
		w.Wire(&f)
	}
	return f
}

// Stamp is k as served to an attempt that arrived then, and the
// Retry-After it carries ("" for none).
func Stamp(k Kind, arrived time.Time) (Kind, string) {
	if s, ok := k.(Stamper); ok {
		return s.Stamp(arrived)
	}
	return k, ""
}

// CutsResponse reports whether k's response is meant to be cut.
func CutsResponse(k Kind) bool {
	c, ok := k.(Cutter)
	return ok && c.CutsResponse()
}

// ClosedBy says who closed an attempt of kind k: by default whoever
// finished, the server when it wrote everything, else the client.
func ClosedBy(k Kind, wroteAll bool) string {
	if c, ok := k.(Closer); ok {
		return c.ClosedBy(wroteAll)
	}
	if wroteAll {
		return trace.ClosedByServer
	}
	return trace.ClosedByClient
}

// WithoutRequest reports whether a connection that closes before its
// request arrives is an attempt of kind k.
func WithoutRequest(k Kind) bool {
	r, ok := k.(RequestOptional)
	return ok && r.WithoutRequest()
}

// UsesProxy reports whether k puts toxics on the proxy.
func UsesProxy(k Kind) bool {
	p, ok := k.(ProxyUser)
	return ok && p.UsesProxy()
}

// Completes reports whether a 200 of kind k is a complete answer (nil: ok,
// which is).
func Completes(k Kind) bool {
	c, ok := orOK(k).(Completer)
	return ok && c.Completes()
}

// Failure fills in pe, the provider error a client meets on an attempt of
// kind k met as m says: by default a network error.
func Failure(k Kind, pe *provider.Error, m Met) {
	if f, ok := k.(Failer); ok {
		f.Failure(pe, m)
		return
	}
	pe.Kind = provider.KindNetwork
}
