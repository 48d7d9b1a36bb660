package battery_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/probe"
	"github.com/retrylab/retrylab/probe/battery"
)

// TestProbeAISDKResponses probes the Vercel AI SDK over the Responses API
// (testdata/agents/node/ai-sdk.mjs, installed by `npm ci --prefix
// testdata/agents/node`) on five faults and checks the decisions only
// (timings are TestMeasuredAgents' business, from a measured journal):
// 409 and 503 retried; a 400, response.failed and a cut after the text
// began not. About 15s; skipped without the install or with -short.
func TestProbeAISDKResponses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: an external agent")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not in PATH")
	}
	dir, _ := filepath.Abs("../../testdata/agents/node")
	for _, m := range []string{"ai", "@ai-sdk/openai"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", m)); err != nil {
			t.Skip("run: npm ci --prefix testdata/agents/node --ignore-scripts")
		}
	}
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	prov, _ := probe.LookupProvider("openai-responses")
	want := map[string]bool{"400": false, "409": true, "503": true, "sse server_is_overloaded": false, "drop": false}
	var only []string
	for f := range want {
		only = append(only, f)
	}
	r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), ClientCmd: "node " + filepath.Join(dir, "ai-sdk.mjs")}
	p, err := r.Run(ctx, battery.Options{Provider: prov, Model: "gpt-5", Samples: 2, Repeat: 3, Budget: 40 * time.Second, Only: only})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range p.Faults {
		w, ok := want[f.Fault]
		if !ok {
			continue
		}
		seen++
		if f.Retried == nil || *f.Retried != w {
			t.Errorf("%s: retried %v, want %t (attempts %d, %s)", f.Fault, f.Retried, w, f.Attempts, f.End)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of %d faults probed", seen, len(want))
	}
	if m := p.Policy.MaxRetries; m == nil || *m != 2 {
		t.Errorf("maxRetries = %v, want 2", m)
	}
}

// TestProbeCeilingAISDK bisects the Retry-After ceiling of the Vercel AI
// SDK over Anthropic (used when 0 ≤ v < 60s, else its backoff): three
// rounds must bracket 60s and give ceilingMs within 15% of it. It waits
// out Retry-Afters of up to a minute (about 2m30s in all), so it runs only
// with RETRYLAB_PROBE_CEILING=1; the bisection's decisions are
// TestCeilingBisection's, in milliseconds.
func TestProbeCeilingAISDK(t *testing.T) {
	if os.Getenv("RETRYLAB_PROBE_CEILING") != "1" {
		t.Skip("set RETRYLAB_PROBE_CEILING=1 to bisect the AI SDK's Retry-After ceiling (about 2m30s)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not in PATH")
	}
	dir, _ := filepath.Abs("../../testdata/agents/node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@ai-sdk/anthropic")); err != nil {
		t.Skip("run: npm ci --prefix testdata/agents/node --ignore-scripts")
	}
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	prov, _ := probe.LookupProvider("anthropic")
	r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), ClientCmd: "node " + filepath.Join(dir, "ai-sdk.mjs")}
	p, err := r.Run(ctx, battery.Options{Provider: prov, Model: "claude-sonnet-4-5", Samples: 2, Repeat: 3,
		CeilingRounds: battery.DefaultCeilingRounds, Only: []string{"429 retry-after 3", "429 retry-after 3600"}})
	if err != nil {
		t.Fatal(err)
	}
	ra := p.Policy.RetryAfter
	br := ra.CeilingBracketMs
	if len(br) != 2 || br[0] > 60_000 || br[1] < 60_000 || ra.CeilingMs == nil || *ra.CeilingMs > 69_000 {
		t.Errorf("ceiling %v, bracket %v: want one holding 60s (%+v %+v)", ra.CeilingMs, br, p.Confidence["policy.retryAfter.ceilingMs"], p.Inconclusive)
	}
	if p.Plan == nil || p.Plan.EstimatedMs < p.DurationMs {
		t.Errorf("the bound said before (%+v) is below the wall time %dms", p.Plan, p.DurationMs)
	}
}
