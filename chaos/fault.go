package chaos

import (
	"time"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// faultKind is what one kind of fault does at each stage of an attempt:
// how it is described, which toxics it puts on the proxy before the attempt
// connects, how the mock answers it, who closes the connection, and which
// provider error a client meets. Each kind lives in its own file
// (fault_status.go, fault_drop.go …) and is listed in kindRegistry; a new kind
// is one file and one entry there, plus its key in scenario.go and its
// validation in load.go.
type faultKind interface {
	// describe says in a few words what an attempt meets (describeFault).
	describe(f Fault) string
	// preConnect returns the toxics that must be on the proxy before
	// attempt k (1-based) connects.
	preConnect(f Fault, k int) []toxicSpec
	// serve answers the attempt; it ends with s.finish.
	serve(s *serving)
	// closedBy says who closed the attempt's connection, given whether the
	// mock wrote its whole response.
	closedBy(wroteAll bool) string
	// cutsResponse reports whether the response is meant to be cut on its
	// way to the client: it is then sent keep-alive (the wire's KeepAlive).
	cutsResponse() bool
	// completes reports whether a 200 of this kind is a complete answer.
	completes() bool
	// withoutRequest reports whether a connection that closes before its
	// request arrives is the attempt (the request held back in the proxy).
	withoutRequest() bool
	// failure fills in the provider error a client meets (inferFailure);
	// ended is when the attempt ended, for a Retry-After date.
	failure(f Fault, pe *provider.Error, ended time.Time)
}

// kindRegistry maps Fault.Kind() to what the kind does.
var kindRegistry = map[string]faultKind{
	FaultOK:       okFault{},
	FaultStatus:   statusFault{},
	FaultSSEError: sseErrorFault{},
	FaultDrop:     dropFault{},
	FaultHang:     hangFault{},
	FaultReset:    resetFault{},
	FaultLatency:  latencyFault{},
	FaultToxics:   toxicsFault{},
}

// kindOf returns what f's kind does.
func kindOf(f Fault) faultKind { return kindRegistry[f.Kind()] }

// baseFault is the behaviour kinds share unless they say otherwise: no
// toxics before connecting, an ok response, closed by whoever finished.
type baseFault struct{}

func (baseFault) preConnect(Fault, int) []toxicSpec { return nil }
func (baseFault) serve(s *serving)                  { s.answer(okResponse(s.p), nil) }
func (baseFault) cutsResponse() bool                { return false }
func (baseFault) completes() bool                   { return false }
func (baseFault) withoutRequest() bool              { return false }

func (baseFault) closedBy(wroteAll bool) string {
	if wroteAll {
		return trace.ClosedByServer
	}
	return trace.ClosedByClient
}

func (baseFault) failure(_ Fault, pe *provider.Error, _ time.Time) { pe.Kind = provider.KindNetwork }

// describeFault says in a few words what one attempt meets, e.g.
// "529", "429 retry-after=2", "sseError overloaded_error after 3 events".
func describeFault(f Fault) string { return kindOf(f).describe(f) }

// preConnectToxics returns the toxics that must be on the proxy before
// attempt k (1-based) connects: reset_peer (it only acts on connections
// opened after it exists) and the scenario's raw toxics.
func preConnectToxics(f Fault, k int) []toxicSpec { return kindOf(f).preConnect(f, k) }

// succeeded reports whether the server delivered a complete response.
func succeeded(a ServerAttempt) bool {
	if a.Status != 200 {
		return false
	}
	k, ok := kindRegistry[a.Fault]
	return a.Fault == "" || ok && k.completes()
}

// okFault is a successful response (with ok.text, the text the scenario
// gives).
type okFault struct{ baseFault }

func (okFault) describe(Fault) string { return "ok" }
func (okFault) completes() bool       { return true }

// latencyFault is a successful response sent after a sleep.
type latencyFault struct{ baseFault }

func (latencyFault) describe(f Fault) string { return "latency " + f.Latency.String() }
func (latencyFault) completes() bool         { return true }

func (latencyFault) serve(s *serving) {
	s.answer(okResponse(s.p), func(*response) { s.sleep(s.f.Latency.D()) })
}
