package retry

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/retrylab/retrylab/retry/errreport"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// quotaErr is the OpenAI 429 of seed 001's walkthrough 2.
func quotaErr() *provider.Error {
	return &provider.Error{Kind: provider.KindHTTP, Provider: "openai", Status: 429, ErrorType: "insufficient_quota",
		Code: "insufficient_quota", RequestID: "req_w2",
		Message: "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."}
}

// walkthrough2 runs seed 001's walkthrough 2 under the plandex preset and
// returns the error Do gave.
func walkthrough2(t *testing.T) (*ExhaustedError, run) {
	t.Helper()
	return walkthrough2WithRegistry(t, nil)
}

func walkthrough2WithRegistry(t *testing.T, g *errreport.ErrorRegistry) (*ExhaustedError, run) {
	t.Helper()
	var ex *ExhaustedError
	var got run
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "plandex"), Provider: "openai", Model: "gpt-4", Registry: g}
		got = doFakeCtx(t, WithStep(context.Background(), errreport.StepContext{Plan: "refactor-auth", Entry: "12", Phase: "streaming"}), r, quotaErr())
		if !errors.As(got.err, &ex) {
			t.Fatalf("err = %v, want *ExhaustedError", got.err)
		}
	})
	return ex, got
}

// TestSeed001Walkthrough2QuotaExhaustedReport: HTTP 429 "exceeded your
// current quota" is quota_exhausted, not retried, and surfaces as the
// seed's boxed UNRECOVERABLE ERROR with the required actions. The text is
// testdata/walkthrough2-unrecoverable.golden (refresh with -update).
func TestSeed001Walkthrough2QuotaExhaustedReport(t *testing.T) {
	t.Parallel()
	ex, got := walkthrough2(t)
	if ex.Attempts != 1 || ex.Reason != ReasonNonRetryable || ex.Classification.Type != QuotaExhausted {
		t.Errorf("ExhaustedError = %d attempts, %q, %s", ex.Attempts, ex.Reason, ex.Classification.Type)
	}
	rep := ex.Report
	if rep == nil || !rep.Unrecoverable() || rep.RootCause.Category != "non-retryable" || rep.RootCause.Provider != "openai" {
		t.Fatalf("Report = %+v", rep)
	}
	var buf bytes.Buffer
	if err := rep.Render(&buf, errreport.Style{Width: 61}); err != nil {
		t.Fatal(err)
	}
	golden(t, "walkthrough2-unrecoverable.golden", buf.String())

	evs := eventsOf[trace.ErrorReport](t, got.events, trace.TypeErrorReport)
	if len(evs) != 1 {
		t.Fatalf("%d ErrorReport events, want 1", len(evs))
	}
	ev := evs[0]
	if ev.ID != rep.ID || ev.FailureType != "quota_exhausted" || ev.Category != "non-retryable" || ev.Status != 429 ||
		ev.Reason != "non-retryable" || ev.Step["plan"] != "refactor-auth" || len(ev.Actions) != 3 ||
		ev.Actions[1].Command != "plandex providers switch <provider>" || len(ev.History) != 1 {
		t.Errorf("ErrorReport event = %+v", ev)
	}
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// TestReportRenderWidth: no line is wider than the width given, down to the
// narrowest (40), and a long word is cut rather than overflowing.
func TestReportRenderWidth(t *testing.T) {
	t.Parallel()
	ex, _ := walkthrough2(t)
	ex.Report.RootCause.Message += " " + strings.Repeat("x", 150)
	for _, width := range []int{0, 20, 40, 61, 80, 132} {
		var buf bytes.Buffer
		ex.Report.Render(&buf, errreport.Style{Width: width})
		limit := max(width, 40) // Style: 0 means 80, less than 40 means 40
		if width == 0 {
			limit = 80
		}
		for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
			if n := utf8.RuneCountInString(line); n > limit {
				t.Errorf("width %d: line of %d runes: %q", width, n, line)
			}
		}
		if !strings.Contains(buf.String(), "UNRECOVERABLE ERROR") {
			t.Errorf("width %d: no title", width)
		}
	}
}

// TestReportRenderColor: colour only when asked, and StyleFor never asks
// for it on a file that is not a terminal, nor with NO_COLOR.
func TestReportRenderColor(t *testing.T) {
	t.Parallel()
	ex, _ := walkthrough2(t)
	var plain, colored bytes.Buffer
	ex.Report.Render(&plain, errreport.Style{Width: 80})
	ex.Report.Render(&colored, errreport.Style{Width: 80, Color: true})
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("plain rendering has ANSI escapes")
	}
	if !strings.Contains(colored.String(), "\x1b[1;31mUNRECOVERABLE ERROR\x1b[0m") {
		t.Error("coloured rendering has no red title")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{"COLUMNS": "100"}
	if st := errreport.StyleFor(f, func(k string) string { return env[k] }); st.Color || st.Width != 100 {
		t.Errorf("StyleFor(regular file) = %+v, want no colour, width 100", st)
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		env["NO_COLOR"] = "1"
		if st := errreport.StyleFor(tty, func(k string) string { return env[k] }); st.Color {
			t.Error("StyleFor(terminal) with NO_COLOR gives colour")
		}
	}
	if st := errreport.StyleFor(nil, func(string) string { return "" }); st.Color || st.Width != 80 {
		t.Errorf("StyleFor(nil) = %+v", st)
	}
}

// TestSeed001RequiredUserActions: every non-retryable type of seed 001's
// table gets its "Required User Action" first, with the seed's command.
func TestSeed001RequiredUserActions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ft            FailureType
		text, command string
	}{
		{AuthInvalid, "Fix API credentials", "plandex api-keys"},
		{PermissionDenied, "Request access in provider console", ""},
		{ContextTooLong, "Reduce context", "plandex context rm <file>"},
		{InvalidRequest, "Fix request format", ""},
		{ContentPolicy, "Modify prompt", ""},
		{QuotaExhausted, "Add credits to your account", ""},
		{ModelNotFound, "Use a valid model ID", ""},
		{ModelDeprecated, "Migrate to a newer model", ""},
		{UnsupportedFeature, "Change approach", ""},
		{AccountSuspended, "Contact provider", ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.ft), func(t *testing.T) {
			if ClassOf(tt.ft) != NonRetryable {
				t.Fatalf("%s is %s in seed 001's table", tt.ft, ClassOf(tt.ft))
			}
			acts := RecoveryFor(tt.ft, ReasonNonRetryable)
			if len(acts) == 0 || acts[0].Text != tt.text || acts[0].Command != tt.command || acts[0].Priority != errreport.PriorityCritical {
				t.Errorf("RecoveryFor(%s) = %+v, want %q (%q) first", tt.ft, acts, tt.text, tt.command)
			}
		})
	}
	// Every failure type has at least one action.
	for _, ft := range FailureTypes {
		if ft != Canceled && len(RecoveryFor(ft, "")) == 0 {
			t.Errorf("no recovery action for %s", ft)
		}
	}
}

// TestRecoveryForLimits: when a limit stopped the retries, its setting comes
// first.
func TestRecoveryForLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason, setting string
	}{
		{ReasonRetryAfterCeiling, "retryAfter.ceiling, PLANDEX_MAX_PROVIDER_RETRY_AFTER_MS"},
		{ErrIrreversible.Error(), "PLANDEX_RETRY_IRREVERSIBLE=true, allowIrreversible: true"},
		{ReasonMaxElapsed, "maxElapsed"},
		{ReasonTopOfLadder, "client.escalation, escalation.ladder"},
		{ReasonEscalationDeclined, "escalation.maxCost"},
		{ReasonAttemptsExhausted, "failureTypes.rate_limit.maxAttempts"},
	}
	for _, tt := range tests {
		if acts := RecoveryFor(RateLimit, tt.reason); len(acts) == 0 || acts[0].Setting != tt.setting {
			t.Errorf("RecoveryFor(rate_limit, %q) = %+v, want setting %q first", tt.reason, acts, tt.setting)
		}
	}
	if acts := RecoveryFor(Timeout, "rollback failed: disk"); !strings.Contains(acts[0].Text, "rollback") {
		t.Errorf("rollback failure: %+v", acts)
	}
}

// TestSeed001Walkthrough1Summary: rate limit with Retry-After 12s, waited
// 13.2s (padding 10%, with the ceiling the walkthrough must have had), then
// success: "succeeded after 2 attempt(s)".
func TestSeed001Walkthrough1Summary(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := mustPreset(t, "plandex")
		p.RetryAfter.Ceiling = 15 * time.Second
		r := &Retrier{Policy: p, Provider: "openai", Model: "gpt-4"}
		e := retryAfterErr(429, "12", 12*time.Second)
		e.Message = "Rate limit reached"
		var rc *RetryContext
		var err error
		got := captureRun(t, r, func(call func(context.Context, Attempt) (string, error)) error {
			rc, err = r.Run(context.Background(), call)
			return err
		}, []string{"", "ok"}, e)
		if err != nil {
			t.Fatal(err)
		}
		if rc.Summary() != "succeeded after 2 attempt(s)" || rc.Output != "ok" || len(rc.Failures) != 1 {
			t.Errorf("RetryContext = %+v, Summary %q", rc, rc.Summary())
		}
		if rc.Failures[0].Delay != 13200*time.Millisecond || rc.Failures[0].DelaySource != trace.DelayRetryAfter {
			t.Errorf("wait = %v (%s), want 13.2s from retry-after", rc.Failures[0].Delay, rc.Failures[0].DelaySource)
		}
		if diff := cmp.Diff(secs(13.2), got.gaps); diff != "" {
			t.Errorf("gaps mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestSeed001Walkthrough3Summary: stream interrupted, 503, 503, error
// fallback, success: "succeeded after 4 attempt(s)", with the fallback in
// the history.
func TestSeed001Walkthrough3Summary(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &Retrier{Policy: mustPreset(t, "plandex"), Provider: "openai", Model: "gpt-4",
			Fallbacks: Fallbacks{Error: "claude-3-haiku"}, Rand: fixedRand(half)}
		drop := &provider.Error{Kind: provider.KindEOF, Streamed: true}
		var rc *RetryContext
		captureRun(t, r, func(call func(context.Context, Attempt) (string, error)) error {
			var err error
			rc, err = r.Run(context.Background(), call)
			return err
		}, nil, drop, httpErr(503), httpErr(503))
		if rc.Summary() != "succeeded after 4 attempt(s)" {
			t.Errorf("Summary = %q", rc.Summary())
		}
		var switched []string
		for _, f := range rc.Failures {
			switched = append(switched, f.SwitchedTo)
		}
		if diff := cmp.Diff([]string{"", "", "claude-3-haiku"}, switched); diff != "" {
			t.Errorf("SwitchedTo mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestReportHistory: the report of a request that ran out of attempts has
// every attempt with its time, wait and the fallback taken.
func TestReportHistory(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		r := &Retrier{Policy: mustPreset(t, "forgeflare"), Provider: "anthropic", Model: "m"}
		errs := []error{httpErr(529), httpErr(529), httpErr(529), httpErr(529), httpErr(529)}
		got := doFake(t, r, errs...)
		var ex *ExhaustedError
		if !errors.As(got.err, &ex) || ex.Report == nil {
			t.Fatalf("err = %v", got.err)
		}
		var delays []int64
		var offsets []time.Duration
		for _, h := range ex.Report.History {
			delays = append(delays, h.DelayMs)
			offsets = append(offsets, h.Time.Sub(start))
		}
		if diff := cmp.Diff([]int64{2000, 4000, 8000, 16000, 0}, delays); diff != "" {
			t.Errorf("delays mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(secs(0, 2, 6, 14, 30), offsets); diff != "" {
			t.Errorf("times mismatch (-want +got):\n%s", diff)
		}
		if ex.Report.Unrecoverable() || ex.Report.Reason != ReasonAttemptsExhausted || ex.Report.RootCause.Category != "retryable" {
			t.Errorf("Report = %+v", ex.Report)
		}
		var buf bytes.Buffer
		ex.Report.Render(&buf, errreport.Style{Width: 80})
		if !strings.Contains(buf.String(), "RETRIES EXHAUSTED") || !strings.Contains(buf.String(), "waited 16s (backoff)") {
			t.Errorf("rendering:\n%s", buf.String())
		}
	})
}

// TestNewReport: a caller with its own loop builds the same Report.
func TestNewReport(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	rep := NewReport(quotaErr(), ReasonNonRetryable, 1, nil, errreport.StepContext{Plan: "p"}, now)
	if rep.RootCause.Type != string(QuotaExhausted) || rep.RootCause.Provider != "openai" || !rep.Unrecoverable() || rep.Time != now ||
		!strings.HasPrefix(rep.ID, "err-20261121T100000.000Z-") {
		t.Errorf("NewReport = %+v", rep)
	}
}

// TestRetrierWritesRegistry: a Retrier with a Registry keeps each report.
func TestRetrierWritesRegistry(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "errors.json")
	ex, _ := walkthrough2WithRegistry(t, errreport.OpenRegistry(path))
	got, err := errreport.OpenRegistry(path).ListErrors(errreport.ErrorFilter{Tag: errreport.TagUnrecoverable})
	if err != nil || len(got) != 1 || got[0].ID != ex.Report.ID || got[0].RootCause.Type != string(QuotaExhausted) {
		t.Errorf("registry = %+v, %v", got, err)
	}
}

// TestReportFromEventRoundTrip: the ErrorReport event of walkthrough 2,
// read back as a Report, renders exactly as the report the retry core made
// (the seed's box, testdata/walkthrough2-unrecoverable.golden): what a
// reader of the trace shows is what the client would have shown.
func TestReportFromEventRoundTrip(t *testing.T) {
	t.Parallel()
	ex, _ := walkthrough2(t)
	var want, got bytes.Buffer
	if err := ex.Report.Render(&want, errreport.Style{Width: 61}); err != nil {
		t.Fatal(err)
	}
	back := errreport.FromEvent(ex.Report.Event())
	if err := back.Render(&got, errreport.Style{Width: 61}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), got.String()); diff != "" {
		t.Errorf("Render(ReportFromEvent(Event())) mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ex.Report.Event(), back.Event()); diff != "" {
		t.Errorf("Event() round trip mismatch (-want +got):\n%s", diff)
	}
	if back.Title() != "UNRECOVERABLE ERROR" {
		t.Errorf("Title() = %q", back.Title())
	}
	const wantLine = "UNRECOVERABLE ERROR: quota_exhausted (HTTP 429), non-retryable after 1 attempt(s); first: Add credits to your account"
	if back.Line() != wantLine {
		t.Errorf("Line() = %q, want %q", back.Line(), wantLine)
	}
}
