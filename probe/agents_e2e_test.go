package probe_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/probe"
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
	dir, _ := filepath.Abs("../testdata/agents/node")
	for _, m := range []string{"ai", "@ai-sdk/openai"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", m)); err != nil {
			t.Skip("run: npm ci --prefix testdata/agents/node --ignore-scripts")
		}
	}
	ctx := context.Background()
	toxi, err := chaos.StartToxiproxy(ctx, "")
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
	r := &probe.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), ClientCmd: "node " + filepath.Join(dir, "ai-sdk.mjs")}
	p, err := r.Run(ctx, probe.Options{Provider: prov, Model: "gpt-5", Samples: 2, Repeat: 3, Budget: 40 * time.Second, Only: only})
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
