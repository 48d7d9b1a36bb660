package policyfile

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/preset"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func TestParsePolicy(t *testing.T) {
	t.Parallel()
	src := `
preset: plandex
name: my-project
attemptTimeout: 30s
maxElapsed: 2m
retryAfter: {ceiling: 30s}
statusRetry: {409: true}
failureTypes:
  rate_limit: {maxAttempts: 3, initialDelay: 2s, maxDelay: 10s, multiplier: 1.5, jitter: none}
  conflict: {retry: true, maxRetries: 1, kind: constant, initialDelay: 250ms}
escalation: {afterRetries: 2}
`
	p, err := Parse([]byte(src), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := preset.Plandex()
	want.Name = "my-project"
	want.AttemptTimeout = 30 * time.Second
	want.MaxElapsed = 2 * time.Minute
	want.RetryAfter.Ceiling = 30 * time.Second
	want.StatusRetry = map[int]bool{409: true}
	rl := want.FailureTypes[retry.RateLimit]
	rl.MaxAttempts, rl.InitialDelay, rl.MaxDelay, rl.Multiplier, rl.Jitter = 3, 2*time.Second, 10*time.Second, 1.5, retry.NoJitter
	want.FailureTypes[retry.RateLimit] = rl
	want.FailureTypes[retry.Conflict] = retry.Strategy{Retry: true, MaxAttempts: 2, Kind: retry.Constant, InitialDelay: 250 * time.Millisecond, Jitter: retry.NoJitter}
	want.Escalation.AfterRetries = 2
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("ParsePolicy mismatch (-want +got):\n%s", diff)
	}
}

func TestParsePolicyWithoutPreset(t *testing.T) {
	t.Parallel()
	p, err := Parse([]byte("all: {retry: true, maxAttempts: 3, initialDelay: 1s}\nfailureTypes: {auth_invalid: {retry: false}}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Schedule(retry.Overloaded); !cmp.Equal(got, []time.Duration{time.Second, 2 * time.Second}) {
		t.Errorf("schedule = %v", got)
	}
	if p.Strategy(retry.AuthInvalid).Retry || p.Strategy(retry.AuthInvalid).MaxAttempts != 3 {
		t.Errorf("auth_invalid = %+v", p.Strategy(retry.AuthInvalid))
	}
}

func TestDecodePolicyNode(t *testing.T) {
	t.Parallel()
	var doc struct {
		Policy yaml.Node `yaml:"policy"`
	}
	if err := yaml.Unmarshal([]byte("policy: escalation-epic\n"), &doc); err != nil {
		t.Fatal(err)
	}
	p, err := DecodeNode(&doc.Policy, "s.yaml")
	if err != nil || p.Name != "escalation-epic" {
		t.Fatalf("p = %v, err = %v", p, err)
	}
	if err := yaml.Unmarshal([]byte("policy:\n  preset: forgeflare\n  enabled: false\n"), &doc); err != nil {
		t.Fatal(err)
	}
	p, err = DecodeNode(&doc.Policy, "s.yaml")
	if err != nil || p.Name != "forgeflare" || p.Enabled {
		t.Fatalf("p = %+v, err = %v", p, err)
	}
}

func TestParsePolicyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"unknown key", "preset: plandex\nretries: 3\n", "p.yaml:2:1: retries: unknown field (hint: valid fields here: preset, name"},
		{"bad duration", "attemptTimeout: 5 seconds\n", `p.yaml:1:17: attemptTimeout: bad duration "5 seconds" (hint: use a number with a unit`},
		{"bad nested duration", "failureTypes:\n  rate_limit:\n    initialDelay: soon\n", `p.yaml:3:19: failureTypes.rate_limit.initialDelay: bad duration "soon"`},
		{"unknown failure type", "failureTypes:\n  rate_limited: {retry: true}\n", "p.yaml:2:3: failureTypes.rate_limited: unknown failure type (hint: valid types: rate_limit,"},
		{"unknown strategy key", "default: {delay: 1s}\n", "p.yaml:1:11: default.delay: unknown field"},
		{"unknown preset", "preset: aws\n", `p.yaml:1:9: preset: unknown preset "aws" (hint: valid presets: forgeflare, plandex`},
		{"unknown preset scalar", "aws\n", `p.yaml:1:1: policy: unknown preset "aws"`},
		{"bad kind", "default: {kind: fibonacci}\n", `p.yaml:1:17: default.kind: unknown backoff kind "fibonacci" (hint: use one of exponential, linear, constant, none)`},
		{"bad jitter", "default: {jitter: lots}\n", `default.jitter: unknown jitter "lots"`},
		{"bad bool", "enabled: maybe\n", `p.yaml:1:10: enabled: bad boolean "maybe"`},
		{"zero attempts", "default: {maxAttempts: 0}\n", "default.maxAttempts: 0 is below the minimum 1"},
		{"fraction range", "default: {jitterFraction: 2}\n", "default.jitterFraction: 2 is out of range"},
		{"bad status", "statusRetry: {abc: true}\n", `statusRetry.abc: bad HTTP status "abc"`},
		{"negative duration", "maxElapsed: -1s\n", `maxElapsed: negative duration "-1s"`},
		{"list", "- a\n", "p.yaml:1:1: policy: must be a preset name or a mapping"},
		{"duplicate", "enabled: true\nenabled: false\n", "p.yaml:2:1: enabled: duplicate field"},
		{"both maxRetries and maxAttempts", "default: {maxAttempts: 2, maxRetries: 1}\n", "default.maxRetries: maxRetries and maxAttempts both given"},
		{"empty", "", "p.yaml:1: empty policy"},
		{"bad yaml", "a: [\n", "p.yaml:1: did not find expected node content"},
		{"tab", "a:\n\tb: 1\n", "p.yaml:2: found character that cannot start any token"},
		{"bad retry-after header", "retryAfter: {header: retry-after-ms}\n", `p.yaml:1:22: retryAfter.header: unknown header rule "retry-after-ms" (hint: use both`},
		{"bad zero rule", "retryAfter: {zero: never}\n", `p.yaml:1:20: retryAfter.zero: unknown rule "never" (hint: use immediate`},
		{"bad negative rule", "retryAfter: {negative: abs}\n", `p.yaml:1:24: retryAfter.negative: unknown rule "abs" (hint: use zero`},
		{"bad zeroMsDefers", "retryAfter: {zeroMsDefers: sometimes}\n", `retryAfter.zeroMsDefers: bad boolean "sometimes"`},
		{"bad clientTimeoutFinal", "clientTimeoutFinal: 3\n", `clientTimeoutFinal: bad boolean "3"`},
		{"retryableErrors unknown name", "retryableErrors: [flaky]\n", `retryableErrors: unknown failure type "flaky" (hint: valid types: rate_limit, server_error, timeout, context_limit`},
		// retry: true with one attempt retries nothing (what chaos probe
		// wrote when interrupted): every delays: policy verdict on it
		// would be wrong.
		{"retry true, 1 attempt, all", "all: {retry: true}\n", "p.yaml:1:14: all.retry: retry: true with 1 attempt (maxAttempts 1): it retries nothing (hint: give the limit, e.g. maxRetries: 3 (maxRetries: unknown"},
		{"retry true, 1 attempt, top level", "name: x\nretry: true\n", "p.yaml:2:8: retry: retry: true with 1 attempt"},
		{"retry true, maxRetries 0", "default: {retry: true, maxRetries: 0}\n", "default.retry: retry: true with 1 attempt"},
		{"retry true, 1 attempt, failure type", "failureTypes:\n  rate_limit: {retry: true, maxAttempts: 1}\n", "p.yaml:2:23: failureTypes.rate_limit.retry: retry: true with 1 attempt"},
		{"bad unknown", "all: {retry: true, maxRetries: unknowable}\n", `all.maxRetries: bad integer "unknowable"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "p.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Hint() == "" {
				t.Fatalf("not a *PolicyError with a hint: %#v", err)
			}
			full := err.Error() + " (hint: " + pe.Hint() + ")"
			if !strings.Contains(full, tt.want) {
				t.Errorf("error = %q\nwant it to contain %q", full, tt.want)
			}
		})
	}
}

// TestPresetGolden renders every preset in the YAML schema; the golden files
// are the reviewed numbers of each preset. Refresh with -update.
func TestPresetGolden(t *testing.T) {
	t.Parallel()
	for _, name := range preset.Names() {
		t.Run(name, func(t *testing.T) {
			p := mustPreset(t, name)
			got := p.String()
			path := filepath.Join("testdata", name+".policy.yaml")
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
			// The rendering parses back to the same policy.
			back, err := Parse([]byte(got), path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(p.String(), back.String()); diff != "" {
				t.Errorf("round trip mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPresetUnknown(t *testing.T) {
	t.Parallel()
	_, err := preset.Get("nope")
	if err == nil || !strings.Contains(err.Error(), "forgeflare, plandex, orchestrator, escalation-epic, forge-ticket, anthropic-sdk, openai-sdk") {
		t.Errorf("err = %v", err)
	}
	a, b := mustPreset(t, "plandex"), mustPreset(t, "plandex")
	a.FailureTypes[retry.RateLimit] = retry.Strategy{}
	if b.FailureTypes[retry.RateLimit].MaxAttempts != 5 {
		t.Error("Preset returned shared state")
	}
}

func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{
		"forgeflare", "preset: plandex\nattemptTimeout: 30s\n",
		"failureTypes:\n  rate_limit: {retry: true, maxAttempts: 3, initialDelay: 1s, jitter: full}\n",
		"retryAfter: {padding: 0.1, ceiling: 10s}\nstatusRetry: {429: true}\n",
		"escalation: {afterRetries: 3}\nfallback: {enabled: true}\n", "all: {maxRetries: 2}", "- x", "{", "a: *b",
		"retryAfter: {zero: immediate, negative: zero, zeroMsDefers: true, header: retry-after}\nclientTimeoutFinal: true\n",
		"preset: escalation-epic\nretryableErrors: [unknown, overloaded]\nstatusRetry: {503: false}\n",
		"preset: forgeflare\nbudget: {maxTokens: 10, tokenRatio: 0.1}\nadaptiveThrottling: {k: 2, window: 2m}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "fuzz.yaml")
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || len(pe.Problems()) == 0 {
				t.Fatalf("error is not a *PolicyError with problems: %v", err)
			}
			// Every problem names the file and says what to do, and
			// the count stays bounded whatever the input.
			for _, p := range pe.Problems() {
				if p.File != "fuzz.yaml" || p.Hint == "" || strings.Contains(p.Msg, "%!") {
					t.Fatalf("problem %q (hint %q) does not name the file or has no hint", p, p.Hint)
				}
			}
			if len(pe.Problems()) > 101 {
				t.Fatalf("%d problems", len(pe.Problems()))
			}
			return
		}
		// A valid policy renders and parses back to the same rendering.
		back, err := Parse([]byte(p.String()), "render.yaml")
		if err != nil {
			t.Fatalf("rendering does not parse: %v\n%s", err, p.String())
		}
		if p.String() != back.String() {
			t.Fatalf("round trip changed the policy:\n%s\n---\n%s", p.String(), back.String())
		}
		for _, ft := range retry.FailureTypes {
			for a := 1; a < 4; a++ {
				if lo, hi, ok := p.Envelope(ft, a, time.Second, a == 2); ok && (lo < 0 || hi < lo) {
					t.Fatalf("envelope [%v, %v] for %s attempt %d", lo, hi, ft, a)
				}
			}
		}
	})
}

func TestParseRetryAfterBlock(t *testing.T) {
	t.Parallel()
	src := "preset: orchestrator\nretryAfter: {respect: true, padding: 0.2, cap: 30s, ceiling: 40s, maxUsable: 50s, integerOnly: true}\n"
	p, err := Parse([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := retry.RetryAfter{Padding: 0.2, Cap: 30 * time.Second, Ceiling: 40 * time.Second, MaxUsable: 50 * time.Second, IntegerOnly: true}
	if diff := cmp.Diff(want, p.RetryAfter); diff != "" {
		t.Errorf("RetryAfter mismatch (-want +got):\n%s", diff)
	}
	if !p.Strategy(retry.RateLimit).RespectRetryAfter || !p.Default.RespectRetryAfter {
		t.Error("respect: true did not reach the strategies")
	}
	// 45s is under the 50s usable bound and the 40s ceiling is lower: refused.
	if _, _, ok := p.Envelope(retry.RateLimit, 1, 45*time.Second, true); ok {
		t.Error("45s above a 40s ceiling was retried")
	}
	// 35s: usable, capped at 30s, padded 20%.
	if lo, hi, ok := p.Envelope(retry.RateLimit, 1, 35*time.Second, true); !ok || lo != 36*time.Second || hi != lo {
		t.Errorf("Envelope = %v, %v, %v; want 36s", lo, hi, ok)
	}
	// A fraction falls back to the backoff (integerOnly).
	if lo, hi, ok := p.Envelope(retry.RateLimit, 1, 1500*time.Millisecond, true); !ok || lo != 900*time.Millisecond || hi != 1100*time.Millisecond {
		t.Errorf("Envelope = %v, %v, %v; want the ±10%% backoff", lo, hi, ok)
	}
}

// TestParseRetryAfterRules: the Retry-After rules the SDK presets need, in
// YAML, and back out of String.
func TestParseRetryAfterRules(t *testing.T) {
	t.Parallel()
	src := "retryAfter: {header: retry-after, zeroMsDefers: true, zero: backoff, negative: zero, maxUsable: 1m}\n" +
		"clientTimeoutFinal: true\nstreamTransient: true\nstreamErrors: true\n"
	p, err := Parse([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := retry.RetryAfter{Header: retry.HeaderRetryAfter, ZeroMsDefers: true, Zero: retry.ZeroBackoff, Negative: retry.NegativeZero, MaxUsable: time.Minute}
	if diff := cmp.Diff(want, p.RetryAfter); diff != "" {
		t.Errorf("RetryAfter mismatch (-want +got):\n%s", diff)
	}
	if !p.ClientTimeoutFinal || !p.StreamTransient {
		t.Errorf("clientTimeoutFinal %v, streamTransient %v; want both true", p.ClientTimeoutFinal, p.StreamTransient)
	}
	back, err := Parse([]byte(p.String()), "render.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.String(), back.String()); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	// auto and standard reset a preset's rules.
	p, err = Parse([]byte("preset: anthropic-node\nretryAfter: {zero: auto, negative: standard, header: both}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.RetryAfter.Zero != "" || p.RetryAfter.Negative != "" || p.RetryAfter.Header != "" {
		t.Errorf("RetryAfter = %+v, want the default rules", p.RetryAfter)
	}
	// Model the Node 6.x SDK from a Python-rule preset, as docs/policy.md shows.
	p, err = Parse([]byte("preset: anthropic-sdk\nretryAfter: {maxUsable: 0, zero: immediate, negative: zero, zeroMsDefers: true}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(mustPreset(t, "openai-node").RetryAfter, p.RetryAfter); diff != "" {
		t.Errorf("RetryAfter mismatch (-openai-node +parsed):\n%s", diff)
	}
}

// TestParsePolicyEveryProblem: a policy's problems are reported at once,
// in line order, each with its hint; a problem in a strategy shared by
// every failure type (top-level or all) is reported once.
func TestParsePolicyEveryProblem(t *testing.T) {
	t.Parallel()
	src := "preset: plandex\nenabled: maybe\nretries: 3\ninitialDelay: soon\nall: {jitter: lots}\n" +
		"failureTypes:\n  rate_limit: {maxAttempts: 0}\n  rate_limited: {}\nescalation: {ladder: [a, a, {b: c}]}\n"
	_, err := Parse([]byte(src), "p.yaml")
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *PolicyError", err)
	}
	var got []string
	for _, p := range pe.Problems() {
		got = append(got, p.Error())
		if p.Hint == "" {
			t.Errorf("%s: no hint", p)
		}
	}
	want := []string{
		`p.yaml:2:10: enabled: bad boolean "maybe"`,
		`p.yaml:3:1: retries: unknown field`,
		`p.yaml:4:15: initialDelay: bad duration "soon"`,
		`p.yaml:5:15: all.jitter: unknown jitter "lots"`,
		`p.yaml:7:29: failureTypes.rate_limit.maxAttempts: 0 is below the minimum 1`,
		`p.yaml:8:3: failureTypes.rate_limited: unknown failure type`,
		`p.yaml:9:26: escalation.ladder: model "a" is on the ladder twice`,
		`p.yaml:9:29: escalation.ladder: must be a list of model names`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems mismatch (-want +got):\n%s", diff)
	}
	// A duplicate top-level strategy field is reported once.
	_, err = Parse([]byte("initialDelay: 1s\ninitialDelay: soon\n"), "p.yaml")
	if err == nil || err.Error() != "p.yaml:2:1: initialDelay: duplicate field" {
		t.Errorf("duplicate top-level strategy field: %v", err)
	}
	_, err = Parse([]byte(src), "p.yaml")
	// Several problems: each hint under its problem, and one hint for all.
	if !strings.Contains(err.Error(), "\n  hint: use true or false\n") || !strings.Contains(pe.Hint(), "fix the problems above") {
		t.Errorf("Error() = %s\nHint() = %s", err, pe.Hint())
	}
}

// TestPolicyValueDecisions table-tests the scalar decisions of the policy
// decoder.
func TestPolicyValueDecisions(t *testing.T) {
	t.Parallel()
	durations := []struct {
		in      string
		want    time.Duration
		wantMsg string
	}{
		{"2s", 2 * time.Second, ""}, {"0", 0, ""}, {"1m30s", 90 * time.Second, ""},
		{"5", 0, `bad duration "5"`}, {"-1s", 0, `negative duration "-1s"`}, {"soon", 0, `bad duration "soon"`},
	}
	for _, tt := range durations {
		got, msg, hint := parseDuration(tt.in)
		if got != tt.want || msg != tt.wantMsg || (msg != "") != (hint != "") {
			t.Errorf("parseDuration(%q) = %v, %q, %q; want %v, %q", tt.in, got, msg, hint, tt.want, tt.wantMsg)
		}
	}
	ints := []struct {
		in      string
		min     int
		want    int
		wantMsg string
	}{
		{"3", 1, 3, ""}, {"0", 0, 0, ""}, {"0", 1, 0, "0 is below the minimum 1"}, {"1.5", 0, 0, `bad integer "1.5"`},
	}
	for _, tt := range ints {
		got, msg, _ := parseInteger(tt.in, tt.min)
		if got != tt.want || msg != tt.wantMsg {
			t.Errorf("parseInteger(%q, %d) = %v, %q; want %v, %q", tt.in, tt.min, got, msg, tt.want, tt.wantMsg)
		}
	}
	floats := []struct {
		in      string
		want    float64
		wantMsg string
	}{
		{"0.5", 0.5, ""}, {"1", 1, ""}, {"1.5", 0, "1.5 is out of range"}, {".nan", 0, `bad number ".nan"`}, {"NaN", 0, `bad number "NaN"`}, {"x", 0, `bad number "x"`},
	}
	for _, tt := range floats {
		got, msg, _ := parseFloat(tt.in, 0, 1)
		if got != tt.want || msg != tt.wantMsg {
			t.Errorf("parseFloat(%q) = %v, %q; want %v, %q", tt.in, got, msg, tt.want, tt.wantMsg)
		}
	}
}

// TestParsePolicyUnknownFigures: maxRetries, maxAttempts and initialDelay
// may be `unknown` (a policy learnt by chaos probe before it saw them):
// Envelope then allows a retry after any attempt and any wait, and says
// the limit is not known; retry: true is then no contradiction, a number
// given later makes the figure known again, and String round-trips.
func TestParsePolicyUnknownFigures(t *testing.T) {
	t.Parallel()
	p, err := Parse([]byte("all: {retry: true, maxRetries: unknown, initialDelay: unknown}\nstatusRetry: {400: false}\nfailureTypes:\n  rate_limit: {maxRetries: 2, initialDelay: 1s}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 50; attempt += 7 {
		lo, hi, ok := p.Envelope(retry.ServerError, attempt, 0, false)
		if !ok || lo != 0 || hi != retry.UnknownWait {
			t.Errorf("Envelope(server_error, %d) = %s, %s, %t, want 0, %s, true", attempt, lo, hi, ok, retry.UnknownWait)
		}
	}
	if p.LimitKnown(retry.ServerError) || !p.LimitKnown(retry.RateLimit) {
		t.Errorf("LimitKnown: server_error %t, rate_limit %t; want false, true", p.LimitKnown(retry.ServerError), p.LimitKnown(retry.RateLimit))
	}
	if lo, hi, ok := p.Envelope(retry.RateLimit, 1, 0, false); !ok || lo != time.Second || hi != time.Second {
		t.Errorf("Envelope(rate_limit, 1) = %s, %s, %t, want 1s, 1s, true", lo, hi, ok)
	}
	if _, _, ok := p.Envelope(retry.RateLimit, 3, 0, false); ok {
		t.Error("Envelope(rate_limit, 3): a retry past its known limit")
	}
	if got := p.Schedule(retry.ServerError); len(got) != 0 {
		t.Errorf("Schedule(server_error) = %v, want none (the limit is unknown)", got)
	}
	capped, err := Parse([]byte("maxAttempts: 3\nall: {retry: true, maxRetries: unknown, initialDelay: unknown}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := capped.Envelope(retry.ServerError, 3, 0, false); ok {
		t.Error("a global cap of 3 attempts still bounds an unknown limit")
	}
	text := p.String()
	if !strings.Contains(text, "maxAttempts: unknown, initialDelay: unknown") {
		t.Errorf("String() does not say unknown:\n%s", text)
	}
	q, err := Parse([]byte(text), "round.yaml")
	if err != nil {
		t.Fatalf("String() does not parse: %v\n%s", err, text)
	}
	if diff := cmp.Diff(text, q.String()); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

func mustPreset(t testing.TB, name string) *retry.Policy {
	t.Helper()
	p, err := preset.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
