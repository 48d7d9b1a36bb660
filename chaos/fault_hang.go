package chaos

import (
	"time"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// hangFault reads the request and never answers until the client gives up.
// To the client this is the same as an upstream timeout toxic, and the mock
// still journals the request's path and model and sees the exact moment the
// client closes.
type hangFault struct{ baseFault }

func (hangFault) describe(Fault) string { return "hang" }

func (hangFault) serve(s *serving) {
	s.e.journalRequest(s.st)
	s.e.logf("attempt %d: hang (holding the request until the client gives up)", s.n)
	s.finishWhenGone(trace.ClosedByClient)
}

func (hangFault) closedBy(bool) string { return trace.ClosedByClient }

func (hangFault) failure(_ Fault, pe *provider.Error, _ time.Time) { pe.Kind = provider.KindTimeout }
