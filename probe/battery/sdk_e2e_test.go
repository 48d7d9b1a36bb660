package battery_test

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/probe"
	"github.com/retrylab/retrylab/probe/battery"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/preset"
)

// TestProbeNodeSDKs probes the official Node SDKs (testdata/sdk/node, after
// `npm ci --prefix testdata/sdk/node`) and holds every decision against
// their presets, and each timing figure the probe was sure of (confidence
// not low) within 15% of the SDKs' (2 retries, 500 ms, ×2). It takes about
// 40s per SDK, so it runs only with RETRYLAB_PROBE_SDK=1.
func TestProbeNodeSDKs(t *testing.T) {
	if os.Getenv("RETRYLAB_PROBE_SDK") != "1" {
		t.Skip("set RETRYLAB_PROBE_SDK=1 to probe the Node SDKs (about 40s each)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not in PATH")
	}
	for _, c := range []struct{ provider, program, preset, module string }{
		{"anthropic", "anthropic.mjs", "anthropic-node", "@anthropic-ai/sdk"},
		{"openai", "openai.mjs", "openai-node", "openai"},
	} {
		t.Run(c.preset, func(t *testing.T) {
			dir, _ := filepath.Abs("../../testdata/sdk/node")
			if _, err := os.Stat(filepath.Join(dir, "node_modules", c.module)); err != nil {
				t.Skip("run: npm ci --prefix testdata/sdk/node --ignore-scripts")
			}
			probeSDK(t, c.provider, "node "+filepath.Join(dir, c.program), c.preset)
		})
	}
}

func probeSDK(t *testing.T, provName, cmd, presetName string) {
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	prov, _ := probe.LookupProvider(provName)
	r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), ClientCmd: cmd}
	p, err := r.Run(ctx, battery.Options{Provider: prov, Budget: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := preset.Get(presetName)
	for _, f := range p.Faults {
		pf, _ := prov.Fault(f.Fault)
		if f.Retried == nil {
			continue // stopped at the deadline: the hang, 3600s
		}
		e := pf.Err
		if want := pol.Retries(retry.Classify(&e)); *f.Retried != want {
			t.Errorf("%s: retried %t, %s retries it: %t", f.Fault, *f.Retried, presetName, want)
		}
	}
	if m := p.Policy.MaxRetries; m == nil || *m != 2 {
		t.Errorf("maxRetries = %v, want 2", m)
	}
	for _, c := range []struct {
		fig  string
		got  *float64
		want float64
	}{{"policy.backoff.initialMs", p.Policy.Backoff.InitialMs, 500}, {"policy.backoff.multiplier", p.Policy.Backoff.Multiplier, 2}} {
		conf, ok := p.Confidence[c.fig]
		if !ok || conf.Level == probe.Low || c.got == nil {
			t.Logf("%s not sure on this machine: %+v", c.fig, conf)
			continue
		}
		if math.Abs(*c.got-c.want) > 0.15*c.want {
			t.Errorf("%s = %g, want %g ± 15%% (%s)", c.fig, *c.got, c.want, conf.Basis)
		}
	}
}
