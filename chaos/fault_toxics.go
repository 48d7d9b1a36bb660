package chaos

import (
	"fmt"
	"strings"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// toxicsFault puts the scenario's raw Toxiproxy toxics on the proxy before
// the attempt connects; the mock answers ok and the toxics do the rest. They
// may hold the request back, so a connection that closes without one is the
// attempt.
type toxicsFault struct{ baseFault }

func (toxicsFault) describe(f Fault) string {
	var s []string
	for _, t := range f.Toxics {
		s = append(s, t.Type)
	}
	return "toxics " + strings.Join(s, "+")
}

// preConnect returns the scenario's toxics, named a<k>-<i>-<type> unless
// named, downstream unless said, with toxicity 1.0 unless said (0 would
// never fire).
func (toxicsFault) preConnect(f Fault, k int) []toxicSpec {
	var out []toxicSpec
	for i, tx := range f.Toxics {
		s := toxicSpec{name: tx.Name, typ: tx.Type, stream: tx.Stream, toxicity: tx.Toxicity, attrs: toxiclient.Attributes(tx.Attributes)}
		if s.name == "" {
			s.name = fmt.Sprintf("a%d-%d-%s", k, i, tx.Type)
		}
		if s.stream == "" {
			s.stream = "downstream"
		}
		if s.toxicity == 0 {
			s.toxicity = 1.0
		}
		if s.attrs == nil {
			s.attrs = toxiclient.Attributes{}
		}
		out = append(out, s)
	}
	return out
}

func (toxicsFault) closedBy(wroteAll bool) string {
	if !wroteAll {
		return trace.ClosedByProxy
	}
	return trace.ClosedByServer
}

func (toxicsFault) cutsResponse() bool   { return true }
func (toxicsFault) withoutRequest() bool { return true }

// failure is a network error, made more precise by the toxics' types (the
// last one that says something wins).
func (toxicsFault) failure(f Fault, pe *provider.Error, _ time.Time) {
	pe.Kind = provider.KindNetwork
	for _, t := range f.Toxics {
		switch t.Type {
		case "timeout":
			pe.Kind = provider.KindTimeout
		case "reset_peer":
			pe.Kind = provider.KindReset
		case "limit_data":
			pe.Kind = provider.KindIncomplete
		}
	}
}
