package probe

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/retrylab/retrylab/retry/provider"
)

// Fault is one probe of the battery: what the first attempt meets (the
// attempts after it are answered ok, so the client's decision shows in
// whether a second attempt arrives, and its wait in the gap before it).
type Fault struct {
	// Name is how the profile names the fault: "429", "429 retry-after 3",
	// "drop", "sse overloaded_error".
	Name string
	// Attempt is the scenario's attempt, as a YAML flow mapping (chaos
	// scenario syntax). HTTPDate faults get their retryAfter at build time.
	Attempt string
	// Group orders the faults in the profile: status, retry-after, stream,
	// network, header.
	Group string
	// Err is the failure a client meets, as the retry core's classifier
	// reads it: conformance asks each preset whether it retries it.
	Err provider.Error
	// RetryAfterMs is the Retry-After the fault carries, in ms (0: none).
	RetryAfterMs int64
	// HTTPDate sends Retry-After as an HTTP date RetryAfterMs from the
	// moment the battery is built.
	HTTPDate bool
	// Long faults are bounded by the probe's short deadline (a hang, a
	// Retry-After above any sensible ceiling): a client still waiting at
	// it is stopped and that is the finding.
	Long bool
}

// Provider is a wire format and the faults probed on it.
type Provider struct {
	Name  string
	Model string
	// Faults are the decision probes; Exhaust is the fault repeated until
	// the client gives up, for the backoff and the retry limit.
	Faults  []Fault
	Exhaust Fault
}

// providers is the registry of wire formats the probe knows; register
// adds one. A new wire format is one more call (see init).
var providers = map[string]Provider{}

func register(p Provider) { providers[p.Name] = p }

// ProviderNames lists the known providers, sorted.
func ProviderNames() []string {
	names := make([]string, 0, len(providers))
	for n := range providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupProvider returns the provider named name, or an error listing the
// known ones.
func LookupProvider(name string) (Provider, error) {
	p, ok := providers[name]
	if !ok {
		return Provider{}, fmt.Errorf("unknown provider %q (known: %s)", name, strings.Join(ProviderNames(), ", "))
	}
	return p, nil
}

// Fault returns the provider's fault named name (the exhaustion fault too).
func (p Provider) Fault(name string) (Fault, bool) {
	if p.Exhaust.Name == name {
		return p.Exhaust, true
	}
	i := slices.IndexFunc(p.Faults, func(f Fault) bool { return f.Name == name })
	if i < 0 {
		return Fault{}, false
	}
	return p.Faults[i], true
}

func status(prov string, code int) Fault {
	return Fault{Name: fmt.Sprint(code), Group: "status", Attempt: fmt.Sprintf("{status: %d}", code),
		Err: provider.Error{Kind: provider.KindHTTP, Provider: prov, Status: code}}
}

func boolp(b bool) *bool { return &b }

// streamErr is how a wire format's in-stream error of a type reads to the
// retry core's classifier: Anthropic and Chat Completions put the type in
// error.type, the Responses API's response.failed in error.code, Gemini's
// error frame a google.rpc.Code name with its HTTP code.
type streamErr func(prov, typ string) provider.Error

func typeErr(prov, typ string) provider.Error {
	return provider.Error{Kind: provider.KindSSEError, Provider: prov, ErrorType: typ, Streamed: true}
}

func codeErr(prov, typ string) provider.Error {
	return provider.Error{Kind: provider.KindSSEError, Provider: prov, Code: typ, Streamed: true}
}

// geminiCodes are the HTTP codes of the google.rpc.Code names probed in a
// Gemini stream (the mock's table, internal/wire/gemini.go).
var geminiCodes = map[string]int{"UNAVAILABLE": 503, "INVALID_ARGUMENT": 400}

func geminiErr(prov, name string) provider.Error {
	return provider.Error{Kind: provider.KindSSEError, Provider: prov, ErrorType: name,
		Code: fmt.Sprint(geminiCodes[name]), Streamed: true}
}

// commonFaults are the faults every wire format is probed with; overloaded
// and invalid name its in-stream overload and invalid-request errors in
// its own terms, sse how a client reads them, drop the attempt that cuts
// its stream after the answer's text began.
func commonFaults(prov string, overloaded, invalid string, sse streamErr, drop string) []Fault {
	var fs []Fault
	for _, c := range []int{400, 401, 403, 404, 408, 409, 429, 500, 502, 503, 504} {
		fs = append(fs, status(prov, c))
	}
	ra := func(name, attempt string, ms int64, date bool) Fault {
		return Fault{Name: name, Group: "retry-after", Attempt: attempt, RetryAfterMs: ms, HTTPDate: date,
			Long: ms > 60_000,
			Err:  provider.Error{Kind: provider.KindHTTP, Provider: prov, Status: 429}}
	}
	fs = append(fs,
		ra("429 retry-after 3", `{status: 429, retryAfter: "3"}`, 3000, false),
		ra("429 retry-after-ms 1700", `{status: 429, headers: {retry-after-ms: "1700"}}`, 1700, false),
		ra("429 retry-after http-date", `{status: 429}`, 6000, true),
		ra("429 retry-after 3600", `{status: 429, retryAfter: "3600"}`, 3_600_000, false),
		Fault{Name: "sse " + overloaded, Group: "stream",
			Attempt: fmt.Sprintf("{sseError: {afterEvents: 3, type: %s}}", overloaded),
			Err:     sse(prov, overloaded)},
		Fault{Name: "sse " + invalid, Group: "stream",
			Attempt: fmt.Sprintf("{sseError: {afterEvents: 3, type: %s}}", invalid),
			Err:     sse(prov, invalid)},
		Fault{Name: "drop", Group: "stream", Attempt: drop,
			Err: provider.Error{Kind: provider.KindIncomplete, Provider: prov, Streamed: true}},
		// A 200 that ends cleanly without the events that close it (no stop
		// reason): only a client that checks what it read notices.
		Fault{Name: "truncated", Group: "stream", Attempt: "{truncate: {afterEvents: 3}}",
			Err: provider.Error{Kind: provider.KindIncomplete, Provider: prov, Streamed: true}},
		// A 200 whose next event's data is cut mid-JSON, then the end.
		Fault{Name: "malformed", Group: "stream", Attempt: "{malformed: {afterEvents: 3}}",
			Err: provider.Error{Kind: provider.KindParse, Provider: prov, Streamed: true}},
		// A stream that stops after its first events and then carries only
		// the format's keepalive, every second: a client whose idle timer
		// counts bytes or frames never notices it; one that bounds the
		// attempt (or counts events that carry the answer) gives up and may
		// retry. Long: a client still waiting at the short deadline is the
		// finding, as for the hang.
		Fault{Name: "keepalive stall", Group: "stream", Attempt: "{stall: {afterEvents: 3, keepalive: 1s}}", Long: true,
			Err: provider.Error{Kind: provider.KindTimeout, Provider: prov, Streamed: true}},
		Fault{Name: "reset", Group: "network", Attempt: "{reset: {}}",
			Err: provider.Error{Kind: provider.KindReset, Provider: prov}},
		Fault{Name: "hang", Group: "network", Attempt: "{hang: {}}", Long: true,
			Err: provider.Error{Kind: provider.KindTimeout, Provider: prov}},
		Fault{Name: "400 x-should-retry true", Group: "header", Attempt: `{status: 400, headers: {x-should-retry: "true"}}`,
			Err: provider.Error{Kind: provider.KindHTTP, Provider: prov, Status: 400, ShouldRetry: boolp(true)}},
		Fault{Name: "503 x-should-retry false", Group: "header", Attempt: `{status: 503, headers: {x-should-retry: "false"}}`,
			Err: provider.Error{Kind: provider.KindHTTP, Provider: prov, Status: 503, ShouldRetry: boolp(false)}},
	)
	return fs
}

// dropBytes cuts a stream mid-way: 600 bytes is inside the answer's
// text in the Anthropic and Chat Completions streams of the mock.
const dropBytes = "{drop: {afterBytes: 600}}"

func init() {
	anth := commonFaults("anthropic", "overloaded_error", "invalid_request_error", typeErr, dropBytes)
	anth = slices.Insert(anth, 11, status("anthropic", 529))
	register(Provider{Name: "anthropic", Model: "claude-haiku-4-5", Faults: anth, Exhaust: exhaust("anthropic")})
	register(Provider{Name: "openai", Model: "gpt-4o-mini",
		Faults: commonFaults("openai", "server_error", "invalid_request_error", typeErr, dropBytes), Exhaust: exhaust("openai")})
	// The Responses API: response.failed with error.code server_is_overloaded
	// (what it sends when busy) or invalid_prompt (its refusal of the input).
	// Its first event (response.created, the whole response object) is
	// longer than 600 bytes: the cut comes after 6 whole events, two text
	// deltas (a cut inside response.created was retried by the AI SDK as a
	// failed request, not a stream cut mid-way).
	register(Provider{Name: "openai-responses", Model: "gpt-5",
		Faults:  commonFaults("openai-responses", "server_is_overloaded", "invalid_prompt", codeErr, "{drop: {afterEvents: 6}}"),
		Exhaust: exhaust("openai-responses")})
	// Gemini: an error frame of UNAVAILABLE (503) or INVALID_ARGUMENT (400);
	// every chunk carries text, so the cut after 2 is mid-answer (as
	// scenarios/agents/gemini-cli-cut-stream-not-retried.yaml cuts it).
	register(Provider{Name: "gemini", Model: "gemini-2.5-pro",
		Faults:  commonFaults("gemini", "UNAVAILABLE", "INVALID_ARGUMENT", geminiErr, "{drop: {afterEvents: 2}}"),
		Exhaust: exhaust("gemini")})
}

// exhaust is the steady failure repeated until the client gives up: a 503
// with no Retry-After, which every known client retries with its backoff.
func exhaust(prov string) Fault {
	f := status(prov, 503)
	f.Name, f.Group = "503 until it gives up", "exhaust"
	return f
}
