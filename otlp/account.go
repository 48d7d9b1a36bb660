package otlp

import (
	"slices"
	"time"

	"github.com/retrylab/retrylab/trace"
)

// Attempt is one HTTP attempt as the client reports it.
type Attempt struct {
	// N is the client's own number for the attempt within its request
	// (1-based), 0 when it gave none.
	N int `json:"n,omitempty"`
	// Start and End bound the attempt by the client's clock; Start is End
	// when the client reported a moment only.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Status is the HTTP status the client says it received, 0 for none.
	Status int `json:"status,omitempty"`
	// ErrorType is the client's error.type (or its equivalent), Error its
	// error message; both "" when the client reports no error.
	ErrorType string `json:"errorType,omitempty"`
	Error     string `json:"error,omitempty"`
	// Retried is set when the client reports only that it went on to
	// another attempt after this one (so this one failed) and not how it
	// failed: Claude Code's span events mark when each attempt began and
	// nothing else.
	Retried bool `json:"retried,omitempty"`
	// Untimed is set when the client reports that the attempt happened
	// but not when (a request's log event that counts its attempts): its
	// Start and End are those of the attempt after it, and the wait before
	// it is unknown.
	Untimed bool `json:"untimed,omitempty"`
}

// Failed reports whether the client says the attempt failed: an error, a
// status outside 2xx, or another attempt after it.
func (a Attempt) Failed() bool {
	return a.Retried || a.Error != "" || a.ErrorType != "" || (a.Status != 0 && (a.Status < 200 || a.Status > 299))
}

// Unreported reports whether the client says nothing of how the attempt
// failed beyond that it did (Retried): no error, and no status or a 2xx
// (Codex's 200 whose stream it re-sent without a word).
func (a Attempt) Unreported() bool {
	return a.Failed() && a.Error == "" && a.ErrorType == "" && (a.Status == 0 || (a.Status >= 200 && a.Status <= 299))
}

// Request is one logical request: its attempts in the order made.
type Request struct {
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Error is the request's own error when the client reported one for
	// the request as a whole (a gen_ai span's status message).
	Error string `json:"error,omitempty"`
	// Run is the service.instance.id of the resource that reported it.
	Run      string    `json:"run,omitempty"`
	Attempts []Attempt `json:"attempts"`
	// Uncounted says why the client's account of this request may leave
	// out attempts ("" when it counts them all): Claude Code's log event
	// for a request that succeeded gives no attempt count.
	Uncounted string `json:"uncounted,omitempty"`
	// Skipped counts the attempts the client's own numbering
	// (http.request.resend_count) says it made between two it exported,
	// filled in as retried and untimed: its telemetry leaves them out.
	Skipped int `json:"skipped,omitempty"`
}

// Account is the client's own account of its provider requests, read from
// its telemetry by one Mapping.
type Account struct {
	// Mapping names the mapping that read it ("" when none recognised
	// anything).
	Mapping  string    `json:"mapping,omitempty"`
	Requests []Request `json:"requests"`
	// Items counts the spans and log records received, each once;
	// Unknown those the mapping did not use (kept in the run folder,
	// otherwise ignored); Duplicates the copies of one received again (an
	// exporter's retry), left out of Items.
	Items      int `json:"items"`
	Unknown    int `json:"unknown"`
	Duplicates int `json:"duplicates,omitempty"`
	// Conflicts lists the spans ("traceid/spanid") received more than
	// once with different content: the first copy is read, and the client
	// contradicts itself.
	Conflicts []string `json:"conflicts,omitempty"`
	// Notes says, for people, what was received but not read, or read
	// with less than the telemetry's conventions give (side requests, a
	// gen_ai span without its HTTP attempts, a resource no mapping reads).
	Notes []string `json:"notes,omitempty"`
}

// Attempts returns every attempt of every request, requests in the order
// of their first attempt.
func (a Account) Attempts() []Attempt {
	var out []Attempt
	for _, r := range a.Requests {
		out = append(out, r.Attempts...)
	}
	return out
}

// Classifier names the failure type of a failed attempt (retry.Classify's
// taxonomy; the caller supplies it, this package does not classify).
type Classifier func(provider string, a Attempt) string

// Events turns the account into trace v1: a RetryAttempt per failed
// attempt (its delayMs the gap, by the client's clock, until the next
// attempt of its request began) and a ProviderRequestFinished per request.
// runID, when not "", is every event's runId; else each request's Run.
func (a Account) Events(runID string, classify Classifier) []trace.Event {
	var evs []trace.Event
	for _, r := range a.Requests {
		runID := runID
		if runID == "" {
			runID = r.Run
		}
		n := len(r.Attempts)
		if n == 0 {
			continue
		}
		last := r.Attempts[n-1]
		for i, at := range r.Attempts {
			if !at.Failed() {
				continue
			}
			p := trace.RetryAttempt{Provider: r.Provider, Model: r.Model, Attempt: i + 1, MaxAttempts: 0,
				FailureType: classify(r.Provider, at), Status: at.Status, ErrorMessage: errorText(at),
				WillRetry: i+1 < n, DelaySource: trace.DelayNone}
			if i+1 < n && !at.Untimed && !r.Attempts[i+1].Untimed {
				p.DelayMs = max(r.Attempts[i+1].Start.Sub(at.End), 0).Milliseconds()
				p.DelaySource = trace.DelayBackoff
			}
			evs = append(evs, event(trace.TypeRetryAttempt, runID, at.End, p))
		}
		f := trace.ProviderRequestFinished{Provider: r.Provider, Model: r.Model,
			DurationMs: last.End.Sub(r.Attempts[0].Start).Milliseconds(), Success: !last.Failed(), Retries: n - 1}
		if last.Failed() {
			f.Error, f.FailureType = errorText(last), classify(r.Provider, last)
			if r.Error != "" {
				f.Error = r.Error
			}
		}
		evs = append(evs, event(trace.TypeProviderRequestFinished, runID, last.End, f))
	}
	slices.SortStableFunc(evs, func(x, y trace.Event) int { return x.TS.Compare(y.TS) })
	return evs
}

func errorText(a Attempt) string {
	switch {
	case a.Error != "":
		return a.Error
	case a.ErrorType != "":
		return a.ErrorType
	case a.Unreported():
		return "failed (the client reported only that it tried again)"
	case a.Status != 0:
		return "HTTP " + itoa(a.Status)
	}
	return ""
}

func event(typ, runID string, ts time.Time, p any) trace.Event {
	ev, err := trace.New(typ, runID, p)
	if err != nil { // the payloads are plain structs: cannot fail
		panic(err)
	}
	ev.TS = ts.UTC().Truncate(time.Millisecond)
	return ev
}
