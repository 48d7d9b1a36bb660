package verify

import (
	"errors"
	"os"
	"time"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/otlp"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/errreport"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// SleepIn returns the timing of the built-in client's sleep after attempt
// prev and before the next attempt arrived, or nil when it slept none there
// (a retry at once, a switch of model). The sleep may start before the mock
// stamped prev's end (the client gave up on a hung attempt and started
// waiting while the mock had yet to notice), but not before prev arrived.
func SleepIn(sleeps []retry.Sleep, prev mock.ServerAttempt, arrived time.Time) *SleepTiming {
	for _, s := range sleeps {
		if s.Start.Before(prev.Arrived) || s.End.After(arrived) {
			continue
		}
		return &SleepTiming{Lead: s.Start.Sub(prev.Ended), Late: s.End.Sub(s.Start) - s.Planned, Send: arrived.Sub(s.End)}
	}
	return nil
}

// Observe gathers what the checks read from the server's attempts and the
// client's trace (if it wrote one).
//
// notes name the trace's malformed lines (file:line: reason), which are
// skipped; they do not fail the scenario.
func Observe(sc *scenario.Scenario, attempts []mock.ServerAttempt, tracePath string, scale float64) (Observed, []string) {
	ob := Observed{ServerAttempts: len(attempts), TimeScale: scale}
	evs, notes, err := runfolder.ReadTrace(tracePath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		notes = append(notes, "reading the client's trace: "+err.Error())
	}
	finished := ob.addTrace(evs)
	ob.ClientTrace = speaksForFailures(ob.Retries, finished)
	ob.GaveUp = gaveUp(finished, len(attempts))

	// What each failed attempt's fault implies, inferred once.
	pol, _ := scenario.PolicyFor(sc)
	inferred := make([]inference, len(attempts))
	for k, a := range attempts {
		if !mock.Succeeded(a) {
			inferred[k] = inferFailure(sc, pol, k, a)
		}
	}
	ob.RequestEnds = ob.requestEnds(sc, pol, attempts, finished, inferred)
	ob.addModelSwitches(attempts)
	ob.addResends(sc, pol, attempts, inferred)
	ob.addAttemptFacts(sc, attempts, inferred)
	for k, a := range attempts {
		ob.ServerFaults = append(ob.ServerFaults, a.Fault)
		ob.ServerStatuses = append(ob.ServerStatuses, a.Status)
		ob.ServerArrived = append(ob.ServerArrived, a.Arrived)
		ob.Prompts = append(ob.Prompts, a.Prompt)
		ob.FailedAttempts = append(ob.FailedAttempts, !mock.Succeeded(a))
		if k+1 < len(attempts) && !ob.RequestEnds[k] {
			ob.ServerWaits = append(ob.ServerWaits, Wait{After: k + 1, Gap: WaitEnd(sc, attempts, k+1).Sub(a.Ended)})
		}
		if !mock.Succeeded(a) {
			in := inferred[k]
			ob.InferredTypes = append(ob.InferredTypes, in.ft)
			ob.InferredRetryAfter = append(ob.InferredRetryAfter, in.retryAfter)
			ob.InferredNotRetried = append(ob.InferredNotRetried, !in.retried)
		}
	}
	return ob, notes
}

// addTrace records the client's retries and escalations and returns its
// finished requests.
func (ob *Observed) addTrace(evs []trace.Event) []trace.ProviderRequestFinished {
	var finished []trace.ProviderRequestFinished
	for _, ev := range evs {
		switch ev.Type {
		case trace.TypeRetryAttempt:
			var p trace.RetryAttempt
			if ev.Decode(&p) == nil {
				ob.Retries = append(ob.Retries, p)
			}
		case trace.TypeRunEscalated:
			var p trace.RunEscalated
			if ev.Decode(&p) == nil {
				ob.Escalations = append(ob.Escalations, p)
			}
		case trace.TypeProviderRequestFinished:
			var p trace.ProviderRequestFinished
			if ev.Decode(&p) == nil {
				finished = append(finished, p)
			}
		case trace.TypeErrorReport:
			ob.addErrorReport(ev)
		}
	}
	return finished
}

// gaveUp reports whether the client's finished requests account for every
// attempt and the last ended in failure for another reason than its
// cancellation (the built-in client stopped at its deadline records a
// canceled request).
func gaveUp(finished []trace.ProviderRequestFinished, attempts int) bool {
	if len(finished) == 0 {
		return false
	}
	total := 0
	for _, f := range finished {
		total += f.Retries + 1
	}
	last := finished[len(finished)-1]
	return total == attempts && !last.Success && last.FailureType != string(retry.Canceled)
}

// speaksForFailures reports whether the client's trace speaks for its
// failures: it recorded at least one RetryAttempt, or requests that all
// succeeded first time. A trace with only ProviderRequestFinished lines
// says how many retries there were but not what failed (nor does one whose
// failed request has no RetryAttempt); the faults then tell.
func speaksForFailures(retries []trace.RetryAttempt, finished []trace.ProviderRequestFinished) bool {
	sumRetries, anyFailed := 0, false
	for _, f := range finished {
		sumRetries += f.Retries
		anyFailed = anyFailed || !f.Success
	}
	return len(retries) > 0 || (len(finished) > 0 && sumRetries == 0 && !anyFailed)
}

// requestEnds returns last, where last[k] is true when server attempt k was
// the last of its logical request: the gap after it is not a wait. From the
// client's ProviderRequestFinished events when they account for every
// attempt, else from the faults (a request ends at an attempt that
// succeeded), counting the requests seen when the trace cannot.
func (ob *Observed) requestEnds(sc *scenario.Scenario, pol *retry.Policy, attempts []mock.ServerAttempt, finished []trace.ProviderRequestFinished, inferred []inference) []bool {
	last := make([]bool, len(attempts))
	total := 0
	for _, f := range finished {
		total += f.Retries + 1
	}
	if len(finished) > 0 && total == len(attempts) {
		k := 0
		for _, f := range finished {
			k += f.Retries + 1
			last[k-1] = true
		}
		return last
	}
	var split *retry.Policy
	if sc.Requests > 1 {
		split = pol
	}
	requestEnds(attempts, inferred, split, last)
	if !ob.ClientTrace && sc.Requests > 1 {
		ob.RequestsWanted = sc.Requests
		for _, l := range last[:max(len(last)-1, 0)] {
			if l {
				ob.RequestsSeen++
			}
		}
		if len(attempts) > 0 {
			ob.RequestsSeen++ // the last attempt ends the last request
		}
	}
	return last
}

// requestEnds marks in last the attempts that ended a logical request, from
// the server's side alone: an attempt that succeeded; and, when the scenario
// makes several requests, one whose failure the policy does not retry (that
// very failure, or no attempt left for its request), after which the next
// attempt must be a new request (pol nil: successes alone). observe checks
// the count against the scenario's requests.
func requestEnds(attempts []mock.ServerAttempt, inferred []inference, pol *retry.Policy, last []bool) {
	n := 0 // the attempt's number within its request
	for k, a := range attempts {
		n++
		switch {
		case mock.Succeeded(a):
			last[k] = true
		case pol != nil:
			in := inferred[k]
			var d time.Duration
			if in.retryAfter != nil {
				d = *in.retryAfter
			}
			if _, _, ok := pol.Envelope(retry.FailureType(in.ft), n, d, in.retryAfter != nil); !in.retried || !ok {
				last[k] = true
			}
		}
		if last[k] {
			n = 0
		}
	}
}

// WaitEnd is when the wait before attempts[k] (0-based) ended: the arrival
// of its first request byte; but when that attempt met raw toxics on the
// upstream stream (a latency toxic holds the request back inside the proxy),
// the moment its connection reached the mock, if that came after the
// previous attempt ended: the scenario's own toxic is not the client's wait.
func WaitEnd(sc *scenario.Scenario, attempts []mock.ServerAttempt, k int) time.Time {
	a := attempts[k]
	if k < 1 || k >= len(sc.Attempts) {
		return a.Arrived
	}
	upstream := false
	for _, t := range fault.PreConnect(sc.Attempts[k].Kind, k+1) {
		upstream = upstream || t.Stream == "upstream"
	}
	if upstream && !a.Connected.IsZero() && a.Connected.After(attempts[k-1].Ended) {
		return a.Connected
	}
	return a.Arrived
}

// inferFailure is the failure type (and Retry-After) the k-th attempt's
// fault implies, for clients that write no trace: the fault is turned into
// the error a provider client would have returned and classified, and the
// Retry-After is read from the headers the mock sent the way the scenario's
// policy reads them (forgeflare reads retry-after only; the SDKs read
// retry-after-ms first).
//
// retried is false when pol does not retry that exact failure (its status,
// whether it came after the stream began, its x-should-retry), which its
// failure type alone may not say: the SDKs retry an overloaded 529 but not
// an overloaded_error SSE event mid-stream; forgeflare retries a timeout but
// not a 408. pol may be nil (the scenario's policy does not resolve): the
// headers are then read as the SDKs read them and every failure counts as
// retried.
func inferFailure(sc *scenario.Scenario, pol *retry.Policy, k int, a mock.ServerAttempt) inference {
	var f scenario.Fault
	if k < len(sc.Attempts) {
		f = sc.Attempts[k]
	}
	// RetryAfter is the date the mock stamped when it served the attempt.
	met := fault.Met{Ended: a.Ended, RetryAfter: a.RetryAfter, Status: a.Status}
	pe := &provider.Error{Provider: sc.Provider}
	fault.Failure(f.Kind, pe, met)
	c := retry.Classify(pe)
	in := inference{ft: string(c.Type), retried: true}
	if pol != nil {
		if h, ok := f.Kind.(fault.HTTPError); ok {
			c.RetryAfter, c.HasRetryAfter = pol.ReadRetryAfter(h.ResponseHeaders(met), a.Ended)
		}
		if d, ok := pol.MessageRetryAfter(c); ok {
			// "try again in 2s" in the fault's message, for a policy that reads it.
			c.RetryAfter, c.HasRetryAfter = d, true
		}
		in.retried = pol.Retries(c)
	}
	in.c = c
	if c.HasRetryAfter {
		d := c.RetryAfter
		in.retryAfter = &d
	}
	return in
}

// inference is what a failed attempt's fault implies of the failure a
// client met: its type, its Retry-After, and whether the policy retries it.
type inference struct {
	ft         string
	retryAfter *time.Duration
	retried    bool
	c          retry.Classification // the failure as the policy reads it
}

// Wait is one wait the server observed: the gap between the end of attempt
// After and the arrival of attempt After+1, in wall-clock time.
type Wait struct {
	After int
	Gap   time.Duration
	// Slack is the contention measured around this gap (from shortly before
	// attempt After ended to the arrival of the next); 0 = use Observed.Slack.
	Slack time.Duration
	// ClientLag is the CPU and run-queue time of an external client's processes
	// measured over the gap (ClientLagMeasured: the system could measure it).
	ClientLag         time.Duration
	ClientLagMeasured bool
	// Sleep is the built-in client's own account of this wait, when it
	// slept one (nil otherwise).
	Sleep *SleepTiming
}

// SleepTiming splits a server-side gap that the built-in client spent
// asleep: gap = Lead + the timer's setting + Late + Send. Lead is from the
// end of the previous attempt (as the mock stamped it) to the moment the
// client set its timer (negative when the mock stamped the end after the
// client had started waiting); Late is how much later than set the timer
// woke the client (the runtime's lateness on a busy machine); Send is from
// the client waking to its request's first byte reaching the mock (its
// connection through the proxy).
type SleepTiming struct {
	Lead, Late, Send time.Duration
}

// Observed is everything a scenario's run produced that the checks read.
// It is plain data so that the checks are pure functions.
type Observed struct {
	Outcome string // success | failure | still_retrying (SettleOutcome)
	// StillRetryingEvidence says why Outcome is still_retrying; OpenWait
	// is set when the client was then waiting to send its next attempt
	// (the server saw that wait begin, not end).
	StillRetryingEvidence string
	OpenWait              bool
	// Stopped is when the runner stopped a client killed at its deadline
	// (zero otherwise); GaveUp is set when the client's trace says its
	// last request ended in failure (not cancelled): it gave up.
	Stopped time.Time
	GaveUp  bool

	// ServerAttempts is the number of attempts the mock server saw.
	ServerAttempts int
	// ServerWaits are the gaps the server saw that were waits before a retry.
	ServerWaits []Wait
	// ServerFaults are the fault kinds the attempts met, in order.
	ServerFaults []string
	// Prompts[k] is server attempt k+1's prompt excerpt
	// (ServerAttempt.Prompt).
	Prompts []string
	// Unserved are the client's requests the mock serves no answer for
	// (side requests answered 404 or 405: "POST /chat/completions"), each
	// once.
	Unserved []string
	// FailedAttempts[k] is true when server attempt k+1 failed (did not
	// deliver a complete response); RequestEnds[k] when it was the last
	// attempt of its logical request.
	FailedAttempts []bool
	RequestEnds    []bool
	// RequestsSeen is how many logical requests the server's attempts make
	// when they are split where the policy says a request must end (no
	// client trace, several requests); RequestsWanted is the scenario's
	// requests. Both 0 when not counted.
	RequestsSeen, RequestsWanted int

	// ClientTrace reports whether the client wrote a trace; when false the
	// failure types and waits come from the server (InferredTypes, InferredWaits).
	ClientTrace bool
	// Retries are the client's RetryAttempt events, in order.
	Retries []trace.RetryAttempt
	// Escalations are the client's RunEscalated events, in order; for a
	// client without a trace, the model switches the journal saw
	// (EscalationsFromServer, see addModelSwitches).
	Escalations []trace.RunEscalated
	// ModelSwitches are the server attempts (1-based) that asked for
	// another model than the attempt before them within the same logical
	// request; EscalationsFromServer is set when they are Escalations.
	ModelSwitches         []int
	EscalationsFromServer bool
	// ErrorReports are the client's first ErrorReport events, made safe
	// to show (chaos/errreport.go); ErrorReportsOmitted counts the rest.
	ErrorReports        []trace.ErrorReport
	ErrorReportsOmitted int

	// InferredTypes are the failure types the server's faults imply, for
	// clients that write no trace; InferredRetryAfter is the Retry-After
	// each failed attempt carried.
	InferredTypes      []string
	InferredRetryAfter []*time.Duration
	// InferredNotRetried[i] is set when the policy does not retry the i-th
	// failed attempt's exact failure (its status, a stream already begun,
	// x-should-retry), whatever its failure type's strategy says.
	InferredNotRetried []bool
	// Resends[k] is set when the policy re-sends server attempt k+1's
	// failure in a loop of its own (retry.Resend), with that wait's
	// envelope; LoopAttempts[k] is the number of attempt k+1 as the
	// policy's backoff loop counts it. Both nil for a policy without such
	// loops (addResends).
	Resends      []resendMark
	LoopAttempts []int
	// Unmodelled lists the server attempts (1-based) whose failure's
	// sequel the policy does not model (retry.Resend.NoStream): the waits
	// after them are not checked, and the delays check says so.
	Unmodelled []int

	Duration  time.Duration // wall-clock
	TimeScale float64
	// Slack widens the server-side tolerance: the timer lateness measured
	// on this machine while the scenario ran (0 on an idle machine).
	Slack time.Duration
	// RemoteProxy is set when Toxiproxy runs in another process: the
	// server-side tolerance gets remoteProxyAllowance.
	RemoteProxy bool

	// Client is set for external clients: what happened to the process;
	// Stdout is the start of what it printed (ReadStdout).
	Client *client.ClientExit
	Stdout string

	// ServerStatuses[k] is the HTTP status server attempt k+1 was answered
	// with (0: none, e.g. a reset).
	ServerStatuses []int
	// SelfReport is an external client's own account of its attempts, read
	// from the OpenTelemetry it sent (chaos/telemetry.go); nil when it sent none.
	// SelfReportTypes are the failure types of its failed attempts, as
	// its own account (status, error) classifies.
	SelfReport      *otlp.Account
	SelfReportTypes []string
	// ServerArrived[k] is when server attempt k+1 arrived (the mock's
	// clock, the client's too: loopback); Began is when the scenario
	// began, before the client started (zero when unknown). selfReport
	// reads them to place the client's attempts.
	ServerArrived []time.Time
	Began         time.Time
	// Facts are what the findings read of each server attempt
	// (findings.go); ClientKilled is set when the client was stopped at
	// its deadline instead of finishing by itself.
	Facts        []attemptFacts
	ClientKilled bool
	// Telemetry counts what the client sent of its OpenTelemetry; nil
	// when it sent nothing (or is the built-in client).
	Telemetry *Telemetry
}

// inferredFailure is what the j-th failed attempt's fault implies (see
// Observed.InferredTypes, InferredRetryAfter, InferredNotRetried).
type inferredFailure struct {
	ft         string
	ra         time.Duration
	has        bool // ra is set
	notRetried bool
}

// addErrorReport keeps ev, made safe to show, or counts it past
// maxErrorReports. An event whose payload is not an ErrorReport's shape is
// ignored (the trace's analysis still counts it).
func (ob *Observed) addErrorReport(ev trace.Event) {
	if len(ob.ErrorReports) >= maxErrorReports {
		ob.ErrorReportsOmitted++
		return
	}
	var p trace.ErrorReport
	if ev.Decode(&p) != nil {
		return
	}
	ob.ErrorReports = append(ob.ErrorReports, safeErrorReport(p))
}

// safeErrorReport is p as errreport.FromEvent leaves it: every string
// bounded, stripped of control characters and of anything that looks like
// a key; lists bounded in length.
func safeErrorReport(p trace.ErrorReport) trace.ErrorReport {
	return errreport.FromEvent(p).Event()
}

// maxErrorReports is how many ErrorReport events a result keeps: a client
// that gives up on every one of a thousand requests says the same thing a
// thousand times.
const maxErrorReports = 5

// Telemetry is what an external client sent of its own OpenTelemetry:
// exports and items (spans, log records, data points) kept in otlp/, those
// dropped past the receiver's bounds or rejected (4xx), the mapping that
// read its attempts ("" none) and how many spans and log records it left
// unused.
type Telemetry struct {
	Exports      int    `json:"exports"`
	Kept         int    `json:"kept"`
	Items        int    `json:"items"`
	Dropped      int    `json:"dropped,omitempty"`
	DroppedItems int    `json:"droppedItems,omitempty"`
	Rejected     int    `json:"rejected,omitempty"`
	Mapping      string `json:"mapping,omitempty"`
	Attempts     int    `json:"attempts"`
	Unknown      int    `json:"unknown"`
	// Notes says what arrived but was not read, or was read with less
	// than its conventions give (otlp.Account.Notes).
	Notes []string `json:"notes,omitempty"`
}
