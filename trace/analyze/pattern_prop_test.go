package analyze

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/retrylab/retrylab/trace"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestGroupsByPromptPatternReference: on random corpora, the groups of --by
// promptPattern (requests, failures, requests with retries per pattern;
// "none" without one) match an independent count, with 1 and 3 workers.
func TestGroupsByPromptPatternReference(t *testing.T) {
	t.Parallel()
	patterns := []string{"", "refactor", "summarise", "fix-tests", "x\u00e9"}
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 42))
		dir := t.TempDir()
		type counts struct{ total, failed, withRetries int64 }
		want := map[string]*counts{}
		var files []string
		for f := range 1 + rng.IntN(4) {
			path := filepath.Join(dir, fmt.Sprintf("t%d.jsonl", f))
			var data []byte
			for range rng.IntN(60) {
				p := map[string]any{"provider": "anthropic", "model": "m", "durationMs": rng.IntN(5000),
					"success": rng.IntN(4) != 0, "retries": rng.IntN(3)}
				pat := patterns[rng.IntN(len(patterns))]
				if pat != "" {
					p["promptPattern"] = pat
				}
				key := pat
				if key == "" {
					key = "none"
				}
				c := want[key]
				if c == nil {
					c = &counts{}
					want[key] = c
				}
				c.total++
				if !p["success"].(bool) {
					c.failed++
				}
				if p["retries"].(int) > 0 {
					c.withRetries++
				}
				line, _ := json.Marshal(map[string]any{"v": 1, "ts": "2026-11-20T10:00:00Z", "type": trace.TypeProviderRequestFinished, "runId": "r", "payload": p})
				data = append(append(data, line...), '\n')
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, path)
		}
		for _, workers := range []int{1, 3} {
			an, err := Run(context.Background(), files, Options{By: []string{"promptPattern"}, Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]counts{}
			for _, g := range an.Groups {
				got[g.Keys["promptPattern"]] = counts{g.Total, g.Failed, g.WithRetries}
			}
			if len(got) != len(want) {
				t.Fatalf("seed %d, %d workers: groups %v, want %d groups", seed, workers, got, len(want))
			}
			for k, w := range want {
				if got[k] != *w {
					t.Errorf("seed %d, %d workers, pattern %q: got %+v, want %+v", seed, workers, k, got[k], *w)
				}
			}
		}
	}
}
