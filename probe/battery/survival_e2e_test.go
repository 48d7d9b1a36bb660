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

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/probe"
	"github.com/retrylab/retrylab/probe/battery"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/preset"
)

// survivalTruth is how long a steady outage of kind k a client of pol
// survives, by its schedule: the sum of the mean of each wait it allows
// (retry.Policy.Envelope: initial delay, multiplier, cap, jitter) until it
// stops retrying (its retry limit), and the least and most the jitter
// allows. The attempts themselves take milliseconds and are left out.
func survivalTruth(pol *retry.Policy, k probe.OutageKind) (mean, lo, hi float64) {
	e := k.Fault.Err
	c := retry.Classify(&e)
	if !pol.Retries(c) {
		return 0, 0, 0 // not retried at all (escalation-epic's 529: not among its retryable errors)
	}
	ft := c.Type
	for att := 1; att < 1000; att++ {
		l, h, ok := pol.Envelope(ft, att, 0, false)
		if !ok {
			break
		}
		mean += float64(l+h) / 2 / float64(time.Millisecond)
		lo += float64(l) / float64(time.Millisecond)
		hi += float64(h) / float64(time.Millisecond)
	}
	return mean, lo, hi
}

// TestProbeSurvivalPresets probes the built-in client with each seed
// preset (this test binary run as it: presetClient) and holds each
// policy.survivesOutageMs figure to the truth its preset's schedule gives
// (survivalTruth): within 15%, the checks agreeing, when the probe is sure
// of it (a figure of low confidence, the machine's noise too large, must
// hold the truth inside its own bounds; a client with none the probe is
// sure of is logged); a kind the preset does not retry survives 0 ms. A preset whose jitter draws
// each wait from the whole of [0, w] (plandex: full jitter) gives a figure
// that is itself random, which two runs cannot pin to 15%: its figure must
// be of low confidence (the spread seen, or a check that disagreed). It
// takes about a minute per preset, so it runs only with
// RETRYLAB_PROBE_SURVIVAL=1.
func TestProbeSurvivalPresets(t *testing.T) {
	if os.Getenv("RETRYLAB_PROBE_SURVIVAL") != "1" {
		t.Skip("set RETRYLAB_PROBE_SURVIVAL=1 to probe the seed presets' survival (about a minute each)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	prov, _ := probe.LookupProvider("anthropic")
	// Each at a time scale that makes its schedule a few seconds of wall
	// time: shorter, the machine's noise is as large as the waits.
	for _, c := range []struct {
		name  string
		scale float64
	}{{"forgeflare", 0.1}, {"plandex", 0.05}, {"orchestrator", 0.5}, {"escalation-epic", 0.5}, {"forge-ticket", 0.5}, {"anthropic-sdk", 1}} {
		name := c.name
		t.Run(name, func(t *testing.T) {
			pol, _ := preset.Get(name)
			r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), ClientCmd: "RETRYLAB_TEST_PRESET=" + name + " " + exe}
			p, err := r.Run(ctx, battery.Options{Provider: prov, Samples: 2, TimeScale: c.scale, Budget: time.Minute, NoWarmUp: true,
				Only: []string{"529", "429", "drop"}})
			if err != nil {
				t.Fatal(err)
			}
			checkAll(t, prov, p, pol)
		})
	}
}

// checkAll holds every survival figure of p to pol's truth, and logs a
// client with no figure above 0 the probe is sure of (unless pol jitters
// fully, when none can be).
func checkAll(t *testing.T, prov probe.Provider, p *probe.Profile, pol *retry.Policy) {
	t.Helper()
	sure, full := 0, false
	for _, k := range probe.OutageKinds(prov) {
		checkSurvival(t, k, p, pol)
		mean, lo, _ := survivalTruth(pol, k)
		full = full || mean > 0 && lo == 0
		if s := p.Policy.SurvivesOutageMs[k.Key]; s != nil && s.Ms > 0 && s.Confidence == probe.High {
			sure++
		}
	}
	if sure == 0 && !full {
		// Load average 17 on 2 cores measured a second of noise around
		// the Node SDK's waits: the probe said so rather than be sure.
		t.Logf("no survival figure above 0 the probe is sure of on this machine")
	}
}

// checkSurvival holds the profile's figure of kind k to pol's truth.
func checkSurvival(t *testing.T, k probe.OutageKind, p *probe.Profile, pol *retry.Policy) {
	t.Helper()
	mean, lo, hi := survivalTruth(pol, k)
	s := p.Policy.SurvivesOutageMs[k.Key]
	if s == nil {
		t.Errorf("%s: no figure (truth %.0fms): %+v", k.Key, mean, p.Inconclusive)
		return
	}
	t.Logf("%s: %s; truth %.0fms [%.0f, %.0f]; %s", k.Key, probe.SurvivalLine(k.Key, s), mean, lo, hi, p.Confidence["policy.survivesOutageMs."+k.Key].Basis)
	if mean == 0 {
		if s.Ms != 0 || s.AtLeast {
			t.Errorf("%s: %dms, the preset does not retry it: want 0", k.Key, s.Ms)
		}
		return
	}
	if s.AtLeast || s.High == nil {
		t.Errorf("%s: a lower bound only (%dms), the preset gives up after %.0fms", k.Key, s.Ms, mean)
		return
	}
	if lo > float64(*s.High)*1.05 || hi < float64(s.Low)*0.95 {
		t.Errorf("%s: [%d, %d] outside the schedule's [%.0f, %.0f]", k.Key, s.Low, *s.High, lo, hi)
	}
	if lo == 0 {
		// Full jitter: the outage survived is itself drawn from [0, hi];
		// two runs cannot pin its mean, and the profile must not say it
		// is sure of it.
		if s.Confidence != probe.Low {
			t.Errorf("%s: confidence %s for a full-jitter schedule (truth %.0fms in [0, %.0f])", k.Key, s.Confidence, mean, hi)
		}
		return
	}
	if s.Confidence == probe.Low {
		// The machine's noise (measured: the bounds) was too large to be
		// sure of the figure: the profile says so, and its bounds must
		// still hold the truth.
		t.Logf("%s not sure on this machine", k.Key)
		if mean < float64(s.Low)*0.95 || mean > float64(*s.High)*1.05 {
			t.Errorf("%s: the truth %.0fms outside the figure's own bounds [%d, %d]", k.Key, mean, s.Low, *s.High)
		}
		return
	}
	if math.Abs(float64(s.Ms)-mean) > 0.15*mean {
		t.Errorf("%s: %dms, truth %.0fms ± 15%%", k.Key, s.Ms, mean)
	}
	if s.Unconfirmed != "" {
		t.Errorf("%s: unconfirmed: %s", k.Key, s.Unconfirmed)
	}
	if c := s.Check; c == nil || c.ShorterSurvived == nil || !*c.ShorterSurvived || c.LongerSurvived == nil || *c.LongerSurvived {
		t.Errorf("%s: check %+v, want the shorter outage survived and the longer not", k.Key, c)
	}
}

// TestProbeSurvivalSDKs probes the official SDKs the project runs (the Go
// SDKs, after `go -C testdata/sdk/go build -o bin/ ./...`; the Node SDKs,
// after `npm ci --prefix testdata/sdk/node`) and holds each survival
// figure to the truth of the SDK's preset (docs/sdk-clients.md: 2
// retries, 0.5s × 2^n less up to 25%, nothing retried once the stream has
// begun), as TestProbeSurvivalPresets does. The SDKs wait in real time
// (they do not read RETRYLAB_TIME_SCALE). With RETRYLAB_PROBE_SURVIVAL=1.
func TestProbeSurvivalSDKs(t *testing.T) {
	if os.Getenv("RETRYLAB_PROBE_SURVIVAL") != "1" {
		t.Skip("set RETRYLAB_PROBE_SURVIVAL=1 to probe the SDKs' survival")
	}
	ctx := context.Background()
	toxi, err := mock.StartToxiproxy(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	root, _ := filepath.Abs("../../testdata/sdk")
	for _, c := range []struct{ name, provider, cmd, need, hint string }{
		{"anthropic-go", "anthropic", filepath.Join(root, "go/bin/anthropic"), filepath.Join(root, "go/bin/anthropic"), "go -C testdata/sdk/go build -o bin/ ./..."},
		{"openai-go", "openai", filepath.Join(root, "go/bin/openai"), filepath.Join(root, "go/bin/openai"), "go -C testdata/sdk/go build -o bin/ ./..."},
		{"anthropic-node", "anthropic", "node " + filepath.Join(root, "node/anthropic.mjs"), filepath.Join(root, "node/node_modules/@anthropic-ai/sdk"), "npm ci --prefix testdata/sdk/node --ignore-scripts"},
		{"openai-node", "openai", "node " + filepath.Join(root, "node/openai.mjs"), filepath.Join(root, "node/node_modules/openai"), "npm ci --prefix testdata/sdk/node --ignore-scripts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat(c.need); err != nil {
				t.Skip("run: " + c.hint)
			}
			if strings.HasPrefix(c.cmd, "node ") {
				if _, err := exec.LookPath("node"); err != nil {
					t.Skip("node not in PATH")
				}
			}
			prov, _ := probe.LookupProvider(c.provider)
			pol, _ := preset.Get(c.name)
			r := &battery.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), ClientCmd: c.cmd}
			p, err := r.Run(ctx, battery.Options{Provider: prov, Samples: 4, Budget: 20 * time.Second, CeilingRounds: 0,
				Only: []string{"529", "429", "drop"}})
			if err != nil {
				t.Fatal(err)
			}
			checkAll(t, prov, p, pol)
		})
	}
}
