package fault

import (
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// CloseIdle is the stale pooled connection: the provider closed a
// keep-alive connection while it sat idle in the client's pool, and the
// client's next request goes out on it and meets a closed socket. The mock
// keeps a connection alive after a complete answer (as the providers do),
// so a pooling client sends this attempt on the connection of an earlier
// one; the mock reads the request, journals it and closes the connection
// without a byte. Through the proxy the client reads EOF before any
// response: Go's net/http and Node's undici do not resend a POST on their
// own, so the client's retry policy meets it. A client that opened a fresh
// connection for the attempt meets the same close.
type CloseIdle struct{}

func init() { Register(Def{Kind: CloseIdle{}, Order: 130, Decode: decodeCloseIdle}) }

// decodeCloseIdle decodes closeIdle: {} (or closeIdle: with nothing).
func decodeCloseIdle(m *Mapping) Kind {
	var c *struct{}
	m.Decode("closeIdle", &c)
	if c == nil {
		return nil
	}
	return CloseIdle{}
}

func (CloseIdle) Name() string     { return "closeIdle" }
func (CloseIdle) Describe() string { return "closeIdle" }

// Serve closes the connection at once, before any response byte.
func (CloseIdle) Serve(s Serving) {
	s.Abort("closeIdle: the connection is closed under the request")
}

func (CloseIdle) ClosedBy(bool) string { return trace.ClosedByServer }

func (CloseIdle) Failure(pe *provider.Error, _ Met) { pe.Kind = provider.KindEOF }
