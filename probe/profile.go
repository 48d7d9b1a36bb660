package probe

// Schema is the schema of the profile (`chaos probe --format json`).
const Schema = "retrylab.probe/v1"

// Profile is what the probe learnt of a client: the document
// `chaos probe --format json` prints. A figure the measurements cannot tell
// is null and has an Inconclusive entry saying why; every figure that is
// set has a Confidence entry keyed by its JSON path ("policy.backoff.initialMs").
type Profile struct {
	Schema    string  `json:"schema"`
	Client    string  `json:"client"`
	Provider  string  `json:"provider"`
	Model     string  `json:"model"`
	TimeScale float64 `json:"timeScale"`
	Samples   int     `json:"samples"`
	// Interrupted is set when the probe was stopped (Ctrl-C) before every
	// scenario finished: the profile holds what was learnt.
	Interrupted bool `json:"interrupted,omitempty"`
	// Unreached says what was seen when the client reached the mock in no
	// run (how it ended, the end of its stderr): nothing was measured, and
	// every figure is inconclusive for that reason.
	Unreached string `json:"unreached,omitempty"`
	// LearntNothing says why, when the client reached the mock but no
	// decision and no figure could be told (every fault's retried null,
	// every figure inconclusive): the CLI exits 2 with it, never 0.
	LearntNothing string `json:"learntNothing,omitempty"`
	// Nondeterministic says why, when the runs of a fault served more
	// than once disagree (retried in some and not others, a request in
	// some and none in others, give-up counts more than one apart) in
	// most of the runs that can be compared (consistency.go): every
	// decision is null and every figure inconclusive; the CLI exits 2.
	Nondeterministic string `json:"nondeterministic,omitempty"`
	// WarmUp says whether the probed requests followed a warm-up request
	// and why (set by chaos probe; absent from profiles inferred offline).
	WarmUp     *WarmUp `json:"warmUp,omitempty"`
	DurationMs int64   `json:"durationMs"`
	// Floor is what the client's own waits impose on DurationMs (floor.go;
	// set by chaos probe, absent from profiles inferred offline).
	Floor  *Floor `json:"floor,omitempty"`
	RunDir string `json:"runDir,omitempty"`
	// Plan is what the probe said before it started: an upper bound on its
	// wall time and the figures its deadlines may leave unknown (absent
	// from profiles inferred offline).
	Plan         *PlanEstimate         `json:"plan,omitempty"`
	Faults       []FaultResult         `json:"faults"`
	Policy       Policy                `json:"policy"`
	Confidence   map[string]Confidence `json:"confidence"`
	Inconclusive []Inconclusive        `json:"inconclusive"`
	Conformance  []Conformance         `json:"conformance"`
	// Unmodelled are the behaviours the learnt policy (--policy-out) does
	// not hold, found by holding every recorded run to it as delays:
	// policy would (verify.go), and what it leaves out for each (set by
	// chaos probe; absent when the policy holds every run).
	Unmodelled []Unmodelled `json:"unmodelled,omitempty"`
	// Changes are what changed since the profile given with --against
	// (absent without it).
	Changes []Change `json:"changes,omitempty"`
	// Findings are what the experiments' runs showed without being asked
	// (findings.go), in the order the experiments finished; set by chaos
	// probe, absent when none raised one.
	Findings []Finding `json:"findings,omitempty"`
}

// FaultResult is what the client did with one fault.
type FaultResult struct {
	Fault  string `json:"fault"`
	Group  string `json:"group"`
	Sample int    `json:"sample,omitempty"`
	// Retried is null when the probe could not tell (not run, stopped
	// before deciding).
	Retried  *bool   `json:"retried"`
	Attempts int     `json:"attempts"`
	WaitsMs  []int64 `json:"waitsMs"` // server-observed, policy time
	// NoiseMs is the noise measured around each wait (policy time).
	NoiseMs []int64 `json:"noiseMs,omitempty"`
	End     string  `json:"end"` // succeeded, gave up, stopped at the deadline, no request, not run
	// DateLeadMs is, for an HTTP-date Retry-After, how far ahead the date
	// was when the response was sent (policy time): the wait it asked for.
	DateLeadMs int64  `json:"dateLeadMs,omitempty"`
	Note       string `json:"note,omitempty"`
}

// Policy is the retry policy inferred.
type Policy struct {
	// SurvivesOutageMs is, for each steady outage kind (OutageKinds: "529"
	// or "503", "429", "drop"), the longest such outage the client rides
	// out, policy time from its first attempt (survival.go); null for a
	// kind the probe could not tell (see Inconclusive). Absent from
	// profiles of a provider without kinds.
	SurvivesOutageMs map[string]*Survival `json:"survivesOutageMs,omitempty"`
	MaxRetries       *int                 `json:"maxRetries"`
	Backoff          Backoff              `json:"backoff"`
	RetryAfter       RetryAfter           `json:"retryAfter"`
	// TimeoutMs is when the client gave up on a hung attempt (wall clock).
	TimeoutMs   *int64      `json:"timeoutMs"`
	NestedLoops NestedLoops `json:"nestedLoops"`
	// Fallbacks are model switches seen; the probe does not watch the
	// model of each request yet (see Inconclusive).
	Fallbacks []string `json:"fallbacks"`
}

// Backoff is the fitted backoff: nominal wait before retry k (0-based)
// min(initialMs × multiplier^k, maxMs), times a factor in the jitter band.
type Backoff struct {
	InitialMs  *float64 `json:"initialMs"`
	Multiplier *float64 `json:"multiplier"`
	MaxMs      *float64 `json:"maxMs"` // null: never reached (or not measurable)
	Jitter     *Jitter  `json:"jitter"`
}

// Jitter is the band of observed wait ÷ nominal wait.
type Jitter struct {
	MinFactor float64 `json:"minFactor"`
	MaxFactor float64 `json:"maxFactor"`
	// Kind is the known jitter form that fits the band best (none, sdk,
	// equal, full, proportional ±f); "" when none fits.
	Kind string `json:"kind,omitempty"`
}

// RetryAfter says which forms of Retry-After the client honours.
type RetryAfter struct {
	Seconds  *bool `json:"seconds"`
	Ms       *bool `json:"ms"`
	HTTPDate *bool `json:"httpDate"`
	// CeilingMs is the value above which it is ignored or the client gives
	// up; null when not pinned (Large says what the large value did).
	CeilingMs *int64 `json:"ceilingMs"`
	// CeilingBracketMs is [lo, hi]: the largest value seen honoured and
	// the smallest seen ignored or refused (the battery's and the
	// bisection's); absent when the battery did not bracket the ceiling.
	CeilingBracketMs []int64 `json:"ceilingBracketMs,omitempty"`
	// Large is what the client did with a Retry-After far above any
	// sensible wait: waited (still waiting at the deadline), backoff
	// (ignored it), capped (waited a bounded time far above its backoff's
	// first wait and far below the value: CapMs), gave up (refused to
	// wait), or "" when unknown.
	Large   string `json:"large"`
	LargeMs int64  `json:"largeMs"`
	// CapMs is the wait a capped Retry-After got (Large "capped").
	CapMs *int64 `json:"capMs,omitempty"`
}

// NestedLoops reports attempts that come in bursts of bursts (an inner
// retry loop inside an outer one): waits that fall back after growing.
type NestedLoops struct {
	Seen bool `json:"seen"`
	// Inner is the number of attempts per burst, when seen: the inner
	// loop retries Inner − 1 times.
	Inner int `json:"inner,omitempty"`
	// Outer is how many times the outer loop started the inner one again
	// (bursts − 1), when the client gave up after whole bursts: Codex CLI's
	// 30 attempts are 6 bursts of 5, 5 reconnects.
	Outer int `json:"outer,omitempty"`
}

// Confidence is how sure a figure is: high, medium or low, and why.
type Confidence struct {
	Level string `json:"level"`
	Basis string `json:"basis"`
}

// Confidence levels.
const (
	High   = "high"
	Medium = "medium"
	Low    = "low"
)

// Inconclusive is a figure the probe could not tell, and the measured reason.
type Inconclusive struct {
	Figure string `json:"figure"`
	Reason string `json:"reason"`
}

// Conformance is one rule of a preset held against the profile.
type Conformance struct {
	Preset string `json:"preset"`
	Rule   string `json:"rule"`
	// State: holds, differs, or unknown (the profile cannot tell).
	State string `json:"state"`
	Want  string `json:"expected"`
	Got   string `json:"observed"`
}

// WarmUp says whether the probed requests followed a warm-up request, and
// why (Profile.WarmUp; absent from profiles inferred offline).
type WarmUp struct {
	Used bool `json:"used"`
	// Detected is set when the probe found, by its first probe run alone,
	// that the client makes one request whatever it is told, and turned
	// the warm-up off for the rest.
	Detected bool   `json:"detected,omitempty"`
	Reason   string `json:"reason"`
}

// PlanEstimate is what the probe says before it starts (Profile.Plan): an
// upper bound on its wall time, worked out from the plan alone, and the
// figures its deadlines leave unknown for a client slower than them.
type PlanEstimate struct {
	// EstimatedMs is an upper bound on the wall time, every scenario of
	// every phase running to its kill deadline; Bound says how it was
	// worked out. It is not a forecast: a client that gives up or
	// succeeds early takes far less.
	EstimatedMs int64  `json:"estimatedMs"`
	Bound       string `json:"bound"`
	Scenarios   int    `json:"scenarios"`
	Parallel    int    `json:"parallel"`
	BudgetMs    int64  `json:"budgetMs"`
	// LongestMs is the longest deadline of one scenario, plus the start
	// grace (--start-grace) that may come before it: at most the budget
	// plus the grace, the wall time one exhaustion run may take.
	LongestMs int64 `json:"longestMs"`
	// ExpectedExhaustionMs is the sum of the waits of one exhaustion run
	// by the policy of the earlier profile (--against), when it is known.
	ExpectedExhaustionMs *int64 `json:"expectedExhaustionMs,omitempty"`
	// Unknown are the figures the deadlines leave unknown when the
	// client needs longer than them, each with the deadline.
	Unknown []string `json:"unknownPastBudget"`
}
