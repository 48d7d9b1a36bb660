package fault

import (
	"fmt"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/internal/yamldiag"
	"github.com/retrylab/retrylab/retry/provider"
)

// Truncate is a 200 that ends cleanly, before its end: the stream's first
// AfterEvents events, then the chunked terminator, without the events that
// close it (Anthropic's message_delta with its stop_reason and
// message_stop; OpenAI chat's finish_reason chunk and data: [DONE]; the
// Responses API's response.completed; Gemini's chunk with finishReason).
// This is seed 000's "stream ended without stop_reason": only a client that
// checks for the closing events notices, and it should retry (a transient
// stream failure, provider.KindIncomplete). AfterEvents past the events
// before the closing ones is clamped to them: the closing events are never
// sent. A request that did not ask for a stream gets the provider's answer
// cut by its output limit: half the text, with stop_reason max_tokens
// (finish_reason length, status incomplete, finishReason MAX_TOKENS).
type Truncate struct {
	AfterEvents int `yaml:"afterEvents"`
}

func init() { Register(Def{Kind: Truncate{}, Order: 92, Decode: decodeTruncate}) }

func decodeTruncate(m *Mapping) Kind {
	var t *Truncate
	m.Decode("truncate", &t)
	if !hasAfterEvents(m, "truncate", "the number of whole events sent before the response ends: truncate: {afterEvents: 3}") {
		return nil
	}
	if t == nil {
		return nil // a problem the loader reported
	}
	return *t
}

// hasAfterEvents reports whether the kind's mapping gives afterEvents, and
// records a problem when it does not: a cut with no count would be a guess.
func hasAfterEvents(m *Mapping, kind, hint string) bool {
	v := m.Value(kind)
	fs := yamldiag.Fields(v)
	if _, ok := fs["afterEvents"]; ok {
		return true
	}
	if len(fs) > 0 {
		return false // its unknown keys are reported, with a "did you mean"
	}
	n := v
	if n == nil || n.Tag == "!!null" {
		n = m.Key(kind)
	}
	m.Errorf(n, yamldiag.Join(m.Path(kind), "afterEvents"), "give "+hint, "%s needs afterEvents", kind)
	return false
}

func (Truncate) Name() string { return "truncate" }

func (t Truncate) Describe() string { return fmt.Sprintf("truncate after %d events", t.AfterEvents) }

func (t Truncate) Wire(f *wire.Fault) { f.Truncate = &wire.Cut{AfterEvents: t.AfterEvents} }

// Failure: the stream ends without its closing events.
func (Truncate) Failure(pe *provider.Error, _ Met) {
	pe.Kind, pe.Streamed = provider.KindIncomplete, true
}
