package probe

import (
	"strings"
	"testing"

	"github.com/retrylab/retrylab/retry/policyfile"
)

// TestLearntPolicyVerifies: learn → verify on synthetic journals. The
// policy written for a client must hold every run it was learnt from as
// delays: policy would; what the policy model cannot hold is named
// (Profile.Unmodelled, a comment) and left out, and the file holds then.
func TestLearntPolicyVerifies(t *testing.T) {
	prov, _ := LookupProvider("anthropic")
	exhaust := func(waits ...float64) []Observation {
		var obs []Observation
		for s := 1; s <= 4; s++ {
			obs = append(obs, Observation{Fault: prov.Exhaust.Name, Sample: s, Served: 30, Attempts: len(waits) + 1,
				End: EndGaveUp, WaitsMs: waits, NoiseMs: 4, DeadlineMs: 120000})
		}
		return obs
	}
	decided := func(name string, waits ...float64) Observation {
		o := Observation{Fault: name, Served: 1, Attempts: len(waits) + 1, End: EndSucceeded, WaitsMs: waits, NoiseMs: 4}
		if len(waits) == 0 {
			o.End = EndGaveUp
		}
		return o
	}
	tests := []struct {
		name string
		obs  []Observation
		// want: each a substring of one Unmodelled entry, in order; none:
		// the policy holds as PolicyYAML writes it.
		want     []string
		inFile   []string
		notInPol []string
	}{
		{name: "an SDK (anthropic-node): every run holds, nothing left out",
			obs: sdkJournal(prov)},
		{name: "Kilo CLI: a cut stream re-sent after a constant 5s in a loop of its own; the backoff 1s × 2",
			obs: append(exhaust(1000, 2000, 4000),
				decided("400"), decided("503", 1001), decided("drop", 5004, 5003, 5002)),
			want:   []string{"drop: waited 5004ms after attempt 1; the policy allows 1s–1s"},
			inFile: []string{"# not modelled: drop: waited 5004ms", "stream_interrupted: {retry: true, maxRetries: unknown, initialDelay: unknown, respectRetryAfter: false}", "all: {retry: true, maxRetries: 3, initialDelay: 1s"}},
		{name: "Continue: the OpenAI SDK's 2 retries (0.5s, 1s) inside its own 10 at 1s × 1.6^k",
			obs: append(exhaust(500, 1000, 1000, 500, 1000, 1600, 500, 1000, 2560, 500, 1000),
				decided("400"), decided("503", 502)),
			want:   []string{"503 until it gives up #1: nested loops: bursts of "},
			inFile: []string{"all: {retry: true, maxRetries: unknown, initialDelay: unknown", "one loop cannot hold two"}},
		{name: "a decision the policy cannot tell: the 429 with retry-after retried, the plain 429 not (Codex CLI)",
			obs:    append(exhaust(200, 400), decided("429"), decided("429 retry-after 3", 3004), decided("503", 201)),
			want:   []string{"429 retry-after 3: retried after attempt 1 (waited 3004ms); the policy does not retry it"},
			inFile: []string{"rate_limit: {retry: true, maxRetries: unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Infer(prov, tt.obs)
			text, un, ok := LearntPolicy(p, prov)
			if !ok {
				t.Fatalf("LearntPolicy does not hold its runs:\n%s", text)
			}
			pol, err := policyfile.Parse([]byte(text), "learnt.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if ms := verifyLearnt(pol, p, prov); len(ms) > 0 {
				t.Errorf("the file written does not hold: %+v", ms)
			}
			if len(tt.want) == 0 {
				if len(un) > 0 || text != PolicyYAML(p, prov) {
					t.Errorf("Unmodelled = %+v, want none and the file as PolicyYAML writes it:\n%s", un, text)
				}
				return
			}
			if len(un) != len(tt.want) {
				t.Fatalf("Unmodelled = %+v, want %d", un, len(tt.want))
			}
			for i, w := range tt.want {
				if got := un[i].Fault + ": " + un[i].Seen; !strings.Contains(got, w) {
					t.Errorf("Unmodelled[%d] = %q, want %q", i, got, w)
				}
			}
			for _, s := range tt.inFile {
				if !strings.Contains(text, s) {
					t.Errorf("the file lacks %q:\n%s", s, text)
				}
			}
		})
	}
}

// TestVerifyLearntCatches: the check itself fails a policy that does not
// hold a run (the mismatches LearntPolicy acts on): a wait outside the
// envelope, a retry the policy does not make, giving up while it retries.
func TestVerifyLearntCatches(t *testing.T) {
	prov, _ := LookupProvider("anthropic")
	pol, err := policyfile.Parse([]byte("name: t\nenabled: true\nall: {retry: true, maxRetries: 3, initialDelay: 1s, kind: exponential, multiplier: 2, jitter: none}\nstatusRetry: {400: false}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, end string, attempts int, waits ...int64) FaultResult {
		fr := FaultResult{Fault: name, Group: "status", Retried: ptr(attempts > 1), Attempts: attempts, End: end, WaitsMs: waits}
		if name == prov.Exhaust.Name {
			fr.Sample, fr.Group = 1, "exhaust"
		}
		return fr
	}
	tests := []struct {
		name string
		fr   FaultResult
		want string // "" holds
	}{
		{"1s then ok: holds", f("503", EndSucceeded, 2, 1003), ""},
		{"noise of the tolerance: holds", f("503", EndSucceeded, 2, 1024), ""},
		{"300ms: too soon", f("503", EndSucceeded, 2, 300), "waited 300ms after attempt 1; the policy allows 1s–1s"},
		{"a 400 retried", f("400", EndSucceeded, 2, 10), "retried after attempt 1 (waited 10ms); the policy does not retry it"},
		{"gave up after 2 of 4 attempts", f(prov.Exhaust.Name, EndGaveUp, 2, 1000), "gave up after 2 attempt(s); the policy retries again"},
		{"gave up after 4: holds", f(prov.Exhaust.Name, EndGaveUp, 4, 1000, 2000, 4000), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := verifyLearnt(pol, &Profile{Faults: []FaultResult{tt.fr}}, prov)
			got := ""
			if len(ms) > 0 {
				got = ms[0].what
			}
			if got != tt.want {
				t.Errorf("verifyLearnt() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLearntPolicyMeasuredAgents: the policy learnt from each measured
// agent's journal holds every one of its runs (leaving out, and naming,
// what it cannot model: Claude Code's +25% on a Retry-After, Codex CLI's
// nested reconnects, ...).
func TestLearntPolicyMeasuredAgents(t *testing.T) {
	for _, file := range []string{"claude-code.json", "codex-cli.json", "gemini-cli.json", "langchain-js.json",
		"openai-go.json", "vercel-ai-sdk-anthropic.json", "vercel-ai-sdk-responses.json", "anthropic-java.json", "openai-java.json",
		"anthropic-python.json", "openai-python.json", "genai-python.json", "pydantic-ai.json", "aider.json", "litellm.json", "langchain-anthropic-python.json"} {
		t.Run(file, func(t *testing.T) {
			prov, obs := readJournal(t, file)
			p := Infer(prov, obs)
			text, un, ok := LearntPolicy(p, prov)
			if !ok {
				t.Fatalf("the learnt policy does not hold the runs it was learnt from:\n%s", text)
			}
			for _, u := range un {
				t.Logf("not modelled: %s: %s; left out: %s", u.Fault, u.Seen, u.LeftOut)
			}
			// The ceiling bisected is written with the file's own key, a
			// value inside the bracket, and rate_limit stays held: its 3600s
			// probe and every bisection probe hold (hostile report: the AI
			// SDK's [58s, 63s] was not written, and rate_limit was left out).
			if want, ok := ceilingWant[file]; ok {
				if !strings.Contains(text, want) {
					t.Errorf("the file does not write the learnt ceiling %q:\n%s", want, text)
				}
				for _, u := range un {
					if u.FailureType == "rate_limit" {
						t.Errorf("rate_limit left out although the ceiling was learnt: %s: %s", u.Fault, u.Seen)
					}
				}
			}
		})
	}
}

// ceilingWant is the retryAfter line the learnt file of each agent whose
// ceiling was bisected must hold: the roundest value inside its bracket.
var ceilingWant = map[string]string{
	"vercel-ai-sdk-anthropic.json": "retryAfter: {maxUsable: 1m0s}", // [58s, 63s], its backoff above
	"openai-go.json":               "retryAfter: {ceiling: 2m0s}",   // [116s, 126s], gave up above
	"anthropic-python.json":        "retryAfter: {maxUsable: 1m0s}", // [58s, 63s], its backoff above
	"openai-python.json":           "retryAfter: {ceiling: 2m0s}",   // [116s, 126s], gave up above
	"litellm.json":                 "retryAfter: {ceiling: 2m0s}",   // [116s, 126s], gave up above
}
