package retry

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/retrylab/retrylab/trace"
)

// TestLabelsInTrace: a request run under WithLabels carries its prompt
// pattern and tags on every RetryAttempt and on its ProviderRequestFinished;
// one without carries none.
func TestLabelsInTrace(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Model: "m", Trace: trace.NewWriter(&buf, "t"), Rand: fixedRand(0)}
		ctx := WithLabels(context.Background(), Labels{PromptPattern: "refactor", Tags: []string{"team:payments", " ", "ci"}})
		n := 0
		if err := r.Do(ctx, func(context.Context, Attempt) error {
			if n++; n == 1 {
				return httpErr(529)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := r.Do(context.Background(), func(context.Context, Attempt) error { return nil }); err != nil {
			t.Fatal(err)
		}
		evs := decodeEvents(t, buf.Bytes())
		ra := eventsOf[trace.RetryAttempt](t, evs, trace.TypeRetryAttempt)
		fin := eventsOf[trace.ProviderRequestFinished](t, evs, trace.TypeProviderRequestFinished)
		want := []string{"team:payments", "ci"}
		if len(ra) != 1 || ra[0].PromptPattern != "refactor" || !slices.Equal(ra[0].Tags, want) {
			t.Errorf("RetryAttempt = %+v, want the labels", ra)
		}
		if len(fin) != 2 || fin[0].PromptPattern != "refactor" || !slices.Equal(fin[0].Tags, want) || fin[1].PromptPattern != "" || fin[1].Tags != nil {
			t.Errorf("ProviderRequestFinished = %+v, want the labels on the first request only", fin)
		}
	})
}

// TestLabelsBounded: whatever the caller passes, labels stay small and
// valid UTF-8.
func TestLabelsBounded(t *testing.T) {
	t.Parallel()
	var tags []string
	for range 100 {
		tags = append(tags, strings.Repeat("é", 100))
	}
	l := LabelsFrom(WithLabels(context.Background(), Labels{PromptPattern: strings.Repeat("x", 1000) + "\xff", Tags: tags}))
	if len(l.PromptPattern) != MaxPromptPatternBytes || len(l.Tags) != MaxTags {
		t.Errorf("pattern %d bytes, %d tags: want %d and %d", len(l.PromptPattern), len(l.Tags), MaxPromptPatternBytes, MaxTags)
	}
	for _, tg := range l.Tags {
		if len(tg) > MaxTagBytes || !utf8.ValidString(tg) {
			t.Errorf("tag %q: %d bytes, valid %v", tg, len(tg), utf8.ValidString(tg))
		}
	}
	if got := LabelsFrom(context.Background()); got.PromptPattern != "" || got.Tags != nil {
		t.Errorf("no labels: %+v", got)
	}
}
