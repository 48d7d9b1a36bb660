package mock

import (
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/trace"
)

// ServerAttempt is what the mock server saw of one attempt: one connection
// that carried a POST to a path the mock serves.
type ServerAttempt struct {
	// N is 1-based, in the order the mock finished reading the requests
	// (headers and body), not the order the connections arrived: of two
	// concurrent connections, the one that arrived later gets the smaller
	// N if its request was read first, so Arrived need not grow with N. A
	// connection that closes without a request while the next fault is raw
	// toxics is numbered when it closes.
	N      int
	Fault  string // Fault.Kind() of the fault this attempt met
	Status int    // HTTP status sent; 0 when no response was sent (hang, reset)
	Path   string // request path, secrets redacted; "" when no request arrived (reset)
	Model  string // the request body's model (secrets redacted)
	// Arrived is when the request's first byte reached the mock: the moment
	// the client sent it. Connected is when the connection was accepted,
	// which may be much earlier: a client may open a connection (a pool's
	// spare, or one its HTTP stack opens at once when it abandons a half-read
	// body) and send on it only after its backoff. Waits are measured from
	// Arrived. Without a request (raw toxics held it back) Arrived is
	// Connected.
	Arrived   time.Time
	Connected time.Time
	Ended     time.Time
	Bytes     int64  // response bytes that left toward the client (drop: at most the cut)
	ClosedBy  string // trace.ClosedByServer, ClosedByClient or ClosedByProxy
	RequestID string // the request-id / x-request-id header sent
	// BodySHA256 is the hex SHA-256 of the request body, and Prompt an
	// excerpt of its last user message's text (requestPrompt): what the
	// checks of expect.prompts read, e.g. that a retry carries the error
	// context of the attempt before it (seed 004 US-002).
	BodySHA256 string
	Prompt     string
	// RetryAfter is the Retry-After the mock stamped when it served the
	// attempt (Fault.RetryAfterDate), "" otherwise.
	RetryAfter string
	// Outage is what the attempt drew from the scenario's outage: (its
	// phase, mix entry and policy time since the outage began); nil when
	// the scenario has none or its attempts: list gave the fault.
	Outage *trace.OutageDraw
	// Limited is set when the scenario's provider account (limits:)
	// refused the attempt (account.go); nil when it was admitted or the
	// scenario has no limits.
	Limited *trace.Limited
	// Client is the fleet client that sent the attempt (1-based; fleet.go
	// says how the mock tells them apart), 0 outside a fleet or when the
	// request carried no fleet key; ClientN is the attempt's number among
	// that client's own (1-based), the k of the attempts: list it met.
	Client, ClientN int
	// OutputTokens are the answer's output tokens (one per word of its
	// text, as its usage reports them) in the pieces that left the mock.
	OutputTokens int64
}

// Succeeded reports whether the server delivered a complete response.
func Succeeded(a ServerAttempt) bool {
	if a.Status != 200 {
		return false
	}
	d, ok := fault.Lookup(a.Fault)
	return a.Fault == "" || ok && fault.Completes(d.Kind)
}
