package probe

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/retry/policyfile"
)

// agentKnown is what an agent's source and docs/agents.md say it does:
// the faults it retries (every other decision probe is not retried; the
// hang may stay unknown) and its figures (nil: not checked).
type agentKnown struct {
	file            string // probe/testdata/agents/FILE: the journal measured by `chaos probe`
	retried         []string
	maxRetries      *int
	initialMs, mult *float64
	maxMs           *float64
	jitter          string
	raSeconds, raMs *bool
	raDate          *bool
	inner, outer    int      // nested loops: attempts per burst, reconnects
	large           string   // policy.retryAfter.large ("": not checked)
	ceilingMs       int64    // the known Retry-After ceiling: inside the bracket (ends included), ceilingMs within 15% (0: not checked)
	inconclusive    []string // figures the probe must leave open
	// preset is the agent's own retry preset: the profile must conform to
	// it on every rule (holds or unknown), but the rules in unmodelled
	// (what docs/agents.md says the preset does not model, each with why).
	preset     string
	unmodelled []string
	resends    string // a line the learnt policy's resends list must hold ("": none)
}

// TestMeasuredAgents infers each agent's profile from the journal `chaos
// probe` measured on it (docs/probe.md, "Verified on": the faults'
// attempts, ends, waits and the noise measured around each) and checks
// every decision and every figure within 15% of the known one. It is the
// regression table of the probe's fixes: it runs in milliseconds.
func TestMeasuredAgents(t *testing.T) {
	tests := []agentKnown{
		{file: "vercel-ai-sdk-anthropic.json", preset: "vercel-ai-sdk",
			retried: []string{"408", "409", "429", "500", "502", "503", "504", "529", "429 retry-after 3",
				"429 retry-after-ms 1700", "429 retry-after http-date", "429 retry-after 3600", "reset", "503 x-should-retry false"},
			maxRetries: ptr(2), initialMs: ptr(2000.0), mult: ptr(2.0), jitter: "none",
			raSeconds: ptr(true), raMs: ptr(true), raDate: ptr(true),
			// Retry-After used when 0 ≤ v < 60s, else the backoff; the
			// journal adds the ceiling's 3 rounds from a second run.
			large: "backoff", ceilingMs: 60_000},
		// 1s + up to 100%, ×2, no cap, 6 retries; a 429 only with a
		// retry-after under 60s; 409 not retried; nothing in the stream.
		// (Read as 2s with equal jitter before the additive forms.)
		// The Responses API: as over Anthropic; response.failed and a cut
		// after the text began are not retried (the journal's drop is the
		// afterEvents 6 run: the 600-byte cut inside response.created was
		// retried as a failed request).
		{file: "vercel-ai-sdk-responses.json", preset: "vercel-ai-sdk",
			retried: []string{"408", "409", "429", "500", "502", "503", "504", "429 retry-after 3",
				"429 retry-after-ms 1700", "429 retry-after http-date", "429 retry-after 3600", "reset", "503 x-should-retry false"},
			maxRetries: ptr(2), initialMs: ptr(2000.0), mult: ptr(2.0), jitter: "none",
			raSeconds: ptr(true), raMs: ptr(true), raDate: ptr(true)},
		// Codex CLI: 200ms × 2^n ± 10% in bursts of 5 attempts, 5
		// reconnects (30 attempts); a 429 only with retry-after (seconds or
		// a date), which it waits, 3600s too. Measured beyond its preset:
		// 403 reconnects, and response.failed server_is_overloaded ends the
		// run ("Selected model is at capacity").
		{file: "codex-cli.json", preset: "codex-cli",
			// Its preset retries an in-stream error; the measured client ends the run.
			unmodelled: []string{"retries sse server_is_overloaded"},
			retried: []string{"401", "403", "408", "409", "500", "502", "503", "504", "429 retry-after 3",
				"429 retry-after http-date", "drop", "reset", "503 x-should-retry false"},
			maxRetries: ptr(29), initialMs: ptr(200.0), mult: ptr(2.0), jitter: "proportional ±10%",
			raSeconds: ptr(true), raDate: ptr(true), inner: 5, outer: 5},
		// Claude Code: 500ms × 2^n + up to 25%, capped at 32s, 10 retries;
		// retry-after in seconds (max(value + up to 25%, backoff)), not
		// retry-after-ms. A 400 (and 404), an SSE error and x-should-retry
		// true on a 400 are re-sent at once (another body, docs/agents.md).
		// (Read as 600ms ±20% with a 35.9s cap before the additive forms.)
		{file: "claude-code.json", preset: "claude-code",
			// Re-sent at once (27ms) like overloaded_error; the preset's
			// resends list the error types measured before (not invalid_request_error).
			// Its re-sends at once are written as loops of their own, so
			// delays: policy with the learnt file does not hold them to the backoff.
			resends: "  - {statuses: [400, 404], maxRetries: 1, kind: none}\n",
			retried: []string{"400", "401", "404", "408", "409", "429", "500", "502", "503", "504", "529",
				"429 retry-after 3", "429 retry-after-ms 1700", "429 retry-after http-date", "sse overloaded_error",
				"sse invalid_request_error", "drop", "reset", "400 x-should-retry true", "503 x-should-retry false"},
			maxRetries: ptr(10), initialMs: ptr(500.0), mult: ptr(2.0), maxMs: ptr(32000.0), jitter: "additive +25%",
			raSeconds: ptr(true), raMs: ptr(false)},
		// Gemini CLI (bounded: --budget 50s, 11 faults): 5s × 2^n ± 30%, a
		// retry limit beyond the budget (inconclusive); an error frame
		// mid-stream is re-sent after 1s (GeminiChat's own loop), a cut is
		// not; a RetryInfo of 3s under a 5s backoff cannot show (max of
		// the two).
		{file: "gemini-cli.json", preset: "gemini-cli",
			// Re-sent after 1.1s like UNAVAILABLE; the preset's stream loop
			// lists overloaded, server and rate-limit errors only.
			retried:   []string{"429", "500", "503", "504", "429 retry-after 3", "sse UNAVAILABLE", "sse INVALID_ARGUMENT", "reset"},
			initialMs: ptr(5000.0), mult: ptr(2.0), jitter: "proportional ±30%",
			inconclusive: []string{"policy.maxRetries", "policy.retryAfter.seconds"}},
		// openai-go v3.96.0 (internal/requestconfig): 408, 409, 429, ≥ 500
		// and connection errors retried, x-should-retry obeyed, nothing in
		// the stream; 2 retries, 0.5s × 2^n − up to 25% (cap 8s, never
		// reached); retry-after-ms, then Retry-After in seconds or an HTTP
		// date, used up to 2 minutes; above that the response is final. The
		// journal adds the bisection of a second run (--budget 3m): 3 rounds.
		{file: "openai-go.json", preset: "openai-go",
			retried: []string{"408", "409", "429", "500", "502", "503", "504", "429 retry-after 3",
				"429 retry-after-ms 1700", "429 retry-after http-date", "reset", "400 x-should-retry true"},
			maxRetries: ptr(2), initialMs: ptr(500.0), mult: ptr(2.0), jitter: "sdk",
			raSeconds: ptr(true), raMs: ptr(true), raDate: ptr(true), large: "gave up", ceilingMs: 120_000},
		// anthropic-java 3.16.0 (RetryingHttpClient.kt): 408, 409, 429,
		// ≥ 500 and IOExceptions retried, x-should-retry obeyed, nothing in
		// the stream; 2 retries, 0.5s × 2^n − up to 25%; Retry-After-Ms,
		// then Retry-After (seconds or a date) used when positive, however
		// long: still waiting on 3600s at the probe's 15s.
		{file: "anthropic-java.json", preset: "anthropic-java",
			retried: []string{"408", "409", "429", "500", "502", "503", "504", "529", "429 retry-after 3",
				"429 retry-after-ms 1700", "429 retry-after http-date", "reset", "400 x-should-retry true"},
			maxRetries: ptr(2), initialMs: ptr(500.0), mult: ptr(2.0), jitter: "sdk",
			raSeconds: ptr(true), raMs: ptr(true), raDate: ptr(true), large: "waited"},
		// openai-java 4.105.0: the same loop, every server wait clamped to
		// [0, 8s]: 3600s is retried after 8s, read as capped (not the
		// backoff: 16× its first wait). Measured at a load of 10–20:
		// the 3s and 1.7s Retry-Afters had 1.3s and 0.6s of measured noise,
		// so those readings stay open, as they should.
		{file: "openai-java.json", preset: "openai-java",
			retried: []string{"408", "409", "429", "500", "502", "503", "504", "429 retry-after 3",
				"429 retry-after-ms 1700", "429 retry-after http-date", "429 retry-after 3600", "reset", "400 x-should-retry true"},
			maxRetries: ptr(2), initialMs: ptr(500.0), mult: ptr(2.0), jitter: "sdk", raDate: ptr(true), large: "capped",
			inconclusive: []string{"policy.retryAfter.seconds", "policy.retryAfter.ms"}},
		// anthropic 0.121.0 for Python (src/anthropic/_base_client.py:
		// _should_retry, _calculate_retry_timeout,
		// _parse_retry_after_header; _constants.py): 408, 409, 429, ≥ 500
		// and connection errors retried, x-should-retry first, nothing
		// after the response began; 2 retries, min(0.5s × 2ⁿ, 8s) × (1 −
		// 0.25·u); retry-after-ms, then retry-after in seconds or a date,
		// used when 0 < v ≤ 60s, else the backoff: 3600s retried after
		// its backoff, the ceiling bisected to [58s, 63s].
		{file: "anthropic-python.json", preset: "anthropic-python",
			retried: []string{"408", "409", "429", "500", "502", "503", "504", "529", "429 retry-after 3",
				"429 retry-after-ms 1700", "429 retry-after http-date", "429 retry-after 3600", "reset", "400 x-should-retry true"},
			maxRetries: ptr(2), initialMs: ptr(500.0), mult: ptr(2.0), jitter: "sdk",
			raSeconds: ptr(true), raMs: ptr(true), raDate: ptr(true), large: "backoff", ceilingMs: 60_000},
		// openai 3.3.1 for Python (src/openai/_base_client.py, the same
		// functions; _constants.py MAX_RETRY_AFTER_DELAY 120): as
		// anthropic's, but a Retry-After up to 120s is used and one above
		// it is not retried at all (checked before x-should-retry). Probed
		// with --budget 3m so the bisection reaches 136s: [116s, 126s].
		{file: "openai-python.json", preset: "openai-python",
			retried: []string{"408", "409", "429", "500", "502", "503", "504", "429 retry-after 3",
				"429 retry-after-ms 1700", "429 retry-after http-date", "reset", "400 x-should-retry true"},
			maxRetries: ptr(2), initialMs: ptr(500.0), mult: ptr(2.0), jitter: "sdk",
			raSeconds: ptr(true), raMs: ptr(true), raDate: ptr(true), large: "gave up", ceilingMs: 120_000},
		// google-genai 3.6.1 for Python (google/genai/_api_client.py:
		// retry_args): without http_options.retry_options,
		// tenacity.stop_after_attempt(1): one attempt, nothing retried,
		// whatever the status or header; no backoff and no Retry-After to
		// read. The same default as @google/genai's (preset gemini-sdk).
		{file: "genai-python.json", preset: "gemini-sdk",
			retried: nil, maxRetries: ptr(0),
			inconclusive: []string{"policy.backoff.initialMs", "policy.backoff.multiplier", "policy.backoff.jitter",
				"policy.retryAfter.seconds", "policy.retryAfter.ms", "policy.retryAfter.httpDate"}},
		// pydantic-ai 2.78.0 (pydantic-ai-slim[anthropic]) over anthropic
		// 2.17.0: Agent("anthropic:MODEL") builds AnthropicProvider, whose
		// AsyncAnthropic keeps the SDK's default max_retries 2; pydantic-ai's
		// own retries are for output validation and tools, not HTTP. So
		// the SDK's rules (src/anthropic/_base_client.py, 2.17.0): as
		// 0.121.0, but any positive Retry-After is waited in full
		// (_calculate_retry_timeout: "just do what it says"): 3600s still
		// waited at 15s. Measured at load 14–22: the 3s and 1.7s
		// Retry-Afters had 0.8s and 0.7s of measured noise, so those
		// readings stay open, as they should.
		{file: "pydantic-ai.json", preset: "anthropic-python-2",
			retried: []string{"408", "409", "429", "500", "502", "503", "504", "529", "429 retry-after 3",
				"429 retry-after-ms 1700", "429 retry-after http-date", "reset", "400 x-should-retry true"},
			maxRetries: ptr(2), initialMs: ptr(500.0), mult: ptr(2.0), jitter: "sdk",
			raDate: ptr(true), large: "waited",
			inconclusive: []string{"policy.retryAfter.seconds", "policy.retryAfter.ms"}},
		// aider 0.86.2 (aider/coders/base_coder.py send_message,
		// aider/exceptions.py, aider/models.py RETRY_TIMEOUT 60) over
		// litellm 1.81.10 and openai 2.20.0: two loops. The SDK's, inside:
		// 2 retries, 0.5s × 2ⁿ − up to 25%, x-should-retry first, a
		// Retry-After used when 0 < v ≤ 60s (openai before 2.52.0: 3600s
		// gets the backoff). aider's, around it: every exception it marks
		// retryable (not BadRequest, Authentication, NotFound) tried again
		// after 0.25s, 0.5s … 32s, no jitter, 8 times; so a steady 503 is
		// (1 + 8) × (1 + 2) = 27 attempts (26 retries, bursts of 3, 8
		// more), and what the SDK does not retry (an error event or a cut
		// mid-stream, a 503 with x-should-retry: false) is sent again by
		// aider. aider exits 0 after giving up. At load 25 the 3s
		// Retry-After had 1.6s of measured noise: left open.
		{file: "aider.json", preset: "aider",
			unmodelled: []string{"retries 503 x-should-retry false"},
			retried: []string{"408", "409", "429", "500", "502", "503", "504", "429 retry-after 3",
				"429 retry-after-ms 1700", "429 retry-after http-date", "429 retry-after 3600", "sse server_error",
				"sse invalid_request_error", "drop", "reset", "400 x-should-retry true", "503 x-should-retry false"},
			maxRetries: ptr(26), initialMs: ptr(500.0), mult: ptr(2.0), jitter: "sdk", inner: 3, outer: 8,
			raMs: ptr(true), raDate: ptr(true), large: "backoff",
			inconclusive: []string{"policy.retryAfter.seconds"}},
		// LiteLLM 1.106.0 as a library (litellm_client.py completion,
		// num_retries unset) over openai 2.54.0. The layers compose as
		// (1 + LiteLLM's) × (1 + the SDK's): main.py completion() passes
		// max_retries only when num_retries is set (None here: no
		// LiteLLM retry loop, completion_with_retries is not used), and
		// llms/openai/openai.py gives the OpenAI client max_retries 2: 3
		// attempts per logical call, 2 retries. The SDK's rules are
		// openai-python's (openai ≥ 2.52.0: _base_client.py as 3.3.1's,
		// MAX_RETRY_AFTER_DELAY 120): 500ms × 2ⁿ − up to 25%, a
		// Retry-After above 120s refused: [116s, 126s] bisected (--budget
		// 3m, --samples 8: 16 exhaustion runs, 32 first waits). (A run at
		// load 17–24 with 4 samples read the first wait 400 ms, medium:
		// docs/probe.md "Not done yet".)
		{file: "litellm.json", preset: "openai-python",
			retried: []string{"408", "409", "429", "500", "502", "503", "504", "429 retry-after 3",
				"429 retry-after-ms 1700", "429 retry-after http-date", "reset", "400 x-should-retry true"},
			maxRetries: ptr(2), initialMs: ptr(500.0), mult: ptr(2.0), jitter: "sdk",
			raSeconds: ptr(true), raMs: ptr(true), raDate: ptr(true), large: "gave up", ceilingMs: 120_000},
		// langchain-anthropic 1.7.10 (langchain-core 1.8.3) over anthropic
		// 2.17.0: ChatAnthropic (langchain_anthropic/chat_models.py:
		// max_retries 2, handed to the SDK client in _client_params) adds no
		// loop of its own: (1 + 0) × (1 + 2) attempts, the SDK's rules as
		// pydantic-ai's (anthropic-python-2: any positive Retry-After
		// waited, 3600s still waited at 15s). Probed with --samples 8 (16
		// exhaustion runs, 25 first waits kept): five runs with 4 samples
		// at load 7–27 read 400 ms (+25%, ±10% or ±20%), medium, each
		// (one said high before TestFitWaitsMeasuredShort): too few draws
		// to find the SDK's 375–400 ms end under the noise.
		{file: "langchain-anthropic-python.json", preset: "anthropic-python-2",
			retried: []string{"408", "409", "429", "500", "502", "503", "504", "529", "429 retry-after 3",
				"429 retry-after-ms 1700", "429 retry-after http-date", "reset", "400 x-should-retry true"},
			maxRetries: ptr(2), initialMs: ptr(500.0), mult: ptr(2.0), jitter: "sdk",
			raSeconds: ptr(true), raMs: ptr(true), raDate: ptr(true), large: "waited"},
		{file: "langchain-js.json", preset: "langchain-js",
			retried: []string{"408", "500", "502", "503", "504", "529", "429 retry-after 3",
				"429 retry-after http-date", "reset", "503 x-should-retry false"},
			maxRetries: ptr(6), initialMs: ptr(1000.0), mult: ptr(2.0), jitter: "additive +100%",
			raSeconds: ptr(true), raDate: ptr(true)},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			prov, obs := readJournal(t, tt.file)
			p := Infer(prov, obs)
			for _, f := range p.Faults {
				if f.Sample > 0 || f.Group == "ceiling" || (f.End == EndStopped && f.Retried == nil) { // still waiting: a finding, not a decision; the ceiling's probes: below
					continue
				}
				want := slices.Contains(tt.retried, f.Fault)
				if f.Retried == nil || *f.Retried != want {
					t.Errorf("%s: retried %v, want %t", f.Fault, show(f.Retried), want)
				}
			}
			for _, fig := range tt.inconclusive {
				if !slices.ContainsFunc(p.Inconclusive, func(in Inconclusive) bool { return in.Figure == fig }) {
					t.Errorf("%s is not inconclusive (%+v)", fig, p.Confidence[fig])
				}
			}
			conformsToOwnPreset(t, p, prov, tt)
			y := PolicyYAML(p, prov)
			if _, err := policyfile.Parse([]byte(y), tt.file+".policy.yaml"); err != nil {
				t.Errorf("the learnt policy does not parse: %v\n%s", err, y)
			}
			if has := strings.Contains(y, "\nresends:\n"); has != (tt.resends != "") || !strings.Contains(y, tt.resends) {
				t.Errorf("the learnt policy's resends, want %q:\n%s", tt.resends, y)
			}
			pol := p.Policy
			if nl := pol.NestedLoops; nl.Inner != tt.inner || nl.Outer != tt.outer {
				t.Errorf("nestedLoops = %+v, want inner %d, outer %d", nl, tt.inner, tt.outer)
			}
			if tt.maxRetries != nil && (pol.MaxRetries == nil || *pol.MaxRetries != *tt.maxRetries) {
				t.Errorf("maxRetries = %v, want %d", show(pol.MaxRetries), *tt.maxRetries)
			}
			if tt.initialMs != nil {
				within(t, "initialMs", pol.Backoff.InitialMs, *tt.initialMs)
			}
			if tt.mult != nil {
				within(t, "multiplier", pol.Backoff.Multiplier, *tt.mult)
			}
			if tt.maxMs != nil {
				within(t, "maxMs", pol.Backoff.MaxMs, *tt.maxMs)
			}
			if tt.jitter != "" && (pol.Backoff.Jitter == nil || pol.Backoff.Jitter.Kind != tt.jitter) {
				t.Errorf("jitter = %+v, want %s", pol.Backoff.Jitter, tt.jitter)
			}
			if tt.large != "" && pol.RetryAfter.Large != tt.large {
				t.Errorf("retryAfter.large = %q, want %q", pol.RetryAfter.Large, tt.large)
			}
			if tt.ceilingMs > 0 {
				br := pol.RetryAfter.CeilingBracketMs
				if len(br) != 2 || tt.ceilingMs < br[0] || tt.ceilingMs > br[1] {
					t.Errorf("ceiling bracket %v does not hold %d", br, tt.ceilingMs)
				}
				if c := pol.RetryAfter.CeilingMs; c == nil {
					t.Errorf("ceilingMs unknown, want %d", tt.ceilingMs)
				} else {
					within(t, "ceilingMs", ptr(float64(*c)), float64(tt.ceilingMs))
				}
			}
			for _, c := range []struct {
				name      string
				got, want *bool
			}{{"retryAfter.seconds", pol.RetryAfter.Seconds, tt.raSeconds}, {"retryAfter.ms", pol.RetryAfter.Ms, tt.raMs},
				{"retryAfter.httpDate", pol.RetryAfter.HTTPDate, tt.raDate}} {
				if c.want != nil && (c.got == nil || *c.got != *c.want) {
					t.Errorf("%s = %v, want %t", c.name, show(c.got), *c.want)
				}
			}
		})
	}
}

// conformsToOwnPreset checks that the profile holds (or cannot tell) on
// every rule of the agent's own preset it models.
func conformsToOwnPreset(t *testing.T, p *Profile, prov Provider, tt agentKnown) {
	t.Helper()
	if tt.preset == "" {
		return
	}
	n := 0
	for _, c := range Conform(p, prov) {
		if c.Preset != tt.preset {
			continue
		}
		n++
		if c.State == Differs && !slices.Contains(tt.unmodelled, c.Rule) {
			t.Errorf("%s: %s differs: expected %s, observed %s", tt.preset, c.Rule, c.Want, c.Got)
		}
		if c.State != Differs && slices.Contains(tt.unmodelled, c.Rule) {
			t.Errorf("%s: %s is listed as not modelled but %s (%s)", tt.preset, c.Rule, c.State, c.Got)
		}
	}
	if n == 0 {
		t.Errorf("no conformance line for preset %s", tt.preset)
	}
}

func readJournal(t *testing.T, file string) (Provider, []Observation) {
	t.Helper()
	prov, obs, err := LoadJournal(filepath.Join("testdata", "agents", file))
	if err != nil {
		t.Fatal(err)
	}
	return prov, obs
}

func show[T any](p *T) any {
	if p == nil {
		return "unknown"
	}
	return *p
}
