package fault

import (
	"fmt"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/retry/provider"
)

// Malformed is a 200 stream whose first AfterEvents events are followed by
// one event whose data is not valid JSON, then the clean end of the
// response: the format's text-delta event (Anthropic's event:
// content_block_delta, OpenAI chat's chunk, the Responses API's
// response.output_text.delta, Gemini's chunk) in its own framing, its data
// line cut mid-JSON. This is seed 000's malformed JSON, a permanent stream
// failure (provider.KindParse): resending the same request to a provider
// that sends broken JSON is not expected to help. AfterEvents past the
// events before the closing ones is clamped to them. A request that did not
// ask for a stream gets a 200 whose JSON body is cut in half, with a
// Content-Length that matches what is sent.
type Malformed struct {
	AfterEvents int `yaml:"afterEvents"`
}

func init() { Register(Def{Kind: Malformed{}, Order: 94, Decode: decodeMalformed}) }

func decodeMalformed(m *Mapping) Kind {
	var k *Malformed
	m.Decode("malformed", &k)
	if !hasAfterEvents(m, "malformed", "the number of whole events sent before the broken one: malformed: {afterEvents: 3}") {
		return nil
	}
	if k == nil {
		return nil // a problem the loader reported
	}
	return *k
}

func (Malformed) Name() string { return "malformed" }

func (k Malformed) Describe() string {
	return fmt.Sprintf("malformed event after %d events", k.AfterEvents)
}

func (k Malformed) Wire(f *wire.Fault) { f.Malformed = &wire.Cut{AfterEvents: k.AfterEvents} }

// Failure: an event's data does not parse.
func (Malformed) Failure(pe *provider.Error, _ Met) {
	pe.Kind, pe.Streamed = provider.KindParse, true
}
