package scenario

import (
	"strings"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/retry"
)

// Scenario is one scenario file, as DESIGN.md ("Scenario file") defines it.
// LoadScenario fills it and reports errors by file, line and field.
type Scenario struct {
	Name        string  `yaml:"name"`
	Description string  `yaml:"description"`
	Provider    string  `yaml:"provider"` // the wire format: "anthropic" (default), "openai", ... (wire.Names)
	Model       string  `yaml:"model"`
	Client      Client  `yaml:"client"`
	Requests    int     `yaml:"requests"`  // logical requests, default 1
	TimeScale   float64 `yaml:"timeScale"` // built-in client only; default 1.0
	Attempts    []Fault `yaml:"attempts"`  // what the k-th arriving attempt meets; past the end: ok
	// Outage is outage:, the faults of the attempts after attempts[] by
	// the moment they arrive (outage.go); nil: none.
	Outage *Outage `yaml:"outage"`
	// Limits is limits:, the provider account every client of the
	// scenario shares (account.go); nil: unlimited.
	Limits *Account `yaml:"limits"`
	// AttemptsMatch says which answer requests are the scenario's
	// attempts; the others are side requests (mock/side.go). nil: every request
	// a wire format answers is an attempt.
	AttemptsMatch *AttemptsMatch `yaml:"attemptsMatch"`
	// Fleet is fleet:, many copies of the client (fleet.go); nil: one.
	Fleet  *Fleet `yaml:"fleet"`
	Expect Expect `yaml:"expect"`

	// File is the path the scenario was loaded from.
	File string `yaml:"-"`
	// Lines holds the 1-based YAML line of keys, recorded at load time for
	// CI annotations: "expect" and "client" (the top-level keys),
	// "client.command", and "expect.FIELD" for each field of the expect
	// block. Absent keys are
	// not in the map; a scenario built in code has none.
	Lines map[string]int `yaml:"-"`
}

// ExpectLine returns the YAML line of the expectation a check named name
// verifies: expect.outcome for "outcome", expect.delays for "delays",
// "delays.client" and "delays.server", and so on; the client key for the
// "client" check; else the line of expect itself. 0 when unknown.
func (sc *Scenario) ExpectLine(check string) int {
	if sc == nil || sc.Lines == nil {
		return 0
	}
	field, _, _ := strings.Cut(check, ".")
	field, _, _ = strings.Cut(field, "[") // prompts[attempt 2] → prompts
	if l := sc.Lines["expect."+field]; l > 0 {
		return l
	}
	if check == "client" {
		if l := sc.Lines["client"]; l > 0 {
			return l
		}
	}
	return sc.Lines["expect"]
}

// Client says which client runs the scenario and with what policy.
type Client struct {
	// Policy is client.policy: a preset name, a policy file or an inline
	// policy mapping, decoded at load (see PolicyFor).
	Policy     ClientPolicy `yaml:"policy"`
	Timeout    Duration     `yaml:"timeout"`
	Escalation []string     `yaml:"escalation"`
	// Fallback is Plandex's fallback chain for the built-in client.
	Fallback Fallback `yaml:"fallback"`
	Command  []string `yaml:"command"`
	// Env is client.env: variables added to an external client's
	// environment (CLAUDE_CODE_MAX_RETRIES: "3"). Names the harness sets
	// itself (ReservedEnv) are rejected at load; see client/clientenv.go for the
	// layers.
	Env map[string]string `yaml:"env"`
	// InheritEnv is client.inheritEnv: names of the runner's environment
	// an external client gets as they are, beyond the few every client
	// gets (PATH, the locale, TERM, the toolchains' folders: BaseEnv). A
	// name the runner's environment lacks is not passed at all; names the
	// harness sets itself are rejected at load (InheritEnvProblem).
	InheritEnv []string `yaml:"inheritEnv"`
	// Home is client.home: files written into an external client's empty
	// HOME before it starts, by path inside it (.qwen/settings.json: its
	// contents), for agents configured by a settings file; ${NAME} in the
	// contents, as in client.command and client.env values, is replaced
	// by the harness's variable NAME (client/clientenv.go, ExpandHarness).
	Home map[string]string `yaml:"home"`
	// Operation is the safety of the operation the built-in client retries
	// (seed 001, "Operation Safety & Idempotency Guard"): safe (default),
	// conditional or irreversible. An irreversible operation is not retried
	// unless the policy says allowIrreversible: true.
	Operation string `yaml:"operation"`
	// Requires names what an external client needs to run: a bare name is a
	// program looked up in PATH, a name with a slash a file or folder (from
	// the current folder, else from the scenario file's folder, as command
	// arguments are resolved). When one is missing the scenario is skipped,
	// not failed, and RequiresHint says how to provide it.
	Requires     []string `yaml:"requires"`
	RequiresHint string   `yaml:"requiresHint"`
	// Validate makes the built-in client check each response's text (seed
	// 004 US-002): one that fails is a logical failure, retried as the
	// policy retries logical_failure. With ErrorContext, each retry's prompt
	// is seed 004's enhanced prompt: the error, the failed output, an
	// instruction to avoid it, then the original request.
	Validate     *Validate `yaml:"validate"`
	ErrorContext bool      `yaml:"errorContext"`
}

// Validate is the built-in client's check of a response's text: it must
// contain every string of Contains.
type Validate struct {
	Contains []string `yaml:"contains"`
}

// Operations are the values client.operation takes.
var Operations = []string{"safe", "conditional", "irreversible"}

// Safety is client.operation as the retry core's Safety (Safe when unset);
// the built-in client's Retrier runs with Operation: sc.Client.Safety().
func (c Client) Safety() retry.Safety {
	switch c.Operation {
	case "conditional":
		return retry.SafeAfterRollback
	case "irreversible":
		return retry.Irreversible
	}
	return retry.Safe
}

// Fallback names the models (or provider) the built-in client falls back to.
type Fallback struct {
	LargeContext  string `yaml:"largeContext"`  // model for context_too_long
	Error         string `yaml:"error"`         // model for other persistent or non-retryable failures
	Provider      string `yaml:"provider"`      // a different provider
	ProviderModel string `yaml:"providerModel"` // the model on Provider
}

// Fault is what one arriving attempt meets: a value of one of the kinds
// registered in package chaos/fault (fault.Status, fault.Drop …), decoded
// from its mapping in attempts[]; a nil Kind is "ok".
type Fault struct {
	Kind fault.Kind

	// Line is the line of the fault in its file, for error messages.
	Line int `yaml:"-"`
}

// Name names the fault's kind, as the journal records it ("ok" for nil).
func (f Fault) Name() string { return fault.NameOf(f.Kind) }

// Toxic is a raw Toxiproxy toxic applied for one attempt.
type Toxic = fault.Toxic

// Fault kinds built in, as Fault.Name returns them and the journal records
// them (fault.Names lists every registered kind).
const (
	FaultOK       = "ok"
	FaultStatus   = "status"
	FaultSSEError = "sseError"
	FaultDrop     = "drop"
	FaultHang     = "hang"
	FaultReset    = "reset"
	FaultLatency  = "latency"
	FaultToxics   = "toxics"
)

// Expect holds a scenario's expectations; a nil/zero field is not checked.
type Expect struct {
	Outcome      string       `yaml:"outcome"` // success | failure | still_retrying
	Attempts     *int         `yaml:"attempts"`
	FailureTypes []string     `yaml:"failureTypes"`
	Delays       Delays       `yaml:"delays"`
	Tolerance    Tolerance    `yaml:"tolerance"`
	Escalations  []Escalation `yaml:"escalations"`
	MaxDuration  Duration     `yaml:"maxDuration"`
	// Prompts checks what the client sent on given attempts (the text of
	// each request's last user message, as the mock's journal records it):
	// e.g. that a retry carries the error context of the attempt before it
	// (seed 004 US-002).
	Prompts []PromptExpect `yaml:"prompts"`
	// Output checks an external client's stdout (output.go).
	Output *OutputExpect `yaml:"output"`
	// SelfReport requires an external client's own account of its
	// attempts in OpenTelemetry: without it, the selfReport check fails
	// instead of being left out (verify/check_selfreport.go).
	SelfReport bool `yaml:"selfReport"`
	// Findings gates on the findings the run reports (findings.go).
	Findings *FindingsExpect `yaml:"findings"`
	// Fleet gates on the fleet's figures (fleet.go); only with fleet:.
	Fleet *FleetExpect `yaml:"fleet"`
}

// PromptExpect is what server attempt Attempt's prompt must and must not
// contain (plain substrings, case-sensitive).
type PromptExpect struct {
	Attempt     int      `yaml:"attempt"`
	Contains    []string `yaml:"contains"`
	NotContains []string `yaml:"notContains"`
}

// Delays is either an explicit list of waits or "policy" (each wait inside
// the policy's envelope for that attempt).
type Delays struct {
	Set    bool // the key was present
	Policy bool
	List   []Duration
}

// Tolerance for delay checks: a wait w matches want when |w-want| <= Abs + Ratio*want.
type Tolerance struct {
	Ratio float64  `yaml:"ratio"`
	Abs   Duration `yaml:"abs"`
}

// Escalation is one expected model switch.
type Escalation struct {
	From   string `yaml:"from" json:"from"`
	To     string `yaml:"to" json:"to"`
	Reason string `yaml:"reason" json:"reason,omitempty"`
	// Attempt is the server attempt (1-based) that first asked for To,
	// when the switch was seen in the journal (a client without a trace);
	// in expect.escalations, when set, the attempt it must happen at.
	Attempt int `yaml:"attempt" json:"attempt,omitempty"`
}

// Duration is a time.Duration written in YAML as a Go duration string ("2s", "300ms").
type Duration = fault.Duration

// FaultAt is the scenario's k-th fault (0-based); past the end of the list,
// ok.
func (sc *Scenario) FaultAt(k int) Fault {
	if k < len(sc.Attempts) {
		return sc.Attempts[k]
	}
	return Fault{}
}
