package fault

import (
	"testing"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/provider"
)

// A context overflow is a 400 the retry core reads as context_too_long,
// which no seed policy retries; so is a status fault's errorType:
// context_length.
func TestContextOverflowFailure(t *testing.T) {
	t.Parallel()
	for _, k := range []Kind{ContextOverflow{}, ContextOverflow{Form: "maxTokens", Message: "input length and `max_tokens` exceed context limit: 1 + 2 > 2"},
		Status{Status: 400, ErrorType: "context_length"}} {
		pe := &provider.Error{}
		Failure(k, pe, Met{})
		if c := retry.Classify(pe); pe.Kind != provider.KindHTTP || pe.Status != 400 || c.Type != retry.ContextTooLong || c.Class != retry.NonRetryable {
			t.Errorf("%s: %+v classified %s (%s), want a 400 context_too_long, non-retryable", Describe(k), pe, c.Type, c.Class)
		}
	}
}

// An sseError met by a request that did not ask for a stream is the HTTP
// error the mock sent (its status in Met), not an in-stream error.
func TestSSEErrorFailureNotStreamed(t *testing.T) {
	t.Parallel()
	s := SSEError{AfterEvents: 2}
	pe := &provider.Error{}
	Failure(s, pe, Met{Status: 529})
	if c := retry.Classify(pe); pe.Kind != provider.KindHTTP || pe.Streamed || c.Type != retry.Overloaded || c.Streamed {
		t.Errorf("not streamed: %+v classified %s streamed %v, want a KindHTTP 529, overloaded", pe, c.Type, c.Streamed)
	}
	pe = &provider.Error{}
	Failure(s, pe, Met{Status: 200})
	if pe.Kind != provider.KindSSEError || !pe.Streamed {
		t.Errorf("streamed: %+v, want the in-stream error", pe)
	}
}
