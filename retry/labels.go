package retry

import (
	"context"
	"strings"
	"unicode/utf8"
)

// Labels tag a request for analysis (seed 004's "failure rate by prompt
// pattern"): the retry core writes them on the request's RetryAttempt and
// ProviderRequestFinished events, and `retrylab trace analyze --by
// promptPattern` and `retrylab trace failures` read them back.
type Labels struct {
	// PromptPattern names the kind of prompt, e.g. "refactor" or
	// "summarise-diff": a small set of values chosen by the caller.
	PromptPattern string
	// Tags are free labels ("team:payments", "ci").
	Tags []string
}

// Bounds of Labels: longer values are cut (at a rune boundary), further
// tags dropped, so that a caller's mistake cannot grow every event.
const (
	MaxPromptPatternBytes = 128
	MaxTags               = 16
	MaxTagBytes           = 64
)

type labelsKey struct{}

// WithLabels returns a context whose requests (Retrier.Do and Run under it)
// carry l in the trace, bounded by MaxPromptPatternBytes, MaxTags and
// MaxTagBytes; empty tags are dropped.
func WithLabels(ctx context.Context, l Labels) context.Context {
	out := Labels{PromptPattern: cut(strings.TrimSpace(l.PromptPattern), MaxPromptPatternBytes)}
	for _, t := range l.Tags {
		if t = cut(strings.TrimSpace(t), MaxTagBytes); t != "" && len(out.Tags) < MaxTags {
			out.Tags = append(out.Tags, t)
		}
	}
	return context.WithValue(ctx, labelsKey{}, out)
}

// LabelsFrom returns the labels WithLabels put in ctx (zero if none).
func LabelsFrom(ctx context.Context) Labels {
	l, _ := ctx.Value(labelsKey{}).(Labels)
	return l
}

// cut returns s cut to at most n bytes at a rune boundary, invalid UTF-8
// replaced.
func cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
