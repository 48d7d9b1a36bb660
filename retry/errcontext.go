package retry

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/retrylab/retrylab/retry/provider"
)

// LogicalError is a response that arrived whole but that Retrier.Validate
// rejected: seed 004's "logical failure". It classifies as logical_failure
// (retryable; each policy says how often) and carries the rejected output,
// which the next Attempt shows as Previous.Output.
type LogicalError struct {
	Err    error  // what Validate returned
	Output string // the rejected response
}

func (e *LogicalError) Error() string { return "response rejected: " + e.Err.Error() }
func (e *LogicalError) Unwrap() error { return e.Err }

// Failure is one failed attempt as the next attempt sees it (seed 004 US-002:
// the error, the failed output, the earlier attempt kept in history).
type Failure struct {
	Attempt        int // 1-based number of the attempt that failed
	Provider       string
	Model          string
	Err            error
	Classification Classification
	// Output is the failed output: the response Validate rejected, or the
	// text that streamed before a provider failure ("" if none).
	Output string
}

// Logical reports a response the caller rejected, as opposed to an error of
// the provider or the network.
func (f Failure) Logical() bool { return f.Classification.Type == LogicalFailure }

// failedOutput is the output err carries: a rejected response, or the text
// a provider streamed before failing.
func failedOutput(err error) string {
	var le *LogicalError
	if errors.As(err, &le) {
		return le.Output
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		return pe.Text
	}
	return ""
}

// EnhancedRetryContext is seed 004's EnhancedRetryContext: what a retry with
// error context tells the model.
type EnhancedRetryContext struct {
	OriginalPrompt string
	FailedResponse string // "" when the attempt produced nothing
	ErrorMessage   string
	// StackTrace is shown under the error when set (US-002: "error message,
	// stack trace, and failed output"); the seed's function has none.
	StackTrace string
	ErrorType  FailureType // not shown; kept for the caller's own use
	Suggestion string
}

// EnhancedRetryPrompt is seed 004's buildEnhancedRetryPrompt, character for
// character: the error, the failed output when there is one, a clear
// instruction to avoid the issue, the suggestion, then the original request;
// leading and trailing white space trimmed.
func EnhancedRetryPrompt(c EnhancedRetryContext) string {
	var b strings.Builder
	b.WriteString("Previous attempt failed with the following error:\n---\nError: ")
	b.WriteString(c.ErrorMessage)
	if c.StackTrace != "" {
		b.WriteString("\nStack trace:\n" + c.StackTrace)
	}
	b.WriteString("\n")
	if c.FailedResponse != "" {
		b.WriteString("\nFailed output:\n" + c.FailedResponse)
	}
	b.WriteString("\n---\n\nPlease try again, avoiding the issue that caused the failure.\n")
	b.WriteString(c.Suggestion)
	b.WriteString("\n\nOriginal request:\n")
	b.WriteString(c.OriginalPrompt)
	return strings.TrimSpace(b.String())
}

// MaxFailedOutput bounds the failed output Attempt.Prompt quotes, in runes:
// seed 004's risk "context too long after retries", mitigated by truncating
// the retry context.
const MaxFailedOutput = 4000

// Prompt is the prompt of this attempt: original on the first attempt, else
// EnhancedRetryPrompt built from Previous (its message, its failed output
// cut to MaxFailedOutput runes, and suggestion). Callers of a Retrier with
// ErrorContext set build each attempt's request with it.
func (a Attempt) Prompt(original, suggestion string) string {
	if a.Previous == nil {
		return original
	}
	return EnhancedRetryPrompt(EnhancedRetryContext{
		OriginalPrompt: original,
		FailedResponse: truncateRunes(a.Previous.Output, MaxFailedOutput),
		ErrorMessage:   a.Previous.Classification.Message,
		ErrorType:      a.Previous.Classification.Type,
		Suggestion:     suggestion,
	})
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "\n[... truncated]"
}
