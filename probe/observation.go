package probe

import "time"

// Observation is what one probe scenario showed, in the client's policy
// time (wall clock divided by the time scale): the input of Infer
// (battery.Observe reads it from a scenario's result and journal).
type Observation struct {
	Fault  string `json:"fault"`
	Sample int    `json:"sample,omitempty"`
	Served int    `json:"served"` // attempts that met the fault before ok
	// Attempts the server saw.
	Attempts int `json:"attempts"`
	// End is how the client ended: succeeded, gave up, stopped (killed at
	// the deadline, still running), or not run (interrupted, error).
	End string `json:"end"`
	// WaitsMs are the gaps the server observed between the end of an
	// attempt and the arrival of the next, policy time.
	WaitsMs []float64 `json:"waitsMs"`
	// FirstAttemptMs is how long the first attempt lasted at the mock
	// (wall clock): for a hang, when the client gave up on it.
	FirstAttemptMs int64 `json:"firstAttemptMs,omitempty"`
	// DateLeadMs is, for an HTTP-date Retry-After, how far in the future
	// the date was when the response was sent (policy time).
	DateLeadMs float64 `json:"dateLeadMs,omitempty"`
	// NoiseMs is the measured noise on the run's waits: the largest
	// measured around one of its gaps (chaos DelaysMs.Noise: twice the
	// scheduling lateness around it plus the client's run-queue time), plus
	// the gap's residual (about 3 ms at worst), policy time.
	NoiseMs float64 `json:"noiseMs"`
	// Models are the models the probed request's attempts asked for, in
	// order (from the mock's journal).
	Models []string `json:"models,omitempty"`
	// WaitNoiseMs is the noise measured around each wait (chaos
	// DelaysMs.Noise plus the residual), policy time; empty when chaos did
	// not measure it per wait (NoiseMs then stands for each).
	WaitNoiseMs []float64 `json:"waitNoiseMs,omitempty"`
	// Round is the bisection round of a Retry-After ceiling probe, and
	// RetryAfterMs its value (policy time); 0 for the battery's probes.
	Round        int   `json:"round,omitempty"`
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
	// Outage is the key of the steady outage kind (OutageKinds) of a run
	// of its own measuring the survival of that kind, or of a check of it;
	// "" for the battery's other runs. Check is the check's side
	// (CheckShorter, CheckLonger) and OutageMs its outage's length (policy
	// time); "" and 0 for a measuring run.
	Outage   string `json:"outage,omitempty"`
	Check    string `json:"check,omitempty"`
	OutageMs int64  `json:"outageMs,omitempty"`
	// ArrivalsMs are the probed attempts' arrivals at the mock since the
	// first one's, policy time (the journal's arrivedAt).
	ArrivalsMs []float64 `json:"arrivalsMs,omitempty"`
	// DeadlineMs is the kill deadline (wall clock).
	DeadlineMs int64 `json:"deadlineMs"`
	// Note says why a probe has no result (interrupted, error).
	Note string `json:"note,omitempty"`
	// Client is how the client ended ("exit status 3", "killed after 10s:
	// still running at the deadline ...") and Stderr the end of its stderr
	// (one line, at most 300 bytes, control characters removed), set
	// when no probed attempt reached the mock: what the profile says it saw.
	Client string `json:"client,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// WarmUpOnly: the warm-up request reached the mock, no probed attempt.
	WarmUpOnly bool `json:"warmUpOnly,omitempty"`
	// Unserved are the requests the mock answered 404 or 405 (a path or
	// method no wire format serves: "POST /v2/chat"), set when no attempt
	// reached it: the client reached the mock, on the wrong path.
	Unserved []string `json:"unserved,omitempty"`
}

// How a client ended.
const (
	EndSucceeded = "succeeded"
	EndGaveUp    = "gave up"
	EndStopped   = "stopped at the deadline"
	EndNotRun    = "not run"
)

// firstNoise is the noise around the first wait.
func (o Observation) firstNoise() float64 {
	if len(o.WaitNoiseMs) > 0 {
		return o.WaitNoiseMs[0]
	}
	return o.NoiseMs
}

// waitNoise is the noise of each wait: one figure per wait, NoiseMs
// where WaitNoiseMs has none.
func (o Observation) waitNoise() []float64 {
	out := make([]float64, len(o.WaitsMs))
	for i := range out {
		out[i] = o.NoiseMs
		if i < len(o.WaitNoiseMs) {
			out[i] = o.WaitNoiseMs[i]
		}
	}
	return out
}

// ms converts a duration to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
