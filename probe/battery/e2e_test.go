package battery_test

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/probe"
	"github.com/retrylab/retrylab/probe/battery"
)

// TestProbeAgentPy probes testdata/clients/agent.py, whose rules are known
// from its source (retries 429, 5xx, network errors and broken streams with
// 1, 2, 4, 8s, not 4xx, ignores Retry-After and x-should-retry), at time
// scale 0.5 so it takes seconds; then verifies the same client with the
// written policy, `chaos run` and `delays: policy`. The timing figures are
// checked only when the probe could tell them (a loaded machine makes them
// inconclusive, which the test logs); the decisions always.
func TestProbeAgentPy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real client")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not in PATH")
	}
	agent, _ := filepath.Abs("../../testdata/clients/agent.py")
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	prov, _ := probe.LookupProvider("anthropic")
	out := t.TempDir()
	r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: out, ClientCmd: "python3 " + agent}
	p, err := r.Run(ctx, battery.Options{Provider: prov, Samples: 4, TimeScale: 0.5,
		Only: []string{"400", "408", "429", "503", "reset", "400 x-should-retry true", "503 x-should-retry false"}})
	if err != nil {
		t.Fatal(err)
	}
	// The journal (chaos probe --observations) infers the same faults
	// and figures without the client.
	j := r.Journal()
	if j.Provider != "anthropic" || len(j.Observations) < len(p.Faults) {
		t.Errorf("journal: provider %q, %d observations for %d faults", j.Provider, len(j.Observations), len(p.Faults))
	}
	again := probe.Infer(prov, j.Observations)
	if diff := cmp.Diff(p.Faults, again.Faults); diff != "" {
		t.Errorf("the journal's faults mismatch (-profile +journal):\n%s", diff)
	}
	if diff := cmp.Diff(p.Policy.Backoff, again.Policy.Backoff); diff != "" || deref2(p.Policy.MaxRetries) != deref2(again.Policy.MaxRetries) {
		t.Errorf("the journal's figures mismatch (-profile +journal):\n%s", diff)
	}
	want := map[string]bool{"400": false, "408": false, "429": true, "503": true, "reset": true,
		"400 x-should-retry true": false, "503 x-should-retry false": true, prov.Exhaust.Name: true}
	for _, f := range p.Faults {
		if f.Retried == nil || *f.Retried != want[f.Fault] {
			t.Errorf("%s: retried %v, want %t (%s)", f.Fault, f.Retried, want[f.Fault], f.Note)
		}
	}
	if m := p.Policy.MaxRetries; m == nil || *m != 4 {
		t.Errorf("maxRetries = %v, want 4", m)
	}
	// A steady 429 outage: its 5th attempt arrives 1 + 2 + 4 + 8 = 15s
	// after its first; the checks (12.75s survived, 17.25s not) agree.
	switch s := p.Policy.SurvivesOutageMs["429"]; {
	case s == nil:
		t.Errorf("survivesOutageMs.429 unknown: %+v", p.Inconclusive)
	case s.Confidence == probe.Low:
		t.Logf("survivesOutageMs.429 not sure on this machine: %s", probe.SurvivalLine("429", s))
	case math.Abs(float64(s.Ms)-15000) > 0.15*15000 || s.Unconfirmed != "":
		t.Errorf("survivesOutageMs.429 = %s, want 15s ± 15%%, confirmed", probe.SurvivalLine("429", s))
	}
	bo := p.Policy.Backoff
	if bo.InitialMs == nil {
		t.Logf("backoff inconclusive on this machine: %+v", p.Inconclusive)
		return
	}
	// A figure is held to 15% as far as the probe says it is sure of it:
	// a low-confidence one (the noise it measured on a loaded machine) is
	// logged, a medium one held to 30%.
	for _, c := range []struct {
		what, key string
		got, want float64
	}{{"initialMs", "policy.backoff.initialMs", *bo.InitialMs, 1000}, {"multiplier", "policy.backoff.multiplier", deref(bo.Multiplier), 2}} {
		conf := p.Confidence[c.key]
		tol := 0.15
		switch conf.Level {
		case probe.Low:
			t.Logf("%s = %g not sure on this machine (%s)", c.what, c.got, conf.Basis)
			continue
		case probe.Medium:
			tol = 0.30
		}
		if math.Abs(c.got-c.want) > tol*c.want {
			t.Errorf("%s = %g (%s confidence: %s), want %g ± %g%%", c.what, c.got, conf.Level, conf.Basis, c.want, tol*100)
		}
	}
	verifyWithPolicy(ctx, t, toxi, prov, p, agent, out)
}

func deref2(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// verifyWithPolicy writes the learnt policy and runs a scenario that
// checks the same client against it with delays: policy.
func verifyWithPolicy(ctx context.Context, t *testing.T, toxi *mock.Toxiproxy, prov probe.Provider, p *probe.Profile, agent, out string) {
	t.Helper()
	pol := filepath.Join(out, "agent.policy.yaml")
	text, _, _ := probe.LearntPolicy(p, prov) // what chaos probe --policy-out writes
	if err := os.WriteFile(pol, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.ParseScenario(filepath.Join(out, "verify.yaml"), []byte(`name: verify-learnt-policy
client: {policy: agent.policy.yaml}
attempts: [{status: 503}, {status: 503}]
expect: {outcome: success, attempts: 3, delays: policy}
`))
	if err != nil {
		t.Fatal(err)
	}
	cr := &chaos.Runner{Toxi: toxi, Out: out, ClientCmd: "python3 " + agent, TimeScale: 0.5, Confirm: 1}
	sum, err := cr.Run(ctx, []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	res := sum.Scenarios[0]
	switch res.Verdict {
	case chaos.VerdictPass:
	case chaos.VerdictInconclusive:
		t.Logf("verification inconclusive on this machine: %+v", res.Checks)
	default:
		t.Errorf("the learnt policy does not verify the client: %s %+v", res.Verdict, res.NotPassedChecks())
	}
}

// TestProbeInterruptedPolicyVerifies is hostile report 6's regression
// test: the policy a probe writes when it is stopped before the retry
// limit and the backoff are known (here its profile of what finished: 503
// retried once after 301 ms, 400 not) verifies the same client with
// delays: policy, whether it retries (503, 503, ok) or gives up (six 503s:
// agent.py stops after 5 attempts). It wrote `all: {retry: true}`, which
// loads as one attempt and failed the first scenario ("no retry").
func TestProbeInterruptedPolicyVerifies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real client")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not in PATH")
	}
	agent, _ := filepath.Abs("../../testdata/clients/agent.py")
	prov, _ := probe.LookupProvider("anthropic")
	obs := []probe.Observation{
		{Fault: "503", Served: 1, Attempts: 2, End: probe.EndSucceeded, WaitsMs: []float64{301}, NoiseMs: 4},
		{Fault: "400", Served: 1, Attempts: 1, End: probe.EndGaveUp, NoiseMs: 4},
	}
	for s := 1; s <= 4; s++ {
		obs = append(obs, probe.Observation{Fault: prov.Exhaust.Name, Sample: s, End: probe.EndNotRun, Note: "interrupted"})
	}
	out := t.TempDir()
	pol := filepath.Join(out, "learnt.yaml")
	if err := os.WriteFile(pol, []byte(probe.PolicyYAML(probe.Infer(prov, obs), prov)), 0o644); err != nil {
		t.Fatal(err)
	}
	var scs []*scenario.Scenario
	for _, src := range []string{
		"name: retried\nclient: {policy: learnt.yaml}\nattempts: [{status: 503}, {status: 503}]\nexpect: {outcome: success, attempts: 3, delays: policy}\n",
		"name: given-up\nclient: {policy: learnt.yaml}\nattempts: [{status: 503}, {status: 503}, {status: 503}, {status: 503}, {status: 503}, {status: 503}]\nexpect: {outcome: failure, attempts: 5, delays: policy}\n",
	} {
		sc, err := scenario.ParseScenario(filepath.Join(out, "verify.yaml"), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	cr := &chaos.Runner{Toxi: toxi, Out: out, ClientCmd: "python3 " + agent, TimeScale: 0.1, Confirm: 1}
	sum, err := cr.Run(ctx, scs)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range sum.Scenarios {
		if res.Verdict != chaos.VerdictPass {
			t.Errorf("%s: the policy learnt before the limit was known does not verify the client: %s %+v", res.Name, res.Verdict, res.NotPassedChecks())
		}
	}
}

// TestProbeResendPolicyVerifies: a client that re-sends a 400 at once
// (probe/testdata/resend_agent.py, as Claude Code does) is learnt as a
// resends entry, not a retry of its backoff loop, and the policy written
// verifies the same client with delays: policy (a 400 re-sent, then ok; a
// 400 re-sent, a 400 again given up; a 503 backed off). Written into
// statusRetry, its 400 was held to the 1s backoff and failed.
func TestProbeResendPolicyVerifies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real client")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not in PATH")
	}
	agent, _ := filepath.Abs("../testdata/resend_agent.py")
	prov, _ := probe.LookupProvider("anthropic")
	obs := []probe.Observation{
		{Fault: "400", Served: 1, Attempts: 2, End: probe.EndSucceeded, WaitsMs: []float64{12}, WaitNoiseMs: []float64{20}, NoiseMs: 20},
		{Fault: "503", Served: 1, Attempts: 2, End: probe.EndSucceeded, WaitsMs: []float64{1003}, NoiseMs: 4},
	}
	for s := 1; s <= 4; s++ {
		obs = append(obs, probe.Observation{Fault: prov.Exhaust.Name, Sample: s, Served: 10, Attempts: 4, End: probe.EndGaveUp,
			WaitsMs: []float64{1002 + float64(s), 2003, 4004}, NoiseMs: 5})
	}
	text := probe.PolicyYAML(probe.Infer(prov, obs), prov)
	if !strings.Contains(text, "- {statuses: [400], maxRetries: 1, kind: none}") {
		t.Fatalf("the learnt policy has no resends entry for the 400:\n%s", text)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "learnt.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var scs []*scenario.Scenario
	for _, src := range []string{
		"name: resent\nclient: {policy: learnt.yaml}\nattempts: [{status: 400}]\nexpect: {outcome: success, attempts: 2, delays: policy}\n",
		"name: resent-then-final\nclient: {policy: learnt.yaml}\nattempts: [{status: 400}, {status: 400}]\nexpect: {outcome: failure, attempts: 2, delays: policy}\n",
		"name: backed-off\nclient: {policy: learnt.yaml}\nattempts: [{status: 503}]\nexpect: {outcome: success, attempts: 2, delays: policy}\n",
	} {
		sc, err := scenario.ParseScenario(filepath.Join(out, "verify.yaml"), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	cr := &chaos.Runner{Toxi: toxi, Out: out, ClientCmd: "python3 " + agent, TimeScale: 0.2, Confirm: 1}
	sum, err := cr.Run(ctx, scs)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range sum.Scenarios {
		if res.Verdict != chaos.VerdictPass {
			t.Errorf("%s: the learnt policy does not verify the client: %s %+v", res.Name, res.Verdict, res.NotPassedChecks())
		}
	}
}

// TestProbeOneRequestClient: testdata/clients/curl.sh makes one request
// whatever it is told (as claude -p, codex exec and most scripts do).
// Probed in the default mode, the warm-up request on, it used to give a
// profile of nothing but "not run"; the pilot now finds it makes one
// request, turns the warm-up off, says so, and learns every decision and
// its retry limit (3 retries, 1, 2, 4s).
func TestProbeOneRequestClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real client")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not in PATH")
	}
	client, _ := filepath.Abs("../../testdata/clients/curl.sh")
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	prov, _ := probe.LookupProvider("anthropic")
	r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), ClientCmd: "sh " + client}
	p, err := r.Run(ctx, battery.Options{Provider: prov, Samples: 2, Repeat: 6, TimeScale: 0.25, CeilingRounds: 0,
		Only: []string{"400", "404", "429", "503", "reset"}})
	if err != nil {
		t.Fatal(err)
	}
	if w := p.WarmUp; w == nil || w.Used || !w.Detected {
		t.Errorf("WarmUp = %+v, want off, detected", w)
	}
	if p.LearntNothing != "" || p.Unreached != "" {
		t.Errorf("LearntNothing %q, Unreached %q: want a profile", p.LearntNothing, p.Unreached)
	}
	want := map[string]bool{"400": false, "404": false, "429": true, "503": true, "reset": true, prov.Exhaust.Name: true}
	seen := map[string]bool{}
	for _, f := range p.Faults {
		seen[f.Fault] = true
		if f.Retried == nil || *f.Retried != want[f.Fault] {
			t.Errorf("%s: retried %v, want %t (%s %s)", f.Fault, f.Retried, want[f.Fault], f.End, f.Note)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("faults probed: %v, want %v", seen, want)
	}
	if m := p.Policy.MaxRetries; m == nil || *m != 3 {
		t.Errorf("maxRetries = %v, want 3", m)
	}
}

// TestProbeOneRequestColdStart: a one-request client whose first run
// fails before any request (a cold start) gives the pilot nothing to
// read; the battery, run with the warm-up, sees its warm-up request only.
// The default mode must still learn it (it handed back an all-null
// profile, saying the client never reached the mock).
func TestProbeOneRequestColdStart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real client")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not in PATH")
	}
	curl, _ := filepath.Abs("../../testdata/clients/curl.sh")
	dir := t.TempDir()
	client := filepath.Join(dir, "cold.sh")
	script := "#!/bin/sh\nif mkdir " + filepath.Join(dir, "started") + " 2>/dev/null; then echo cold start >&2; exit 1; fi\nexec sh " + curl + "\n"
	if err := os.WriteFile(client, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	prov, _ := probe.LookupProvider("anthropic")
	r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), ClientCmd: "sh " + client}
	p, err := r.Run(ctx, battery.Options{Provider: prov, Samples: 1, Repeat: 5, TimeScale: 0.25, CeilingRounds: 0,
		Only: []string{"400", "503"}})
	if err != nil {
		t.Fatal(err)
	}
	if w := p.WarmUp; w == nil || w.Used || !w.Detected {
		t.Errorf("WarmUp = %+v, want off, detected", w)
	}
	if p.LearntNothing != "" || p.Unreached != "" {
		t.Errorf("LearntNothing %q, Unreached %q: want a profile", p.LearntNothing, p.Unreached)
	}
	want := map[string]bool{"400": false, "503": true, prov.Exhaust.Name: true}
	for _, f := range p.Faults {
		if f.Retried == nil || *f.Retried != want[f.Fault] {
			t.Errorf("%s: retried %v, want %t (%s %s)", f.Fault, f.Retried, want[f.Fault], f.End, f.Note)
		}
	}
}

// TestProbeSlowStartHang: a client that takes 1.5s to start, probed with
// a hang whose deadline is 1s. With a start grace the deadline counts from
// its first request, so the hung attempt is seen (and the client stopped
// a second later, still waiting); without, it was killed before it
// reached the mock (Kilo CLI's start-up and the hang's 15s).
func TestProbeSlowStartHang(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real client")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not in PATH")
	}
	client, _ := filepath.Abs("../../testdata/clients/curl.sh")
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	prov, _ := probe.LookupProvider("anthropic")
	for _, tt := range []struct {
		grace time.Duration
		want  int // attempts the hang saw
	}{{10 * time.Second, 1}, {0, 0}} {
		r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), ClientCmd: "sleep 1.5; exec sh " + client}
		p, err := r.Run(ctx, battery.Options{Provider: prov, Samples: 2, Repeat: 1, TimeScale: 0.1, NoWarmUp: true,
			LongDeadline: time.Second, Budget: 10 * time.Second, StartGrace: tt.grace, Only: []string{"hang"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.Faults {
			if f.Fault == "hang" && (f.Attempts != tt.want || f.End != probe.EndStopped) {
				t.Errorf("start grace %s: the hang saw %d attempt(s), %s (%s); want %d, %s", tt.grace, f.Attempts, f.End, f.Note, tt.want, probe.EndStopped)
			}
		}
	}
}

// TestProbeRandomClient: a client whose behaviour changes from run to run
// (probe/testdata/clients/random.sh: its runs send 1, 3 and 0 requests, in
// whatever order the parallel runs take its counter) is not profiled: the
// three runs of the 503 (the decision probe and two exhaustion runs)
// disagree, so every decision is null, the profile says the client is not
// deterministic, and the run that sent nothing is "no request", never
// "succeeded" (hostile report: a random 0–4 client exited 0 with a
// confident profile).
func TestProbeRandomClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real client")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not in PATH")
	}
	client, _ := filepath.Abs("../testdata/clients/random.sh")
	counter := t.TempDir()
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	prov, _ := probe.LookupProvider("anthropic")
	r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), ClientCmd: "sh " + client + " " + counter + " '1 3 0'"}
	p, err := r.Run(ctx, battery.Options{Provider: prov, Samples: 2, Repeat: 6, NoWarmUp: true, CeilingRounds: 0,
		StartGrace: 10 * time.Second, Only: []string{"503"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Nondeterministic, "not deterministic enough to profile") {
		t.Fatalf("Nondeterministic = %q, want it said", p.Nondeterministic)
	}
	ends := map[string]int{}
	for _, f := range p.Faults {
		ends[f.End]++
		if f.Retried != nil {
			t.Errorf("%s #%d: retried %v, want null", f.Fault, f.Sample, *f.Retried)
		}
		if f.Attempts == 0 && f.End != probe.EndNoRequest {
			t.Errorf("%s #%d: no request, end %q", f.Fault, f.Sample, f.End)
		}
	}
	if ends[probe.EndNoRequest] != 1 || len(p.Faults) != 3 {
		t.Errorf("ends %v, want 3 runs, one of them %q", ends, probe.EndNoRequest)
	}
	if p.Policy.MaxRetries != nil || len(p.Confidence) != 0 {
		t.Errorf("figures in a profile of a client not deterministic: %+v %v", p.Policy, p.Confidence)
	}
	t.Log(p.Nondeterministic)
}
