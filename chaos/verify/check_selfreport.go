package verify

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/otlp"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/provider"
)

// SelfReportCheck holds an external client's own account of its attempts
// (its OpenTelemetry, Observed.SelfReport) against the server's journal:
// as many attempts, in order, and each status the client claims the one
// the server sent; an attempt the client says succeeded must not have been
// answered with an error status, or none (an HTTP span of a stream cut
// after its 200, which many instrumentations end at the headers, may say
// 200 and no error: that is the status the server sent). Want is the server's account, Got the
// client's, each with the waits between attempts (the server's gaps; the
// client's from its own timestamps), which are shown, not judged: a
// client's clock marks its attempts less exactly than the mock does.
func SelfReportCheck(ob Observed) Check {
	acc := ob.SelfReport
	cs, stale := reportedAttempts(acc, ob.Began)
	c := Check{Name: "selfReport", Passed: true,
		Want:  serverAccount(ob),
		Got:   clientAccount(plainAttempts(cs)),
		Where: fmt.Sprintf("%s (%s mapping of otlp/) against server.jsonl", ClientOtelFile, acc.Mapping)}
	if acc.Mapping == "" {
		c.Where = "otlp/ against server.jsonl"
	}
	if len(stale) > 0 {
		c.Got += fmt.Sprintf("; %d more stamped before the scenario began, not counted", len(stale))
	}
	fail, hint, state := judgeSelfReport(ob, cs)
	c.Passed, c.Hint, c.State = !fail, hint, state
	if len(stale) > 0 {
		note := fmt.Sprintf("%d attempt(s) of the client's telemetry are stamped before the scenario began (the first at %s; the scenario began at %s): a replay of older telemetry, not this run's attempts, left out", len(stale), stale[0].Start.UTC().Format(time.RFC3339Nano), ob.Began.UTC().Format(time.RFC3339Nano))
		c.Hint = strings.TrimPrefix(c.Hint+"; "+note, "; ")
	}
	return c
}

// judgeSelfReport holds the client's attempts cs against the journal:
// whether the check fails, the hint, and its state when it neither passes
// nor fails (unverified). A claim the journal contradicts, or telemetry
// that contradicts itself, always fails; attempts left out are excused
// only by what explains them (a request that does not count its own,
// exports the receiver dropped, an exporter not flushed at an exit in
// error, which leaves out only the last ones).
func judgeSelfReport(ob Observed, cs []clientAttempt) (bool, string, string) {
	acc := ob.SelfReport
	n, m := len(cs), ob.ServerAttempts
	dropped := ob.Telemetry != nil && ob.Telemetry.Dropped > 0
	if len(acc.Conflicts) > 0 {
		return true, fmt.Sprintf("the client's telemetry contradicts itself: %d span(s) received again under the same trace and span id with other content (%s); an exporter's retry sends the same span", len(acc.Conflicts), strings.Join(acc.Conflicts[:min(len(acc.Conflicts), 4)], ", ")), ""
	}
	if n > m {
		return true, fmt.Sprintf("the client's telemetry reports %d attempt(s) the server never saw", n-m) + skippedText(acc), ""
	}
	if n == 0 {
		return true, fmt.Sprintf("the client sent telemetry (%d spans and log records) that no mapping reads as this run's attempts (known: %s)", acc.Items, strings.Join(otlp.MappingNames(), ", ")), ""
	}
	if s := skippedText(acc); s != "" {
		if !dropped {
			return true, "the client's telemetry leaves out attempts it numbers itself" + s, ""
		}
		return false, fmt.Sprintf("the client's telemetry leaves out attempts it numbers itself%s, and the receiver dropped %d of its exports past its bounds: they may be in them", s, ob.Telemetry.Dropped), StateUnverified
	}
	if concurrent(acc) {
		if fail, hint, state, ok := judgeUnordered(ob, cs); ok {
			return fail, hint, state
		}
	}
	al := align(ob, cs)
	if al.cost.contra > 0 {
		return true, firstContradiction(ob, cs, al), ""
	}
	missing := al.cost.unexcused + al.cost.suffix
	switch {
	case missing == 0 && al.cost.excused > 0:
		return false, fmt.Sprintf("the client's telemetry names %d of the %d attempts the server answered and does not count the rest: %s", n, m, uncounted(acc)), StateUnverified
	case missing == 0:
		return false, "", ""
	case dropped:
		return false, fmt.Sprintf("the client's telemetry names %d of the %d attempts the server answered, and the receiver dropped %d of its exports past its bounds: the rest may be in them", n, m, ob.Telemetry.Dropped), StateUnverified
	case al.cost.unexcused == 0 && exitedInError(ob):
		if g := timingGap(ob, cs, al); g != "" {
			// Timestamps suggest a gap in the middle; noise and a client
			// that stamps late can suggest the same: it is not proof.
			return false, g + " (by its timestamps alone, which cannot prove it)", StateUnverified
		}
		return false, fmt.Sprintf("the client's telemetry stops after attempt %d of %d, and the client exited in error (%s): an exporter not flushed at exit looks the same as an omission", m-al.cost.suffix, m, exitText(ob)), StateUnverified
	}
	return true, fmt.Sprintf("the client's telemetry leaves out %d attempt(s) the server answered (%s)", missing, leftOut(al, m)), ""
}

// judgeUnordered judges the account of a client whose requests overlap:
// the server met their attempts in an order the client's stamps cannot
// give, so each claim is held against the server attempts in any order.
// ok is false when the accounts are too long to match so.
func judgeUnordered(ob Observed, cs []clientAttempt) (fail bool, hint, state string, ok bool) {
	unmatched, ok := unorderedContradictions(ob, cs)
	if !ok {
		return false, "", "", false
	}
	n, m := len(cs), ob.ServerAttempts
	if len(unmatched) > 0 {
		k := unmatched[0]
		return true, fmt.Sprintf("%d of the client's attempts claim what the server answered none of its attempts with (its requests overlap, so they were compared in any order); the first, its attempt %d, claims %s", len(unmatched), k+1, claimText(cs[k].Attempt)), "", true
	}
	switch {
	case n == m:
		return false, "", "", true
	case uncounted(ob.SelfReport) != "":
		return false, fmt.Sprintf("the client's telemetry names %d of the %d attempts the server answered and does not count the rest: %s", n, m, uncounted(ob.SelfReport)), StateUnverified, true
	case ob.Telemetry != nil && ob.Telemetry.Dropped > 0:
		return false, fmt.Sprintf("the client's telemetry names %d of the %d attempts the server answered, and the receiver dropped %d of its exports past its bounds: the rest may be in them", n, m, ob.Telemetry.Dropped), StateUnverified, true
	case exitedInError(ob):
		return false, fmt.Sprintf("the client's telemetry names %d of the %d attempts the server answered, and the client exited in error (%s): an exporter not flushed at exit looks the same as an omission", n, m, exitText(ob)), StateUnverified, true
	}
	return true, fmt.Sprintf("the client's telemetry leaves out %d of the %d attempts the server answered (its requests overlap: compared in any order)", m-n, m), "", true
}

// claimText says what the client claims of an attempt.
func claimText(a otlp.Attempt) string {
	switch {
	case a.Status != 0:
		return fmt.Sprintf("status %d", a.Status)
	case !a.Failed():
		return "a success"
	}
	return "a failure"
}

// leftOut names the server attempts an alignment leaves out (at most 8).
func leftOut(al alignment, m int) string {
	taken := map[int]bool{}
	for _, j := range al.match {
		taken[j] = true
	}
	var out []string
	for j := 0; j < m; j++ {
		if !taken[j] {
			out = append(out, fmt.Sprint(j+1))
		}
	}
	if len(out) > 8 {
		out = append(out[:8], "…")
	}
	if len(out) == 1 {
		return "the server's attempt " + out[0]
	}
	return "the server's attempts " + strings.Join(out, ", ")
}

// skippedText says how many attempts the client's own numbering skips
// (otlp.Request.Skipped), "" none.
func skippedText(acc *otlp.Account) string {
	k := 0
	for _, r := range acc.Requests {
		k += r.Skipped
	}
	if k == 0 {
		return ""
	}
	return fmt.Sprintf(" (its http.request.resend_count skips %d number(s) between attempts it exported, filled in as attempts)", k)
}

// exitedInError reports whether the external client exited with a status
// other than 0 or was stopped.
func exitedInError(ob Observed) bool {
	return ob.Client != nil && (ob.Client.ExitCode != 0 || ob.Client.Problem != "")
}

func exitText(ob Observed) string {
	if ob.Client.Problem != "" {
		return ob.Client.Problem
	}
	return fmt.Sprintf("exit status %d", ob.Client.ExitCode)
}

// noSelfReport is the selfReport check of a scenario that requires one
// (expect.selfReport) whose client sent no telemetry a mapping reads as
// attempts; tel counts what it did send (nil: nothing).
func noSelfReport(tel *Telemetry) Check {
	c := Check{Name: "selfReport", Want: "the client's own account of its attempts, in OpenTelemetry",
		Got: "no telemetry", Where: "otlp/ (the scenario's OTLP receiver)",
		Hint: "the client sent nothing to $OTEL_EXPORTER_OTLP_ENDPOINT: switch its telemetry on: client.env for Claude Code and OpenTelemetry SDKs, -c otel.* flags for Codex (testdata/agents/codex-otel.sh); docs/agents.md, the agents' own telemetry"}
	if tel != nil && tel.Exports > 0 {
		c.Got = fmt.Sprintf("%d export(s), %d item(s), none read as attempts", tel.Exports, tel.Items)
		c.Hint = "no mapping (" + strings.Join(otlp.MappingNames(), ", ") + ") recognised its spans or log records as provider requests; they are kept in otlp/"
		if tel.Rejected > 0 {
			c.Got += fmt.Sprintf("; %d export(s) rejected", tel.Rejected)
		}
	}
	return c
}

// uncounted is why the client's account may leave out attempts, "" when
// it claims to count them all.
func uncounted(acc *otlp.Account) string {
	for _, r := range acc.Requests {
		if r.Uncounted != "" {
			return r.Uncounted
		}
	}
	return ""
}

// serverAccount renders the journal's attempts and gaps.
func serverAccount(ob Observed) string {
	parts := make([]string, ob.ServerAttempts)
	for k := range parts {
		s := reportedStatus(0)
		if k < len(ob.ServerStatuses) {
			s = reportedStatus(ob.ServerStatuses[k])
		}
		if f := faultAt(ob, k); f != "" && f != scenario.FaultStatus && f != "ok" {
			s += " " + f
		}
		parts[k] = s
	}
	var waits []string
	for _, w := range ob.ServerWaits {
		waits = append(waits, fmtDur(w.Gap))
	}
	return accountText(parts, waits)
}

// clientAccount renders the client's attempts and its own waits.
func clientAccount(ats []otlp.Attempt) string {
	parts := make([]string, len(ats))
	var waits []string
	for k, a := range ats {
		s := reportedStatus(a.Status)
		switch e := cmp.Or(a.ErrorType, a.Error); {
		case !a.Failed() && a.Status == 0:
			s = "ok"
		case a.Unreported() && a.Status != 0:
			s += " failed (tried again)"
		case a.Unreported():
			s = "failed (tried again)"
		case a.Status == 0 || (e != "" && a.Status >= 200 && a.Status <= 299):
			s += " error " + truncate(cmp.Or(e, "?"), 60)
		}
		parts[k] = s
		if k > 0 && a.N != 1 && ats[k-1].Failed() && !a.Untimed && !ats[k-1].Untimed {
			waits = append(waits, fmtDur(max(a.Start.Sub(ats[k-1].End), time.Duration(0))))
		}
	}
	return accountText(parts, waits)
}

func accountText(parts, waits []string) string {
	s := fmt.Sprintf("%d attempt(s): %s", len(parts), strings.Join(parts, ", "))
	if len(parts) == 0 {
		s = "0 attempts"
	}
	if len(waits) > 0 {
		s += "; waits " + strings.Join(waits, ", ")
	}
	return s
}

func reportedStatus(s int) string {
	if s == 0 {
		return "no status"
	}
	return fmt.Sprint(s)
}

func faultAt(ob Observed, k int) string {
	if k < len(ob.ServerFaults) {
		return ob.ServerFaults[k]
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// verifyFromSelfReport settles a failureTypes check that passed on the
// faults the client met, for a client that wrote no trace: verified when
// its own telemetry's errors classify the same (want), else unverified as
// before, saying what the telemetry implied.
func verifyFromSelfReport(c *Check, want []string, ob Observed) {
	if ob.SelfReport != nil && len(ob.SelfReportTypes) > 0 && equalStrings(want, ob.SelfReportTypes) {
		c.Got += " (the client's own errors, from its telemetry, classify the same)"
		c.Where += "; " + ClientOtelFile
		return
	}
	// The faults the client met match, but how it classified them is its
	// own business, which it did not write down.
	c.State = StateUnverified
	c.Got += " (the faults the client met, as retrylab classifies them; the client wrote no trace, so its own classification is unknown)"
	c.Hint = "write RetryAttempt events to $RETRYLAB_TRACE, or send OpenTelemetry to $OTEL_EXPORTER_OTLP_ENDPOINT, to have failureTypes verified"
	if ob.SelfReport != nil {
		c.Got = fmt.Sprintf("%s; its telemetry's errors classify as %s", c.Got, list(ob.SelfReportTypes))
	}
}

// ClientOtelFile is the scenario folder's trace v1 made of the client's
// telemetry, which `trace analyze` reads like any trace.
const ClientOtelFile = "client-otel.jsonl"

// errorTypeRe finds a provider's error type in a client's error text
// ({"type":"overloaded_error"} in Claude Code's api_error).
var errorTypeRe = regexp.MustCompile(`"type"\s*:\s*"([a-z_]+_error)"`)

// ClassifyReported classifies a failed attempt as a client reported it
// (its status, error.type and message) with the retry core's classifier:
// the failure type the client's own account implies.
//
// An error.type that is itself one of retrylab's failure types (a client
// that classifies as the retry core does) is taken as it is.
func ClassifyReported(prov string, a otlp.Attempt) string {
	if a.Unreported() {
		return string(retry.Unknown)
	}
	if slices.Contains(retry.FailureTypes, retry.FailureType(a.ErrorType)) {
		return a.ErrorType
	}
	pe := &provider.Error{Provider: prov, Status: a.Status, Message: a.Error}
	if a.ErrorType != "" && !isDigits(a.ErrorType) {
		pe.ErrorType = a.ErrorType
	} else if m := errorTypeRe.FindStringSubmatch(a.Error); m != nil {
		pe.ErrorType = m[1]
	}
	low := strings.ToLower(a.Error + " " + a.ErrorType)
	switch {
	case a.Status != 0 && (a.Status < 200 || a.Status > 299):
		pe.Kind = provider.KindHTTP
	case pe.ErrorType != "":
		pe.Kind, pe.Status = provider.KindSSEError, 0
	case strings.Contains(low, "timeout") || strings.Contains(low, "timed out"):
		pe.Kind = provider.KindTimeout
	case a.Status >= 200 && a.Status <= 299:
		// An error after a 2xx: the response began, its stream broke
		// (Codex: "stream disconnected before completion: ...").
		pe.Kind = provider.KindIncomplete
	case strings.Contains(low, "reset"):
		pe.Kind = provider.KindReset
	case strings.Contains(low, "refused"):
		pe.Kind = provider.KindRefused
	case strings.Contains(low, "eof") || strings.Contains(low, "terminated") || strings.Contains(low, "ended"):
		pe.Kind = provider.KindEOF
	default:
		pe.Kind, pe.Status = provider.KindNetwork, 0
	}
	if pe.Kind != provider.KindHTTP {
		pe.Status = 0
	}
	return string(retry.Classify(pe).Type)
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// SelfReportTypes are the failure types of the failed attempts of acc, in
// the order the client began them, as ClassifyReported reads them.
func SelfReportTypes(acc *otlp.Account) []string {
	if acc == nil {
		return nil
	}
	type typed struct {
		at otlp.Attempt
		ft string
	}
	var ts []typed
	for _, r := range acc.Requests {
		for _, a := range r.Attempts {
			if a.Failed() {
				ts = append(ts, typed{a, ClassifyReported(r.Provider, a)})
			}
		}
	}
	slices.SortStableFunc(ts, func(x, y typed) int { return x.at.Start.Compare(y.at.Start) })
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.ft)
	}
	return out
}
