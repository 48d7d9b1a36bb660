package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRuns writes a run folder of n requests, each retried with
// probability p (a seeded draw), and returns its path.
func writeRuns(t *testing.T, dir string, n int, p float64, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	for i := range n {
		retries := 0
		if rng.Float64() < p {
			retries = 1
			fmt.Fprintf(&b, `{"v":1,"type":"RetryAttempt","runId":"r","payload":{"provider":"p","model":"m","attempt":1,"maxAttempts":4,"failureType":"overloaded","status":529,"willRetry":true,"delayMs":%d,"delaySource":"backoff"}}`+"\n", 500+rng.IntN(1000))
		}
		fmt.Fprintf(&b, `{"v":1,"type":"ProviderRequestFinished","runId":"r","payload":{"provider":"p","model":"m","durationMs":%d,"success":true,"retries":%d}}`+"\n", 100+i%50, retries)
	}
	path := filepath.Join(dir, "run")
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "trace.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func compareExit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := mainExit(append([]string{"trace", "compare"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// TestTraceCompareRegression: the retry rate doubled on 2,000 requests
// fails (exit 1), from traces and from an analysis JSON base alike.
func TestTraceCompareRegression(t *testing.T) {
	base := writeRuns(t, t.TempDir(), 2000, 0.05, 1)
	cur := writeRuns(t, t.TempDir(), 2000, 0.10, 2)
	code, out, stderr := compareExit(t, base, cur)
	if code != 1 || !strings.Contains(stderr, "regression: provider_retry_rate") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	var js bytes.Buffer
	if c := mainExit([]string{"trace", "analyze", base, "--format", "json"}, &js, &bytes.Buffer{}); c != 0 {
		t.Fatalf("analyze exit %d", c)
	}
	baseJSON := filepath.Join(t.TempDir(), "base.json")
	if err := os.WriteFile(baseJSON, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = compareExit(t, baseJSON, cur, "--format", "json")
	if code != 1 || !strings.Contains(out, `"from": "analysis"`) {
		t.Fatalf("JSON base: exit %d\n%s", code, out)
	}
	// Within --max-increase (absolute): no regression.
	if code, out, _ := compareExit(t, base, cur, "--max-increase", "provider_retry_rate=0.08", "--max-increase", "delay_ms=1000"); code != 0 {
		t.Fatalf("within max-increase: exit %d\n%s", code, out)
	}
}

// TestTraceCompareNoise: the same true rate on small samples never exits 1,
// whatever the seeds.
func TestTraceCompareNoise(t *testing.T) {
	for seed := range uint64(40) {
		n := 5 + int(seed)%25 // below the 30-sample minimum
		base := writeRuns(t, t.TempDir(), n, 0.3, 100+seed)
		cur := writeRuns(t, t.TempDir(), n, 0.3, 200+seed)
		if code, out, stderr := compareExit(t, base, cur); code != 0 {
			t.Fatalf("seed %d n=%d: exit %d\n%s\n%s", seed, n, code, out, stderr)
		}
	}
}
