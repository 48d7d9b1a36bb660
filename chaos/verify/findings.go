package verify

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/retry/provider"
)

// Finding is one thing a run shows about its client without being asked
// (docs/chaos.md, "Findings"): a code of scenario.FindingCodes, the server
// attempts (1-based) it rests on and a sentence with the figures.
type Finding struct {
	Code     string `json:"code"`
	Attempts []int  `json:"attempts"`
	Evidence string `json:"evidence"`
}

// A detector reads a run's Observed (and its scenario) and returns the
// findings of its code, each with its evidence; none when the data cannot
// tell. Detectors are pure functions.
type detector func(ob Observed, sc *scenario.Scenario) []Finding

// detectors holds one detector per code of scenario.FindingCodes
// (findings_test.go checks that the two lists match).
var detectors = map[string]detector{
	"retry_after_ignored":       retryAfterIgnored,
	"retried_non_retryable":     retriedNonRetryable,
	"retry_storm":               retryStorm,
	"no_backoff":                noBackoff,
	"no_jitter":                 noJitter,
	"truncated_stream_accepted": cutAccepted("truncate", "truncated_stream_accepted", "was cut without the format's closing event"),
	"malformed_chunk_ignored":   cutAccepted("malformed", "malformed_chunk_ignored", "carried an event whose data is not JSON"),
	"no_read_timeout":           noReadTimeout,
	"gave_up_early":             gaveUpEarly,
	"stitched_answer":           stitchedAnswer,
}

// Thresholds of the findings, in policy time (docs/chaos.md, "Findings").
const (
	// UsableRetryAfter is the longest Retry-After a client is expected to
	// honour: the official SDKs use a Retry-After of at most 60s and fall
	// back to their backoff above it.
	UsableRetryAfter = 60 * time.Second
	// StormAttempts is the most attempts of one logical request a sane
	// policy makes: Claude Code's default of 10 retries, the most generous
	// default known, is 11 attempts.
	StormAttempts = 11
	// NoWait is the longest wait that counts as none (a retry at once):
	// below every backoff's first wait (the SDKs start at 0.5s, Claude
	// Code at 0.5s, forgeflare at 1s) and above the measurement path's
	// own cost at the suite's time scales.
	NoWait = 50 * time.Millisecond
	// StormNoWaits is how many retries in a row with no wait make a storm.
	StormNoWaits = 3
	// BackoffRun is how many consecutive waits no_backoff needs.
	BackoffRun = 3
	// FlatRatio is how far apart (as a share of the shortest) waits may be
	// and still not grow: a backoff that doubles, or even grows linearly
	// from its first wait, moves further.
	FlatRatio = 0.25
	// BackoffCap is the shortest cap of a known backoff (the Anthropic and
	// OpenAI SDKs' 8s): flat waits this long may be a cap reached, not a
	// missing backoff.
	BackoffCap = 8 * time.Second
	// JitterPairs is how many pairs of comparable waits no_jitter needs.
	JitterPairs = 3
	// StitchPrefix is the shortest beginning of a cut answer that
	// stitched_answer counts: shorter, a coincidence.
	StitchPrefix = 16
)

// Findings runs every detector on a run's Observed, in the order of
// scenario.FindingCodes.
func Findings(ob Observed, sc *scenario.Scenario) []Finding {
	var out []Finding
	for _, c := range scenario.FindingCodes {
		if d := detectors[c.Code]; d != nil {
			out = append(out, d(ob, sc)...)
		}
	}
	return out
}

// FindingsCheck is the "findings" check of expect.findings: every code of
// Present raised, none of Absent.
func FindingsCheck(fe scenario.FindingsExpect, fs []Finding) Check {
	raised := map[string]Finding{}
	var got []string
	for _, f := range fs {
		if _, ok := raised[f.Code]; !ok {
			got = append(got, f.Code)
			raised[f.Code] = f
		}
	}
	var want, wrong []string
	for _, c := range fe.Present {
		want = append(want, c)
		if _, ok := raised[c]; !ok {
			wrong = append(wrong, c+" not raised")
		}
	}
	for _, c := range fe.Absent {
		want = append(want, "no "+c)
		if f, ok := raised[c]; ok {
			wrong = append(wrong, c+" raised: "+f.Evidence)
		}
	}
	c := Check{Name: "findings", Passed: len(wrong) == 0, Want: strings.Join(want, ", "), Got: orNone(strings.Join(got, ", ")),
		Where: "the run's findings (server.jsonl, trace.jsonl, stdout.txt)"}
	if len(wrong) > 0 {
		c.Got = strings.Join(wrong, "; ")
	}
	return c
}

// attemptFacts is what the detectors read of each server attempt, filled
// in by Observe (addAttemptFacts).
type attemptFacts struct {
	// Ended is when the mock ended the attempt.
	Ended time.Time
	// RetryAfter is the Retry-After the attempt's response carried as
	// the SDKs read it (retry-after-ms, else retry-after in seconds or as
	// a date), policy time; nil when none.
	RetryAfter *time.Duration
	// Type is the failure type the attempt's fault implies ("" for a
	// success).
	Type string
	// Body is the hex SHA-256 of the request's body ("" when unknown).
	Body string
	// ShouldRetry is set when the response said x-should-retry: true:
	// the provider asked for a retry, whatever the status.
	ShouldRetry bool
}

// addAttemptFacts records what the detectors read of each attempt.
func (ob *Observed) addAttemptFacts(sc *scenario.Scenario, attempts []mock.ServerAttempt, inferred []inference) {
	for k, a := range attempts {
		f := attemptFacts{Ended: a.Ended, Body: a.BodySHA256}
		if !mock.Succeeded(a) {
			f.Type = inferred[k].ft
			if kind := sc.FaultAt(k).Kind; fault.NameOf(kind) == a.Fault {
				if h, ok := kind.(fault.HTTPError); ok {
					met := fault.Met{Ended: a.Ended, RetryAfter: a.RetryAfter, Status: a.Status}
					hs := h.ResponseHeaders(met)
					f.RetryAfter = sentRetryAfter(hs, a.Ended)
					f.ShouldRetry = strings.EqualFold(strings.TrimSpace(hs.Get("x-should-retry")), "true")
				}
			}
		}
		ob.Facts = append(ob.Facts, f)
	}
}

// sentRetryAfter reads a response's Retry-After the way the official SDKs
// do (provider.ParseRetryAfter: retry-after-ms, else retry-after as
// seconds or an HTTP date from now); nil when neither gives a value.
func sentRetryAfter(h http.Header, now time.Time) *time.Duration {
	d, _, ok := provider.ParseRetryAfter(h, now)
	if !ok {
		return nil
	}
	return &d
}

// request is one logical request's attempts (0-based indexes of the
// server's attempts), split where Observed.RequestEnds says.
func (ob Observed) requests() [][]int {
	var out [][]int
	var cur []int
	for k := range ob.ServerAttempts {
		cur = append(cur, k)
		if k < len(ob.RequestEnds) && ob.RequestEnds[k] {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// waitAfter returns the wait after server attempt k (0-based) and whether
// there is one (the next attempt is of the same request).
func (ob Observed) waitAfter(k int) (Wait, bool) {
	for _, w := range ob.ServerWaits {
		if w.After == k+1 {
			return w, true
		}
	}
	return Wait{}, false
}

// policy is a wall-clock duration in policy time.
func (ob Observed) policy(d time.Duration) time.Duration {
	return time.Duration(float64(d) / ob.scale())
}

// shortSide is how much shorter than the expected wait want (policy time)
// the gap of w may show on noise alone, in policy time: the default
// tolerance (5ms + 2%) and the noise measured below the gap (the
// measurement path, half the scheduling lateness), as the delay checks
// count them.
func (ob Observed) shortSide(sc *scenario.Scenario, w Wait, want time.Duration) time.Duration {
	wall := scaleDur(want, ob.scale())
	b := ob.serverBand(sc, w, wall, wall, true)
	return ob.policy(width(b.allowed, wall) + width(b.below, wall))
}

// longSide is how much longer than its true length the gap of w may show
// on noise alone, in policy time (the measured noise above the gap).
func (ob Observed) longSide(sc *scenario.Scenario, w Wait, want time.Duration) time.Duration {
	wall := scaleDur(want, ob.scale())
	b := ob.serverBand(sc, w, wall, wall, true)
	return ob.policy(width(b.allowed, wall) + width(b.above, wall))
}

func fact(ob Observed, k int) attemptFacts {
	if k < len(ob.Facts) {
		return ob.Facts[k]
	}
	return attemptFacts{}
}

func failed(ob Observed, k int) bool { return k < len(ob.FailedAttempts) && ob.FailedAttempts[k] }

func faultOf(ob Observed, k int) string {
	if k < len(ob.ServerFaults) {
		return ob.ServerFaults[k]
	}
	return ""
}

func statusOf(ob Observed, k int) int {
	if k < len(ob.ServerStatuses) {
		return ob.ServerStatuses[k]
	}
	return 0
}

// failureOf names attempt k's failure for evidence: "a 429", "a 529",
// "a drop".
func failureOf(ob Observed, k int) string {
	if s := statusOf(ob, k); s >= 400 {
		return fmt.Sprintf("a %d", s)
	}
	return "a " + faultOf(ob, k)
}

func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// psecs prints a measured policy-time duration to the millisecond.
// It divides whole milliseconds: Duration.Seconds of 18.577s is
// 18.576999999999998.
func psecs(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Round(time.Millisecond).Milliseconds())/1000, 'f', -1, 64) + "s"
}

func ints(ks []int) []int {
	out := make([]int, len(ks))
	for i, k := range ks {
		out[i] = k + 1
	}
	return slices.Clip(out)
}
