package mock

import (
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// The mock's responses are rendered byte for byte by package
// internal/wire, one file per wire format behind wire.Format; this
// file maps an attempt and its fault to what that package needs.

// respParams is what varies between two responses of the mock: the wire
// format (a provider name), the request's model and id, the time, the
// attempt's fault and what the request asked for.
type respParams struct {
	provider  string
	model     string
	requestID string
	now       time.Time
	fault     scenario.Fault
	asks      wire.Asks       // what the request asked of the answer's shape
	models    []string        // the scenario's models, for a model list
	rate      *wire.RateLimit // the provider account's state (account.go); nil: none
	keep      bool            // the connection is kept alive after the answer
}

// wire is p in the terms of package wire; the response is sent keep-alive
// when the fault's kind means to cut it (fault.Cutter) or the connection
// is kept alive after it (Env.keepAlive).
func (p respParams) wire() wire.Params {
	return wire.Params{Format: wire.Must(p.provider), Model: p.model, RequestID: p.requestID, Now: p.now, Fault: fault.WireFault(p.fault.Kind),
		Asks: p.asks, Models: p.models, KeepAlive: p.keep || fault.CutsResponse(p.fault.Kind), RateLimit: p.rate}
}

// response is a rendered response (head and body pieces).
type response = wire.Response

// okResponse renders a success: an event stream, or one JSON body when the
// request did not ask for a stream. An sseError fault always streams.
func okResponse(p respParams) *response { return wire.OK(p.wire()) }

// streamResponse renders a 200 event stream (with an sseError fault, cut
// after its events by the format's in-stream error).
func streamResponse(p respParams) *response { return wire.Stream(p.wire()) }

// errorResponse renders a status fault: a JSON error body in the format's
// shape, Retry-After as written, the extra headers as written.
func errorResponse(p respParams) *response { return wire.Error(p.wire()) }

// notFoundResponse answers a request the mock does not serve: 405 (with
// Allow: POST) for another method on a served path, else 404.
func notFoundResponse(p respParams, method, path string) *response {
	return wire.NotFound(p.wire(), method, path)
}
